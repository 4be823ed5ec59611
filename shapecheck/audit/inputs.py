"""Inputs for an op without a contract: from its OpInfo samples where torch's testing package has them, else
from its schema. Every tensor dim and every ``SymInt`` argument becomes its own dim, named after the argument
and the axis (``self_0``, ``other_1``, ``tensors_1_0`` for axis 0 of list element 1, ``size_2``, ``length``).

An ``OpInputs`` is plain data (picklable): argument trees whose leaves are a tensor (its dims, example sizes and
dtype), a size (a dim with an example value) or a constant. ``materialize`` builds the call's arguments from a
tree with any way of making tensors and sizes: concrete at a point, or unbacked symbols.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from .._torch import audit as CA
from .._torch import core as C
from .._torch import schema as CL
from ..errors import said
from ..trace.run import kernel_failure
from .logged import failed_check, stderr_read

EXAMPLE = 3  # the size of every tensor dim in a schema-derived example
RANKS = (2, 3, 4, 1)  # tried in this order: the first that the kernel accepts at static sizes is kept
DTYPES = ("float32", "int64", "bool")

#: ("tensor", dims, example sizes, dtype[, fill]) | ("sym", dim, example) | ("const", value) | ("dtype", name)
#: | ("list", trees). A tensor's fill says how the eager kernel's real tensor is made: "zeros" (the default;
#: integers are then valid indices and offsets), "ones", "arange", or "data:KEY" (a sample's own tensor, in
#: ``OpInputs.blobs``, used at the sample's sizes)
Tree = tuple


@dataclass(frozen=True)
class OpInputs:
    op: str
    origin: str  # "schema" (found by search), "opinfo" or "samples" (the project's samples hook)
    args: tuple[tuple[str, bool, Tree], ...]  # (argument name, keyword-only, tree)
    blobs: tuple[tuple[str, bytes], ...] = ()  # a sample's real tensors (torch.save bytes), by key
    label: str = ""  # what a variant changes from the op's first inputs (``check_length=True``)

    def dims(self) -> list[tuple[str, int]]:
        """(dim name, its example value), in argument order."""
        out: list[tuple[str, int]] = []
        for _, _, tree in self.args:
            _collect(tree, out)
        return out

    def tensor_dims(self) -> set[str]:
        """The dims that are a tensor's sizes (not an int argument's value)."""
        out: list[tuple[str, int]] = []
        for _, _, tree in self.args:
            _collect(tree, out, tensors_only=True)
        return {name for name, _ in out}

    def named(self, args: list, kwargs: dict) -> list[tuple[str, Any]]:
        """The input tensors of a call made from these inputs (``materialize``), by argument name."""
        return CA.named_tensors([(name, keyword) for name, keyword, _ in self.args], args, kwargs)

    def describe(self) -> str:
        """``self[3, 3] float32, dim=0``: what the example call passes."""
        return ", ".join(f"{name}={_describe(tree)}" for name, _, tree in self.args)


#: an op inside the kernel that takes ints, not sizes (``int[2] kernel_size`` of ``max_pool2d_with_indices``), given
#: the SymInts of an argument the audit made symbolic: no relation of the sizes, but a kernel that takes constants
INTS_ONLY = re.compile(r"Expected a value of type '(?:List\[int\]|int)' for argument '\w+' but instead found type "
                       r"'(?:list|SymInt)'|must be int, not SymInt|expected int but got SymInt")


def held_constant(inputs: OpInputs) -> OpInputs:
    """``inputs`` with every int argument that is a size (``("sym", ...)``, alone or in a list) held at its example
    value as a constant; ``inputs`` itself where there is none."""
    def held(tree: Tree) -> Tree:
        if tree[0] == "sym":
            return ("const", tree[2])
        if tree[0] == "list" and tree[1] and all(t[0] == "sym" for t in tree[1]):
            return ("const", [t[2] for t in tree[1]])
        return tree

    args = tuple((name, kw, held(tree)) for name, kw, tree in inputs.args)
    return inputs if args == inputs.args else replace(inputs, args=args)


def _collect(tree: Tree, out: list[tuple[str, int]], tensors_only: bool = False) -> None:
    if tree[0] == "tensor":
        out.extend(zip(tree[1], tree[2], strict=True))
    elif tree[0] == "sym" and not tensors_only:
        out.append((tree[1], tree[2]))
    elif tree[0] == "list":
        for t in tree[1]:
            _collect(t, out, tensors_only)


def memory_order(tree: Tree) -> tuple[int, ...] | None:
    """A tensor tree's memory order (its dims from the outermost in memory to the innermost), where it is not
    contiguous: ``(0, 2, 3, 1)`` is channels_last. None for a contiguous tensor."""
    return tree[5] if tree[0] == "tensor" and len(tree) > 5 and tree[5] is not None else None


def _describe(tree: Tree) -> str:
    if tree[0] == "dtype":
        return tree[1]
    if tree[0] == "tensor":
        order = memory_order(tree)
        return f"{tree[3]}[{', '.join(tree[1])}]" + (f" (memory order {order})" if order else "")
    if tree[0] == "sym":
        return tree[1]
    if tree[0] == "list":
        return "[" + ", ".join(_describe(t) for t in tree[1]) + "]"
    return repr(tree[1])


def materialize(inputs: OpInputs, tensor: Callable[[tuple[str, ...], tuple[int, ...], str, str], Any],
                size: Callable[[str, int], Any]) -> tuple[list, dict]:
    """The call's positional and keyword arguments, tensors and sizes made by ``tensor`` (dims, example sizes,
    dtype, fill) and ``size``."""
    def build(tree: Tree) -> Any:
        if tree[0] == "tensor":
            order = memory_order(tree)
            if order is None:
                return tensor(tree[1], tree[2], tree[3], tree[4] if len(tree) > 4 else "zeros")
            # made contiguous in memory order, then viewed in the logical order: a non-contiguous input (the
            # sizes are the tree's, the strides follow the memory order), the same way at concrete and symbolic sizes
            made = tensor(tuple(tree[1][i] for i in order), tuple(tree[2][i] for i in order), tree[3],
                          tree[4] if len(tree) > 4 else "zeros")
            return made.permute([order.index(j) for j in range(len(order))])
        if tree[0] == "dtype":
            return CA.dtype_of(tree[1])
        if tree[0] == "sym":
            return size(tree[1], tree[2])
        if tree[0] == "list":
            return [build(t) for t in tree[1]]
        return tree[1]

    args, kwargs = [], {}
    for name, keyword, tree in inputs.args:
        if keyword:
            kwargs[name] = build(tree)
        else:
            args.append(build(tree))
    return args, kwargs


def at_point(inputs: OpInputs, point: dict[str, int]) -> tuple[list, dict]:
    """The call's arguments at concrete sizes (inside a FakeTensorMode)."""
    def tensor(dims, example, dtype, _fill):
        return CA.empty([point.get(d, e) for d, e in zip(dims, example, strict=True)], dtype)

    return materialize(inputs, tensor, lambda d, e: point.get(d, e))


