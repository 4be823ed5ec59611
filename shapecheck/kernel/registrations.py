"""Which function of a source file is registered for which op overload, read from the file's syntax (the file
itself read and parsed within the limits by ``read_python``; nothing in it runs).

``--meta-source`` must not run the file, so registrations are read from the decorators, the way torch
applies them at import time (``register_meta``; torch.library's ``register_fake("ns::op")`` and
``impl_abstract``; ``@my_op.register_fake`` for a function ``custom_op("ns::op")`` made):

- ``@register_meta(aten.foo)`` (a packet) registers every overload of ``foo``;
- ``@register_meta(aten.foo.default)`` registers that overload only;
- ``@register_meta([aten.foo.default, aten.foo.out])`` (any nesting of lists and tuples) registers each;
- the op may be spelt ``torch.ops.ns.foo[.overload]``, through a module-level alias
  (``aten = torch.ops.aten``), or as a string ``"ns::foo[.overload]"``.

For an op overload, the function registered for exactly that overload wins over one registered for the
whole packet; among equals the later definition wins, as a later registration overrides an earlier one.
"""

from __future__ import annotations

import ast
import importlib.util
from dataclasses import dataclass
from pathlib import Path

from ..errors import TargetError
from ..limits import SOURCE_BYTES, read_input

#: decorator names that register a meta/fake kernel for the ops in their arguments (torch's register_meta and
#: register_decomposition, of ``torch/_decomp/decompositions.py`` and ``torch/_refs``, and torch.library's
#: register_fake and its older name impl_abstract); ``@<custom op>.register_fake`` names its op
#: through the function a ``custom_op`` decorator made
#: ``register_op_impl``: FakeTensor's own rules (torch/_subclasses/fake_impls.py), called ``rule(fake_mode, func, *args)``
REGISTERING = frozenset({"register_meta", "register_fake", "impl_abstract", "register_decomposition", "register_op_impl"})
RULE_REGISTRATION = "register_op_impl"
_CUSTOM_OP = "custom_op"


@dataclass(frozen=True)
class OpRef:
    """An op named in a registration: ``overload`` None means the whole packet (every overload)."""

    namespace: str
    packet: str
    overload: str | None

    def matches(self, namespace: str, packet: str, overload: str) -> int:
        """2 for exactly this overload, 1 for its packet, 0 for another op."""
        if (self.namespace, self.packet) != (namespace, packet):
            return 0
        if self.overload is None:
            return 1
        return 2 if self.overload == overload else 0


@dataclass(frozen=True)
class Registration:
    fdef: ast.FunctionDef
    decorator: ast.expr
    ops: tuple[OpRef, ...]


def split_op(op_name: str) -> tuple[str, str, str]:
    """``ns::packet[.overload]`` -> (ns, packet, overload), ``default`` when none is named."""
    namespace, _, rest = op_name.partition("::")
    packet, _, overload = rest.partition(".")
    return namespace, packet, overload or "default"


def registrations(tree: ast.Module) -> list[Registration]:
    """Every module-level function with a registering decorator, and the ops that decorator names."""
    aliases = _namespace_aliases(tree)
    custom = _custom_ops(tree, aliases)
    found = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for dec in node.decorator_list:
            if isinstance(dec, ast.Call) and _callee_name(dec.func) in REGISTERING:
                ops = tuple(ref for arg in dec.args[:1] for ref in _op_refs(arg, aliases))
                if isinstance(dec.func, ast.Attribute) and isinstance(dec.func.value, ast.Name):
                    ops += custom.get(dec.func.value.id, ())  # @my_op.register_fake(...)
                found.append(Registration(node, dec, ops))
            elif isinstance(dec, ast.Attribute) and dec.attr in REGISTERING and isinstance(dec.value, ast.Name):
                found.append(Registration(node, dec, custom.get(dec.value.id, ())))  # @my_op.register_fake
        found.extend(_py_impl_only(node, found, aliases))
    return found


def _py_impl_only(fdef: ast.FunctionDef, found: list[Registration], aliases: dict[str, str]) -> list[Registration]:
    """The overloads ``fdef`` is made a Python kernel of only by ``@aten.OP.OVERLOAD.py_impl(KEY)`` (no registering
    decorator of it names them): a registration too, since export runs that kernel (decompositions.py's
    ``matmul``, ``one_hot``; ``_upsample_linear_vec`` for ``upsample_linear1d.vec``), with its first such
    decorator."""
    named = [ref for reg in found if reg.fdef is fdef for ref in reg.ops]
    out: list[Registration] = []
    for dec in fdef.decorator_list:
        ref = py_impl_ref(dec, aliases)
        if ref is None or any(r.matches(ref.namespace, ref.packet, ref.overload or "default") for r in named):
            continue
        named.append(ref)
        out.append(Registration(fdef, dec, (ref,)))
    return out