def at_point_real(inputs: OpInputs, point: dict[str, int], device: str = "cpu", seed: int = 0) -> tuple[list, dict]:
    """The call's arguments as real tensors on ``device`` at concrete sizes: a sample's own tensor at its own
    sizes, else a tensor made as its fill says (floats drawn with ``seed``)."""
    blobs = dict(inputs.blobs)
    counter = iter(range(10**6))

    def tensor(dims, example, dtype, fill):
        shape = [point.get(d, e) for d, e in zip(dims, example, strict=True)]
        if fill.startswith("data:") and fill[5:] in blobs and tuple(shape) == tuple(example):
            data = CA.tensor_from_bytes(blobs[fill[5:]], device)
            return data if CA.dtype_name(data.dtype) == dtype else data.to(CA.dtype_of(dtype))  # another dtype's variant
        return CA.real_tensor(shape, dtype, fill, device, seed * 1000 + next(counter))

    return materialize(inputs, tensor, lambda d, e: point.get(d, e))


DATA_DEPENDENT = "data-dependent: "


#: fake_result's answers within one op's run (``remembered``): call -> (the call, its answer); None: off
_REMEMBERED: dict[tuple[int, str, tuple[tuple[str, int], ...]], tuple[Any, tuple[bool, Any]]] | None = None


@contextlib.contextmanager
def remembered() -> Iterator[None]:
    """``fake_result`` answers each (kernel, inputs, point) once inside: an op's run asks the same call again
    (its example from the input search, a variant's, a point two comparisons draw: 30% of the calls of an
    audit of 202 OpInfo ops). A fake at concrete sizes is plain data in, plain data out; the answer is the
    first call's, as the eager kernel's is (``OpRun.eager_at``)."""
    global _REMEMBERED
    saved, _REMEMBERED = _REMEMBERED, {}
    try:
        yield
    finally:
        _REMEMBERED = saved


def fake_result(call: Callable[..., Any], inputs: OpInputs, point: dict[str, int]) -> tuple[bool, Any]:
    """The kernel under FakeTensorMode at concrete sizes (export's kernel, a ShapeEnv for data-dependent
    outputs): (True, the result's description) or (False, the error). A fake that guards on tensor data fails
    with an error starting ``data-dependent:`` (``DATA_DEPENDENT``): it takes the sizes, the exploration says
    the rest."""
    memo = _REMEMBERED
    if memo is None:
        return _fake_result(call, inputs, point)
    # the call is kept with its answer, so its id is not another object's while the memo lives
    key = (id(call), repr(inputs.args), tuple(sorted(point.items())))
    hit = memo.get(key)
    if hit is None:
        hit = memo[key] = (call, _fake_result(call, inputs, point))
    return hit[1]


def _fake_result(call: Callable[..., Any], inputs: OpInputs, point: dict[str, int]) -> tuple[bool, Any]:
    try:
        with CA.concrete_fake_mode(), stderr_read() as said_:
            args, kwargs = at_point(inputs, point)
            out = CA.describe(call(*args, **kwargs), inputs.named(args, kwargs))
        failed = failed_check(said_())
        return (False, failed) if failed else (True, out)
    except C.DATA_ERRORS as exc:
        return False, DATA_DEPENDENT + CA.call_error(exc)
    except BaseException as exc:  # noqa: BLE001 - the fake rejects these inputs (its own KeyboardInterrupt, an
        # os._exit, sys.exit too): the error says how; the user's Ctrl-C stops the run
        if not kernel_failure(exc):
            raise
        return False, CA.call_error(exc)


def static_error(call: Callable[..., Any], inputs: OpInputs, point: dict[str, int]) -> str | None:
    """Run the kernel at concrete sizes under FakeTensorMode: None when it returns, else its error. An op that
    raises here rejects the input: the point is outside what the op accepts. An op whose result needs the
    tensors' data (``nonzero``) accepts the sizes."""
    try:
        with CA.concrete_fake_mode(), stderr_read() as said_:
            args, kwargs = at_point(inputs, point)
            call(*args, **kwargs)
        failed = failed_check(said_())
        if failed:
            return failed
    except C.DATA_ERRORS:
        return None  # the result depends on tensor data, not on these sizes: the op takes them
    except BaseException as exc:  # noqa: BLE001 - any error of the kernel means: the op rejects these sizes
        if not kernel_failure(exc):
            raise
        return f"{type(exc).__name__}: {(said(exc).strip().splitlines() or [''])[0][:200]}"
    return None


# ---------------------------------------------------------------------------------------------------------
# From the schema