def py_impl_ref(dec: ast.expr, aliases: dict[str, str]) -> OpRef | None:
    """The overload a ``@aten.OP[.OVERLOAD].py_impl(DispatchKey.KEY)`` decorator names (``default`` when none is
    named), or None for any other decorator."""
    if not (is_py_impl(dec) and isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute)
            and len(dec.args) == 1 and isinstance(dec.args[0], ast.Attribute)):
        return None
    refs = _op_refs(dec.func.value, aliases)
    if len(refs) != 1:
        return None
    return OpRef(refs[0].namespace, refs[0].packet, refs[0].overload or "default")


def _custom_ops(tree: ast.Module, aliases: dict[str, str]) -> dict[str, tuple[OpRef, ...]]:
    """Module-level functions decorated with ``custom_op("ns::name", ...)``: function name -> its op."""
    out = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            for dec in node.decorator_list:
                if isinstance(dec, ast.Call) and _callee_name(dec.func) == _CUSTOM_OP and dec.args:
                    out[node.name] = tuple(_op_refs(dec.args[0], aliases))
    return out


def find_registration(tree: ast.Module, op_name: str) -> Registration | None:
    """The registration that provides ``op_name``'s kernel (see the module docstring), or None."""
    namespace, packet, overload = split_op(op_name)
    best: tuple[int, int, int] = (0, 0, -1)
    chosen = None
    for index, reg in enumerate(registrations(tree)):
        rank = max((ref.matches(namespace, packet, overload) for ref in reg.ops), default=0)
        # a FakeTensor rule only where nothing else of the file registers the op: _refs' native_layer_norm_fake
        # calls the decomposition native_layer_norm by name, which is what a change of the file changes
        other = int(not is_rule(reg.decorator))
        if rank and (other, rank, index) > best:
            best, chosen = (other, rank, index), reg
    return chosen


def is_rule(dec: ast.expr) -> bool:
    """``@register_op_impl(...)``: a FakeTensor rule's registration."""
    return _callee_name(dec.func if isinstance(dec, ast.Call) else dec) == RULE_REGISTRATION


def is_registering(dec: ast.expr) -> bool:
    func = dec.func if isinstance(dec, ast.Call) else dec
    return _callee_name(func) in REGISTERING


def is_py_impl(dec: ast.expr) -> bool:
    """``@aten.OP.OVERLOAD.py_impl(KEY)``: a registration into torch's Python dispatcher."""
    return isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute) and dec.func.attr == "py_impl"


def py_impl_keys(tree: ast.Module, fdef: ast.FunctionDef, op_name: str) -> tuple[str, ...]:
    """The dispatch keys whose Python kernel ``fdef``'s decorators ``@aten.OP.OVERLOAD.py_impl(DispatchKey.KEY)``
    make it for ``op_name`` (``ns::name.overload``; torch's decompositions.py gives ``_upsample_nearest_vec`` the
    CompositeImplicitAutograd and Autograd kernels of the upsample_nearest .vec ops this way)."""
    aliases = _namespace_aliases(tree)
    ns, name, overload = split_op(op_name)
    keys = []
    for dec in fdef.decorator_list:
        ref = py_impl_ref(dec, aliases)
        if ref is not None and ref.matches(ns, name, overload) == 2:
            assert isinstance(dec, ast.Call) and isinstance(dec.args[0], ast.Attribute)  # py_impl_ref checked it
            keys.append(dec.args[0].attr)
    return tuple(keys)


def _callee_name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _namespace_aliases(tree: ast.Module) -> dict[str, str]:
    """Module-level ``NAME = torch.ops.NS``; ``aten`` and ``prims`` are assumed when the file binds neither."""
    aliases = {"aten": "aten", "prims": "prims"}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            chain = _attribute_chain(node.value)
            if chain is not None and len(chain) == 3 and chain[:2] == ["torch", "ops"]:
                aliases[node.targets[0].id] = chain[2]
    return aliases