def _leaf(name: str, type_text: str, default: Any, rank: int, dtype: str) -> Tree | None:
    """One argument's tree for a schema-derived example; None when no value can be made for its type."""
    optional = type_text.endswith("?")
    base = type_text.rstrip("?")
    if default is not CL.NO_DEFAULT and base != "Tensor":
        return _with_sizes(name, base, default)
    if base == "Tensor":
        return ("const", None) if optional else _tensor(name, rank, dtype)
    if optional:
        return ("const", None)
    if base in ("Tensor[]", "Tensor?[]"):
        return ("list", (_tensor(f"{name}_0", rank, dtype), _tensor(f"{name}_1", rank, dtype)))
    if base == "SymInt" and not constant_int(name):
        return ("sym", name, 1)
    if base.startswith("SymInt[") and not constant_int(name):
        n = _length(base, rank)
        return ("list", tuple(("sym", f"{name}_{i}", EXAMPLE) for i in range(n)))
    base = base.replace("SymInt", "int")  # a constant: as an int of that name
    if base == "int":
        return ("const", 0 if "dim" in name else 1)
    if base.startswith("int["):
        n = _length(base, rank)
        value = [0] if "dim" in name else [EXAMPLE] * rank if name in ("size", "shape", "sizes") else [1] * n
        return ("const", value)
    simple = {"bool": False, "float": 1.0, "Scalar": 1, "bool[]": [True] * rank, "Scalar[]": [1],
              "ScalarType": C.DTYPES[dtype], "NoneType": None}
    return ("const", simple[base]) if base in simple else None


#: the words of an int argument's name that make it a constant (an axis, a mode, a permutation), though its schema
#: says SymInt or SymInt[]: every caller passes it as one, and export installs no guard on a constant
CONSTANT_INT_WORDS = ("dim", "axis", "mode", "flag", "code", "bit", "perm", "idx")


def constant_int(name: str, op_name: str | None = None) -> bool:
    """Whether a ``SymInt`` or ``SymInt[]`` argument named ``name`` is a constant (``CONSTANT_INT_WORDS``: tfl's
    ``squeeze_dims``, ``perm``, ``dim``), not a size; with ``op_name``, not one the op's kernels use as a size only
    (torchrec's ``dim0``: ``kernel_code.kernel_size_names``)."""
    words = re.findall(r"[a-z]+", name.lower())
    if words and words[-1] in SIZE_WORDS:  # ``last_dim_size`` (_fft_c2r's, hunt 59): the size of an axis, a size
        return False
    return any(w in name.lower() for w in CONSTANT_INT_WORDS) and (op_name is None or name not in _sized(op_name))


#: the last word of an int argument's name that makes it a size whatever it says before (``last_dim_size``)
SIZE_WORDS = frozenset({"size", "sizes", "len", "length", "lengths", "numel", "count"})


def _sized(op_name: str) -> frozenset[str]:
    from .._torch import kernel_code as KC
    from ..errors import UnknownOpError

    try:
        return KC.kernel_size_names(C.resolve_op(op_name))
    except UnknownOpError:  # an op torch does not know here: no kernel to read
        return frozenset()


def _with_sizes(name: str, base: str, default: Any) -> Tree:
    """An argument at its default; a ``SymInt`` default is still a size of its own (a dim)."""
    if constant_int(name):
        return ("const", default)
    if base == "SymInt" and isinstance(default, int):
        return ("sym", name, default)
    if base.startswith("SymInt[") and isinstance(default, list) and default:
        return ("list", tuple(("sym", f"{name}_{i}", v) for i, v in enumerate(default)))
    return ("const", default)


def _tensor(name: str, rank: int, dtype: str) -> Tree:
    return ("tensor", tuple(f"{name}_{i}" for i in range(rank)), (EXAMPLE,) * rank, dtype)


def _length(base: str, rank: int) -> int:
    inside = base[base.index("[") + 1:base.index("]")]
    return int(inside) if inside.isdigit() else max(1, rank - 2)


def _arguments(op: Any) -> list[tuple[str, str, bool, Any]]:
    """(name, schema type text, keyword-only, default or ``CL.NO_DEFAULT``) of each schema argument."""
    return [(name, t, kw, default if has else CL.NO_DEFAULT) for name, t, kw, has, default in CL.schema_arguments(op)]


def schema_candidates(op_name: str, op: Any) -> Iterator[OpInputs]:
    """Example inputs built from the schema, each rank and dtype in turn (all tensors alike)."""
    arguments = _arguments(op)
    for rank in RANKS:
        for dtype in DTYPES:
            trees = [_leaf(name, t, default, rank, dtype) for name, t, _, default in arguments]
            if any(tr is None for tr in trees):
                return
            yield OpInputs(op_name, "schema", tuple((name, kw, tr) for (name, _, kw, _), tr
                                                   in zip(arguments, trees, strict=True)))


def from_schema(op_name: str, op: Any, call: Callable[..., Any]) -> OpInputs | None:
    """The first schema-derived example the kernel accepts at its example sizes, or None."""
    for candidate in schema_candidates(op_name, op):
        point = dict(candidate.dims())
        if static_error(call, candidate, point) is None:
            return candidate
    return None


# ---------------------------------------------------------------------------------------------------------
# From OpInfo samples


def opinfo_names(info: Any) -> set[str]:
    """The op packets an OpInfo stands for: its ``aten_name``, its name with dots as underscores, the last part
    of an ``nn.functional.*`` name (``nn.functional.relu`` is ``relu``; ``_``-prefixed aten twins too), and
    each alias's."""
    names = {getattr(info, "aten_name", None), info.name.replace(".", "_"), info.name.rpartition(".")[2]}
    if info.name.startswith(("nn.functional.", "special.", "linalg.", "fft.")):
        last = info.name.rpartition(".")[2]
        prefix = info.name.split(".")[0] if not info.name.startswith("nn.") else ""
        names |= {f"_{last}", f"{prefix}_{last}" if prefix else last}
    for alias in getattr(info, "aliases", ()) or ():
        names.add(getattr(alias, "name", str(alias)).replace(".", "_"))
    return {n for n in names if n}


def from_opinfo(op_name: str, call: Callable[..., Any] | None = None, limit: int = 4) -> list[OpInputs]:
    """Up to ``limit`` OpInfo samples for the op (an OpInfo named for it, ``opinfo_names``; an in-place op
    ``add_`` takes ``add``'s samples), as inputs; [] without torch's OpInfo database. Whether the kernels take
    them is the caller's test."""
    db = CA.opinfo_db()
    if not db:
        return []
    packet = op_name.partition("::")[2].partition(".")[0]
    wanted = {packet, packet[:-1]} if packet.endswith("_") and not packet.startswith("_") else {packet}
    arguments = _arguments(C.resolve_op(op_name))
    schema = [name for name, _, keyword, _ in arguments if not keyword]
    types = {name: t for name, t, _, _ in arguments}
    out: list[OpInputs] = []
    for info in db:
        if not wanted & opinfo_names(info):
            continue
        for sample in CA.opinfo_samples(info, limit):
            inputs = from_sample(op_name, sample, schema, types)
            if inputs is not None:
                out.append(inputs)
            if len(out) >= limit:
                return out
    return out


#: the samples hook's functions, by spec (imported once per process)
_HOOKS: dict[str, Callable[..., Any]] = {}


#: how a message names the samples hook: given as --samples or in the project file
_HOOK_KEY = "the samples hook (--samples, or [tool.shapecheck.audit] samples)"


def samples_hook(spec: str) -> Callable[..., Any]:
    """``pkg.module:function`` (``[tool.shapecheck.audit] samples``) imported; a bad spec is bad input."""
    import importlib

    from ..errors import UserError

    if spec in _HOOKS:
        return _HOOKS[spec]
    module, sep, func = spec.partition(":")
    if not sep or not module or not func.isidentifier():
        raise UserError(f"{_HOOK_KEY} {spec!r}: expected 'pkg.module:function'")
    import os
    import sys

    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.append(os.getcwd())  # as `python -m` and --import's module names: a package here imports
    try:
        fn = getattr(importlib.import_module(module), func)
    except ImportError as err:
        raise UserError(f"{_HOOK_KEY} {spec!r}: cannot import {module} ({err})") from None
    except AttributeError:
        raise UserError(f"{_HOOK_KEY} {spec!r}: {module} has no function {func}") from None
    except (Exception, SystemExit) as err:  # noqa: BLE001 - the hook's module failed (an op it registers twice,
        # sys.exit() at import: a silent exit 0 before, hunt 60): bad input
        stopped = "" if isinstance(err, Exception) else " (the module stopped before it was imported)"
        raise UserError(f"{_HOOK_KEY} {spec!r}: importing {module} raised {type(err).__name__}: "
                        f"{str(err).splitlines()[0][:300] if str(err) else ''}{stopped}") from None
    if not callable(fn):
        raise UserError(f"{_HOOK_KEY} {spec!r}: not a function")
    _HOOKS[spec] = fn
    return fn