def _attribute_chain(node: ast.expr) -> list[str] | None:
    """``a.b.c`` -> ["a", "b", "c"]; None for anything that is not a plain dotted name."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


def _op_refs(node: ast.expr, aliases: dict[str, str]) -> list[OpRef]:
    if isinstance(node, (ast.List, ast.Tuple)):
        return [ref for elt in node.elts for ref in _op_refs(elt, aliases)]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        namespace, sep, rest = node.value.partition("::")
        packet, _, overload = rest.partition(".")
        return [OpRef(namespace, packet, overload or None)] if sep and packet else []
    chain = _attribute_chain(node)
    if chain is None:
        return []
    if chain[:2] == ["torch", "ops"]:
        chain = chain[2:]
    elif chain[0] in aliases:
        chain = [aliases[chain[0]], *chain[1:]]
    else:
        return []
    if len(chain) == 2:
        return [OpRef(chain[0], chain[1], None)]
    if len(chain) == 3:
        return [OpRef(chain[0], chain[1], chain[2])]
    return []


def plain_helpers(tree: ast.Module, fdef: ast.FunctionDef) -> list[ast.FunctionDef]:
    """The module-level functions of the file that ``fdef`` reaches by name (transitively), undecorated or with
    registering decorators only (defined without them: an old file's ``split_with_sizes``, a registered
    decomposition another one calls, which this torch may lack), in file order. Defining a function runs no code
    of its body."""
    plain = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)
             and all(is_registering(d) or is_py_impl(d) for d in n.decorator_list)}
    plain.pop(fdef.name, None)
    wanted: set[str] = set()
    todo: list[ast.AST] = [fdef]
    while todo:
        node = todo.pop()
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load) and sub.id in plain \
                    and sub.id not in wanted:
                wanted.add(sub.id)
                todo.append(plain[sub.id])
    return [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in wanted and n is plain.get(n.name)]


def installed_helpers(tree: ast.Module, fdef: ast.FunctionDef) -> list[ast.FunctionDef]:
    """The module-level functions of the file that ``fdef`` reaches only as the installed torch has them: each
    decorated one it reaches (``plain_helpers`` defines none of them: a decorator such as
    ``_make_elementwise_unary_reference`` registers as it wraps), each one a module-level name bound to an
    expression reaches (``pw_cast_for_opmath = partial(type_casts, ...)``: the binding is the installed module's),
    and every function one of those reaches (``_upsample_linear`` under ``@pw_cast_for_opmath`` calls the
    installed ``_compute_scale``, not the file's). A function's own parameters and local names reach nothing
    (``meta_index_Tensor``'s local ``nonzero``). Where one differs from the installed torch's, the file's change
    is not what runs."""
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    bound = {t.id: n.value for n in tree.body if isinstance(n, ast.Assign) for t in n.targets
             if isinstance(t, ast.Name) and t.id not in funcs}
    plain = {n.name for n in plain_helpers(tree, fdef)}

    def reached(start: ast.AST) -> set[str]:
        seen: set[str] = set()
        todo = [start]
        while todo:
            node = todo.pop()
            mine = _local_names(node) if isinstance(node, ast.FunctionDef) else set()
            for sub in ast.walk(node):
                if not isinstance(sub, ast.Name) or not isinstance(sub.ctx, ast.Load) or sub.id in mine \
                        or sub.id in seen or sub.id == fdef.name:
                    continue
                if sub.id in funcs or sub.id in bound:
                    seen.add(sub.id)
                    todo.append(funcs[sub.id] if sub.id in funcs else bound[sub.id])
        return seen

    roots = {name for name in reached(fdef) if name in bound or name not in plain}
    out = set(roots)
    for name in roots:
        out |= reached(funcs[name] if name in funcs else bound[name])
    return [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in out and n is funcs[n.name]]


def _local_names(fn: ast.FunctionDef) -> set[str]:
    """The names a function binds itself: its parameters and every name it assigns (its own or a nested body's)."""
    a = fn.args
    names = {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs, *filter(None, [a.vararg, a.kwarg])]}
    return names | {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def read_python(path_text: str, option: str) -> tuple[str, ast.Module]:
    """A kernel file's text and syntax tree, within the limits: a regular file of at most ``SOURCE_BYTES``, text
    in its declared encoding (UTF-8 unless a coding line says otherwise), that Python's parser accepts (deep
    nesting included). Reading it runs nothing."""
    path = Path(path_text)
    if not path.exists() and not path.is_symlink():
        raise TargetError(f"{option} {path_text}: no such file")
    raw = read_input(path, SOURCE_BYTES, f"{option} {path_text}", TargetError)
    if _parsed and _parsed[0] == raw:  # the gate reads the file once per contract: parsed once
        return _parsed[1], _parsed[2]
    try:
        source = importlib.util.decode_source(raw)
    except UnicodeDecodeError as err:
        raise TargetError(f"{path_text}: not {err.encoding} text (byte {err.start})") from None
    except (SyntaxError, LookupError, ValueError) as err:
        raise TargetError(f"{path_text}: cannot be decoded: {getattr(err, 'msg', err)}") from None
    try:
        tree = ast.parse(source, filename=str(path))
    except SyntaxError as err:
        line = f":{err.lineno}" if err.lineno else ""
        raise TargetError(f"{path_text}{line}: does not parse: {err.msg}") from None
    except ValueError:  # Python 3.11: a null byte
        raise TargetError(f"{path_text}: does not parse: it holds a null byte") from None
    except (RecursionError, MemoryError):  # how Python's parser gives up on very deep nesting
        raise TargetError(f"{path_text}: does not parse: nested too deeply for Python's parser") from None
    _parsed[:] = [raw, source, tree]
    return source, tree


#: the bytes, text and tree of the last file ``read_python`` parsed (one: a tree is about 150 times its file);
#: the tree is shared, so nothing may change it
_parsed: list = []


def is_registered_in(path_text: str, op_name: str) -> bool:
    """Whether the ``_meta_registrations.py``-style file registers a meta kernel for ``op_name`` (the gate's
    ``--meta-source``: ops the file does not register are checked against the installed torch)."""
    return find_registration(read_python(path_text, "--meta-source")[1], op_name) is not None