def from_samples_hook(op_name: str, spec: str, limit: int = 4, notes: list[str] | None = None) -> list[OpInputs]:
    """The project's sample calls of the op: ``function(op_name)`` returns a list of ``(args, kwargs)`` (or of
    ``args`` tuples), real tensors included; each becomes inputs whose tensors keep their data at their own
    sizes. A hook that raises for an op gives it the samples it gave before (its error is not the op's; the notes
    say it). ``notes``: why each sample left out was (a tensor with no data, a dtype the audit does not make, no
    arguments), and the hook's own failure."""
    calls = _hook_calls(samples_hook(spec), spec, op_name, limit, notes)
    arguments = _arguments(C.resolve_op(op_name))
    schema = [name for name, _, keyword, _ in arguments if not keyword]
    types = {name: t for name, t, _, _ in arguments}
    out = []
    for i, call in enumerate(calls, 1):
        args, kwargs = (call if isinstance(call, tuple) and len(call) == 2 and isinstance(call[1], dict)
                        else (tuple(call) if isinstance(call, (tuple, list)) else (call,), {}))
        if not isinstance(args, (tuple, list)):  # (Tensor, {}): hunt 60's exit 4, and the valid samples lost
            _skipped(notes, i, f"its args are of type {type(args).__name__!r}, not a tuple of the op's arguments "
                     "((args, kwargs) with args a tuple)")
            continue
        args = tuple(args)
        if not args:
            _skipped(notes, i, "it gives no arguments")
            continue
        bad = next((k for k in kwargs if not isinstance(k, str) or not k.isidentifier()), None)
        if bad is not None:  # ({1: 2}): no argument has that name (hunt 62's exit 4)
            _skipped(notes, i, f"its kwargs have the key {bad!r:.40}, not an argument's name")
            continue
        blobs: dict[str, bytes] = {}
        inputs = from_sample(op_name, (args[0], tuple(args[1:]), dict(kwargs)), schema, types, blobs)
        if inputs is not None:
            out.append(OpInputs(op_name, "samples", inputs.args, tuple(blobs.items())))
            continue
        tensors = [v for v in (*args, *kwargs.values()) for v in (v if isinstance(v, (list, tuple)) else (v,))
                   if C.is_tensor(v)]
        empty = next((v for v in tensors if CA.no_data(v)), None)
        _skipped(notes, i, f"a tensor on {empty.device} holds no data to run the eager kernel on" if empty is not None
                 else "a tensor's dtype is not one the audit makes" if tensors
                 else f"it is a {type(call).__name__} holding no tensor, not a sample call ((args, kwargs) or args)")
    return out


def _hook_calls(fn: Any, spec: str, op_name: str, limit: int, notes: list[str] | None) -> list[Any]:
    """At most ``limit`` sample calls of the hook for the op (a hook that yields for ever gives its first ones);
    where it raises (sys.exit too), the calls it gave before, and a note with its error; where it returns no list
    of calls (a number, a string, a dict), none, and a note saying what it returned."""
    from ..errors import said, user_stopped

    calls: list[Any] = []
    try:
        returned = fn(op_name)
        if returned is None:
            return []
        if isinstance(returned, (str, bytes, dict)) or not hasattr(returned, "__iter__"):
            if notes is not None:
                notes.append(f"the samples hook {spec} returned {returned!r:.60} for {op_name}, not a list "
                             "of sample calls ((args, kwargs) pairs or args tuples): no samples from it")
            return []
        for call in returned:
            calls.append(call)
            if len(calls) >= limit:
                break
    except BaseException as exc:  # noqa: BLE001 - the project's hook failed on this op (sys.exit too)
        if user_stopped(exc):
            raise
        if notes is not None:
            text = said(exc).strip().splitlines()[0] if said(exc).strip() else ""
            kept = f"; the {len(calls)} sample(s) it gave before are used" if calls else ": no samples from it"
            notes.append(f"the samples hook {spec} raised {type(exc).__name__} for {op_name}"
                         + (f" ({text[:200]})" if text else "") + kept)
    return calls


def _skipped(notes: list[str] | None, i: int, why: str) -> None:
    if notes is not None:
        notes.append(f"sample {i} of the samples hook not used: {why}")


def from_sample(name: str, sample: tuple[Any, tuple, dict], schema: list[str] = (),
                types: dict[str, str] | None = None, blobs: dict[str, bytes] | None = None) -> OpInputs | None:
    """An OpInfo sample (input, args, kwargs) as inputs. Each positional value takes the name of the schema's
    argument at its place (``arg<i>`` past them), each keyword its own, so that tensors' dims read
    ``self_0``, ``other_1``; every other value is kept as it is. None when a tensor has a dtype outside the
    audit's. A value the schema types ``SymInt`` (``SymInt[]``) is a size (sizes) of its own, as in a
    schema-derived example: ``n=10`` for an fft is the dim ``n``, not the constant 10."""
    first, args, kwargs = sample
    names = [*schema, *(f"arg{i}" for i in range(len(args) + 1))]
    names = [n for n in names if n not in kwargs]
    out = []
    for arg_name, value, keyword in [(names[0], first, False)] + [(names[i + 1], v, False) for i, v in enumerate(args)] \
            + [(k, v, True) for k, v in kwargs.items()]:
        tree = _sizes(arg_name, value, (types or {}).get(arg_name, ""), name) or _sample_tree(arg_name, value, blobs)
        if tree is None:
            return None
        out.append((arg_name, keyword, tree))
    return OpInputs(name, "opinfo", tuple(out))


def _sizes(name: str, value: Any, type_text: str, op_name: str | None = None) -> Tree | None:
    """A sample's value for a ``SymInt`` or ``SymInt[]`` argument as sizes (dims); None otherwise."""
    base = type_text.rstrip("?")
    if constant_int(name, op_name):
        return None
    if base == "SymInt" and isinstance(value, int) and not isinstance(value, bool):
        return ("sym", name, value)
    if base.startswith("SymInt[") and isinstance(value, (list, tuple)) and value \
            and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return ("list", tuple(("sym", f"{name}_{i}", v) for i, v in enumerate(value)))
    return None


def _sample_tree(name: str, value: Any, blobs: dict[str, bytes] | None = None) -> Tree | None:
    """A sample's value as a tree; with ``blobs``, a tensor keeps its data there (``data:NAME``)."""
    if isinstance(value, (list, tuple)) and any(C.is_tensor(v) for v in value):
        items = [_sample_tree(f"{name}_{i}", v, blobs) for i, v in enumerate(value)]
        return None if any(t is None for t in items) else ("list", tuple(items))
    if C.is_tensor(value):
        facts = CA.tensor_facts(value)
        if facts is None:
            return None
        shape, dtype = facts
        dims = tuple(f"{name}_{i}" for i in range(len(shape)))
        if blobs is None:
            return ("tensor", dims, shape, dtype)
        blobs[name] = CA.tensor_bytes(value)
        return ("tensor", dims, shape, dtype, f"data:{name}")
    if CA.is_dtype(value):
        return ("dtype", CA.dtype_name(value))
    return ("const", value)


def holds(inputs: OpInputs | None, name: str, option: Any) -> bool:
    """Whether ``inputs`` (None: no call) give argument ``name`` the value ``option`` (a tensor: its rank and dtype)."""
    tree = next((t for n, _, t in inputs.args if n == name), None) if inputs is not None else None
    if tree is None:
        return True
    if tree[0] == "tensor" and isinstance(option, tuple) and len(option) == 2:
        return (len(tree[2]), tree[3]) == tuple(option)
    return tree[0] != "const" or tree[1] == option
