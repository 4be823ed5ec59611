"""Load the kernel under test from its source (``load_kernel``): the installed meta kernel, ``--meta FILE.py:FUNC``
or ``--meta-source FILE``; an op's contract (``load_op_contract``) and the check of its arguments against the
op's schema."""

from __future__ import annotations

import ast
import copy
import importlib.util
import inspect
import os
import sys
import textwrap
import traceback
from pathlib import Path
from typing import Any

from .._torch import core as C
from .._torch import kernels as K
from .._torch import library_impls
from .._torch import schema as CL
from ..contract.schema import check_schema
from ..errors import ContractError, InternalError, NotDispatchedOpError, TargetError, UnknownOpError, said
from ..findings import SourceLoc
from ..logic import expr as E
from ..progress import LoadTimeout
from .binding import SchemaArg
from .registrations import (  # noqa: F401 - read_python and is_registered_in: re-exported
    find_registration,
    installed_helpers,
    is_py_impl,
    is_registered_in,
    is_registering,
    is_rule,
    plain_helpers,
    py_impl_keys,
    read_python,
)
from .sources import Function, Installed, Kernel, KernelSource, MetaSource


def load_op_contract(op: str, contract: str | None = None):
    """OP's contract: ``contract`` when given (it must be for OP), else ``contracts/<ns>/<op>.toml``."""
    from ..contract.find import contract_search, find_contract, normalize_op
    from ..contract.load import load_contract

    try:
        name = normalize_op(op)
    except ValueError:
        raise UnknownOpError(f"unknown op {op!r}: not an op name (expected ns::name[.overload], each part an "
                             "identifier, e.g. aten::_x or aten._x)") from None
    if contract is None:
        found = find_contract(name, contract_search())
        if found is None:
            raise TargetError(f"no contract for {name} under contracts/ (pass --contract FILE)")
        contract = str(found)
    c = load_contract(contract)
    if normalize_op(c.op) != name:
        raise TargetError(f"{contract}: the contract is for {c.op}, not {name}")
    return c


def load_target(op: str, contract: str | None, source: KernelSource):
    """The contract and the kernel under test, from ``source`` (a ``kernel.sources.KernelSource``). An unknown op
    names the contract; the contract's arguments are checked against the op's schema before any trace."""
    from ..contract.find import normalize_op

    c = load_op_contract(op, contract)
    name = normalize_op(c.op)
    try:
        kernel = load_kernel(source, name)
    except UnknownOpError as err:
        raise UnknownOpError(f"{c.file}: [op]: {err}") from None
    check_arguments(c, kernel)
    return c, kernel


def schema_note(contract: Any) -> str:
    """``contract check``: the contract's arguments against its op's schema (a ContractError when they do not
    fit), or a note when the op is not registered yet (not imported), so that no "ok" promises what verify
    would then refuse."""
    from ..contract.find import normalize_op

    try:
        op = C.resolve_op(normalize_op(contract.op))
    except NotDispatchedOpError as err:  # no import registers it: the contract can never be checked
        raise ContractError(f"{contract.file}: [op]", str(err)) from None
    except UnknownOpError:
        return (f"note: {contract.file}: {contract.op} is not registered in this process (pass --import with the "
                "module that registers it): its arguments were not checked against its schema")
    check_arguments(contract, Kernel("schema", None, frozenset(), None, op))
    return ""


def check_arguments(contract: Any, kernel: Kernel) -> None:
    """The contract's ``[[args]]`` against the schema of the op (when torch has it): a name the schema lacks,
    a positional argument at another schema argument's place, or a required schema argument the contract
    does not give is a contract error naming ``[args.<name>]``, found before any trace (the call would fail
    inside the kernel and read as the kernel's fault). A kernel with a signature (``--meta``, ``--meta-source``)
    may lack an argument that has a ``default``: the contract then leaves it out (``trace.run.call_args``)."""
    from ..contract.find import normalize_op

    if kernel.op is not None:
        op = kernel.op
    else:
        try:
            op = C.resolve_op(normalize_op(contract.op))
        except UnknownOpError:
            return  # a --meta kernel for an op torch does not have: its signature is the only schema
    _check_outputs(contract, op)
    schema = C.op_arguments(op)
    names = [n for n, _, _ in schema]
    listed = ", ".join(names) or "none"
    position = 0
    for spec in contract.args:
        where = f"{contract.file}: [args.{spec.name}]"
        if spec.name not in names:
            if spec.has_default and kernel.signature is not None:
                continue
            raise ContractError(where, f"{op.name()} in torch {C.TORCH_VERSION} has no argument {spec.name!r} "
                                       f"(its arguments: {listed})")
        if spec.keyword:
            continue
        if position >= len(schema) or schema[position][0] != spec.name or schema[position][1]:
            at = (f"its argument {position} is {schema[position][0]!r}" + (" (keyword-only)" if schema[position][1]
                  else "")) if position < len(schema) else f"it takes {len(schema)} arguments"
            raise ContractError(where, f"passed by position as argument {position} of {op.name()}, but {at}; "
                                       "list the arguments in the schema's order, or set keyword = true")
        position += 1
    given = {spec.name for spec in contract.args}
    for n, _, has_default in schema:
        if not has_default and n not in given:
            raise ContractError(f"{contract.file}: [args]", f"{op.name()} requires the argument {n!r}, which the "
                                                            f"contract does not give (its arguments: {listed})")
    check_schema(contract, CL.op_argument_types(op), CL.NO_DEFAULT)


def load_kernel(source: KernelSource, op: str) -> Kernel:
    """The kernel ``source`` has for ``op`` (an op name as ``normalize_op`` gives it)."""
    from ..progress import loading

    match source:
        case Installed():
            return installed_kernel(op)
        case Function(file=file, name=name):
            with loading(file):
                return function_kernel(file, name, op)
        case MetaSource(file=file):
            with loading(file):
                return source_kernel(file, op)
    raise InternalError(f"not a kernel source: {source!r}")


def installed_kernel(op_name: str) -> Kernel:
    """The op as the installed torch runs it on FakeTensors (``kernel.resolved``)."""
    from .resolved import installed_kernel as installed

    return installed(op_name)


def _check_outputs(contract: Any, op: Any) -> None:
    """Each path's outputs against the op's schema returns: more outputs than it returns, or an integer where it
    returns a Tensor, is a contract error naming the output (verify would blame the kernel for it). An op that
    returns a list is left alone (its outputs are the list's)."""
    from ..contract import spec as S

    returns = CL.op_return_types(op)
    if any(t.endswith("[]") for t in returns):
        return
    lets = {name: [v for v in _alternatives(value) if isinstance(v, E.Node)] for name, value in contract.lets}
    for p in contract.paths:
        where = f"{contract.file}: [paths.{p.id}.outputs"
        if len(p.outputs) > len(returns):
            raise ContractError(f"{where}]", f"{len(p.outputs)} outputs, but {op.name()} returns {len(returns)} "
                                             f"({', '.join(returns) or 'nothing'})")
        for i, (out, kind) in enumerate(zip(p.outputs, returns)):
            entries = [v for _, v in out.alternatives] if isinstance(out, S.Select) else [out]
            for e in entries:  # "none" stays: a C++ kernel returns an undefined Tensor as None (SC019)
                shapes = [e] if isinstance(e, E.Node) else \
                    [v for v in _alternatives(e.shape) if isinstance(v, E.Node)] if isinstance(e, S.OutputSpec) else []
                for shape in shapes:
                    if kind in ("Tensor", "Tensor?") and not _tuple_like(shape, lets):
                        raise ContractError(f"{where}[{i}]]", f"the integer {E.to_text(shape)}, but {op.name()} "
                                                              "returns a Tensor there: give its shape as a tuple, "
                                                              "(N,) for one dim")


def _tuple_like(node: Any, lets: dict[str, list[Any]] | None = None) -> bool:
    """Whether an output expression is a shape (a tuple, an argument's shape, a slice or concatenation of them;
    a conditional either of whose values is one; a ``[let]`` whose value is one: hunt 59's "the integer S")."""
    if isinstance(node, E.Ite):
        return _tuple_like(node.then, lets) or _tuple_like(node.other, lets)
    if isinstance(node, E.Var) and lets and node.name in lets:
        inner = {k: v for k, v in lets.items() if k != node.name}  # (a let never names itself)
        return any(_tuple_like(v, inner) for v in lets[node.name])
    return not isinstance(node, (E.Var, E.Const, E.Arith, E.Neg, E.Call)) or \
        isinstance(node, E.Call) and node.fn not in ("max", "min", "ceil", "floor", "abs")


def _alternatives(value: Any) -> list[Any]:
    from ..contract import spec as S

    return [v for _, v in value.alternatives] if isinstance(value, S.Select) else [value]


def function_kernel(file: str, func: str, op_name: str | None = None) -> Kernel:
    """``FILE.py:FUNC``: import the file (the whole module runs, once: a file already imported, by ``--import``
    or as part of its package, is reused, so its ops are not registered twice) and take the function. With
    ``op_name`` (an op torch knows once the file is imported) the function binds by the op's schema."""
    path = Path(file)
    read_python(file, "--meta")  # the file's limits, before Python imports it
    module = _imported(path)
    if module is None:
        module = _import_file(file, path)
    fn = vars(module).get(func)  # a name the file defines (getattr would find the module type's __class__)
    if fn is None or not callable(fn) or isinstance(fn, type) and func.startswith("__"):
        found = sorted(n for n, v in vars(module).items() if inspect.isfunction(v) and not n.startswith("_"))
        raise TargetError(f"{file}: no function {func!r} (functions: {', '.join(found) or 'none'})")
    op = _op_or_none(op_name)
    kernel = Kernel(f"{_file_label(path)}:{func}", CL.with_fake_context(fn, op), frozenset({str(path.resolve())}),
                    _signature(fn), None, _definition(fn), schema=_schema(op), function=fn, **_defined_elsewhere(fn, path))
    return _through_op(kernel, fn, op, None)


def _defined_elsewhere(fn: Any, path: Path) -> dict[str, Any]:
    """For a function ``FILE:FUNC`` names whose body lies in another file (imported into FILE, or made there
    with ``exec``): its code is the kernel's own too, and its file is where the kernel's lines are found."""
    file = C.function_file(fn)
    if file is None or not os.path.isfile(file) or Path(file).resolve() == path.resolve():
        return {}
    return {"codes": K.own_codes(fn), "source_files": frozenset({str(Path(file).resolve())})}


def _through_op(kernel: Kernel, fn: Any, op: Any, registration: str | None,
                global_slot: tuple[Any, str] | None = None) -> Kernel:
    """A candidate for an op torch knows is called through the op, in torch's slot (``kernel.resolved``); one
    for an op torch does not know is called directly."""
    if op is None:
        return kernel
    from .resolved import candidate_kernel

    return candidate_kernel(kernel, fn, op, registration, global_slot)


def _imported(path: Path) -> Any:
    """The module already imported from ``path`` in this process, if any."""
    target = path.resolve()
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str) and file.endswith(".py") and Path(file).resolve() == target:
            return module
    return None


def _import_file(file: str, path: Path) -> Any:
    mod_name = f"_shapecheck_candidate_{abs(hash(str(path.resolve())))}"
    loader_spec = importlib.util.spec_from_file_location(mod_name, path)
    if loader_spec is None or loader_spec.loader is None:
        raise TargetError(f"{file}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[mod_name] = module
    folder = str(path.resolve().parent)
    if folder not in sys.path:  # as Python runs a script: the file's own folder imports (its sibling modules)
        sys.path.insert(0, folder)
    try:
        loader_spec.loader.exec_module(module)
    except SyntaxError as err:
        sys.modules.pop(mod_name, None)
        raise TargetError(f"{file}:{err.lineno}: does not parse: {err.msg}") from err
    except BaseException as err:  # noqa: BLE001 - any error of the user's module (sys.exit, Ctrl-C too) is bad input
        sys.modules.pop(mod_name, None)
        if isinstance(err, LoadTimeout):
            raise
        clash = registration_clash(err)
        if clash is not None:
            raise TargetError(f"--meta {file}: {clash}; the ops it defines are already registered in this process "
                              "(another module, or this file under another name): import the library once "
                              "(--import) and name the fake with --meta-source FILE, or put the fake in a file "
                              "that registers nothing") from err
        raise TargetError(f"{_innermost(err, path)}: importing it raised {_raised(err)}") from err
    return module


def registration_clash(err: BaseException) -> str | None:
    """``file:line (the line) -> torch: first sentence`` when ``err`` was raised by torch.library while the
    user's line registered something (an op defined twice, a second ``Library(ns, "DEF")``), else None."""
    frames = traceback.extract_tb(err.__traceback__)
    mine = [i for i, f in enumerate(frames) if not f.filename.startswith((C.TORCH_DIR, C.SHAPECHECK_DIR))
            and "importlib" not in f.filename and "<frozen" not in f.filename]
    if not isinstance(err, RuntimeError) or not mine or mine[-1] == len(frames) - 1:
        return None
    below = frames[mine[-1] + 1].filename
    if not below.startswith((os.path.join(C.TORCH_DIR, "library.py"), os.path.join(C.TORCH_DIR, "_library"))):
        return None
    user = frames[mine[-1]]
    text = said(err).strip()
    shown = text.split(". ")[0].splitlines()[0] if text else type(err).__name__
    return f"{user.filename}:{user.lineno} ({(user.line or '').strip()}) registers what is registered already " \
           f"(torch: {shown})"


def _op_or_none(op_name: str | None) -> Any:
    from ..contract.find import normalize_op

    if op_name is None:
        return None
    try:
        return C.resolve_op(normalize_op(op_name))
    except (UnknownOpError, ValueError):
        return None  # an op torch does not know: the function's parameters bind by the contract's names


def _schema(op: Any) -> tuple[SchemaArg, ...] | None:
    if op is None:
        return None
    return tuple(SchemaArg(n, t, kw, has, default) for n, t, kw, has, default in CL.schema_arguments(op))


def source_kernel(path_text: str, op_name: str) -> Kernel:
    """A file in the style of ``torch/_meta_registrations.py``: take the function registered for the op with
    ``register_meta`` and define it, alone, in the installed torch's meta-registration namespace, with the
    file's own module-level imports bound where this torch can run them. The rest of the file is not executed
    (it may register ops the installed torch lacks)."""
    path = Path(path_text)
    source, tree = read_python(path_text, "--meta-source")
    packet = op_name.partition("::")[2].split(".")[0]
    registration = find_registration(tree, op_name)
    if registration is None:
        raise TargetError(f"{path_text}: no function is registered for {op_name} (register_meta, register_decomposition, "
                          "register_fake, impl_abstract, register_op_impl or <custom op>.register_fake)")
    fdef = copy.copy(registration.fdef)  # the parsed tree is shared (read_python): changed in a copy
    # registering decorators are left out (they would register into this torch again; ``py_impl`` raises where a
    # kernel is there already), and what the ``py_impl``s of this op put in its Python kernel slots is modelled
    keys = py_impl_keys(tree, fdef, op_name)
    fdef.decorator_list = [d for d in fdef.decorator_list if not is_registering(d) and not is_py_impl(d)]
    from .._torch.namespaces import installed_module
    from .constants import bind_constants

    module = installed_module(str(path), _registering_name(registration.decorator))
    namespace = dict(vars(module))
    namespace["__name__"] = f"_shapecheck_meta_source_{packet}"
    filename = str(path.resolve())
    _bind_imports(tree, filename, namespace)
    flags = _future_flags(tree)
    # the file's own helpers that the kernel calls (a PR may change them with the kernel): plain,
    # undecorated module-level functions, defined from the file
    helpers = plain_helpers(tree, fdef)
    caveats = bind_constants(tree, [fdef, *helpers], source, filename, namespace, module)
    caveats += tuple(c for helper in helpers
                     if (c := _define_helper(helper, source, filename, namespace, flags)) is not None)
    # the file's functions that run as the installed torch has them (a decorated helper, and what it calls)
    caveats += tuple(c for helper in installed_helpers(tree, fdef)
                     if (c := _runs_installed(helper, source, filename, vars(module))) is not None)
    try:
        code = compile(ast.Module(body=[fdef], type_ignores=[]), filename, "exec", flags=flags, dont_inherit=True)
        exec(code, namespace)  # the candidate's own function definition, nothing else from the file
    except (Exception, SystemExit) as err:  # noqa: BLE001 - defining runs defaults and annotations: bad input
        if isinstance(err, LoadTimeout):
            raise
        raise TargetError(f"{path_text}:{fdef.lineno}: defining {fdef.name} failed: {type(err).__name__}: {err}") from err
    fn = namespace[fdef.name]
    loc = SourceLoc(str(path.resolve()), fdef.lineno, fdef.name, f"def {fdef.name}(...)")
    op = _op_or_none(op_name)
    rule = is_rule(registration.decorator)
    if rule and op is None:
        raise TargetError(f"{path_text}:{fdef.lineno}: {fdef.name} is a FakeTensor rule (register_op_impl) of "
                          f"{op_name}, which the installed torch does not have")
    # a FakeTensor rule takes (fake_mode, func, *args): called with the op's arguments, bound by its schema
    call = CL.rule_as_kernel(fn, op) if rule else fn
    # the kernel's own code is its function, as for the installed torch's kernel: a guard in one of the
    # file's helpers (alloc_with_matching_layout) is torch's helper's (SC022) here as it is there
    kernel = Kernel(f"{_file_label(path)}:{fdef.name}", CL.with_fake_context(call, op), frozenset(),
                    None if rule else _signature(fn), None, loc, caveats, schema=_schema(op), function=fn,
                    codes=K.own_codes(fn), source_files=frozenset({filename}))
    # torch's own code may read the function by its name in the module the file stands for (a FakeTensor rule
    # calling torch._refs.native_layer_norm): there the file's function stands in for it
    slot = (module, fdef.name) if callable(vars(module).get(fdef.name)) else None
    # a function made the op's Python kernel by ``py_impl`` alone is registered by those decorators alone
    kind = ", ".join([*([] if is_py_impl(registration.decorator) else [_registering_name(registration.decorator)]),
                      *(f"py_impl({k})" for k in keys)])
    return _through_op(kernel, fn, op, kind, slot)


def _future_flags(tree: ast.Module) -> int:
    """The compiler flags of the file's own ``from __future__`` imports: its functions are defined as its import
    would define them (without ``annotations``, an annotation is evaluated at definition, as torch's files have
    it), not with this module's own future imports."""
    import __future__

    flags = 0
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            for alias in node.names:
                feature = getattr(__future__, alias.name, None)
                flags |= getattr(feature, "compiler_flag", 0)
    return flags


def _bind_imports(tree: ast.Module, filename: str, namespace: dict) -> None:
    """The file's own module-level imports, each bound in ``namespace`` where this torch can run it: the names
    its annotations and defaults read (``List`` in torch 2.4's files). One this torch cannot run is skipped: a
    function that then reads a missing name fails to define, as the file would fail to import (bad input)."""
    from ..errors import user_stopped

    for node in tree.body:
        if not isinstance(node, (ast.Import, ast.ImportFrom)) or getattr(node, "module", None) == "__future__":
            continue
        try:
            exec(compile(ast.Module(body=[node], type_ignores=[]), filename, "exec", dont_inherit=True), namespace)
        except BaseException as err:  # noqa: BLE001 - a name this torch lacks: the definitions say what it costs
            if user_stopped(err) or isinstance(err, LoadTimeout):
                raise


def _registering_name(dec: ast.expr) -> str:
    func = dec.func if isinstance(dec, ast.Call) else dec
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "register_meta")


def _define_helper(helper: ast.FunctionDef, source: str, filename: str, namespace: dict,
                   flags: int = 0) -> tuple | None:
    """Define one of the file's helpers in ``namespace``. When its definition fails here (a default value
    naming something the installed torch lacks), the kernel would call the installed torch's version
    instead: harmless when that version has the same source (or there is none: a call then raises NameError),
    else a caveat ``(SourceLoc, why)`` that makes the verdict inconclusive (the kernel verified is not the
    file's)."""
    if helper.decorator_list:  # a registered function the kernel calls: defined without registering it again
        helper = copy.copy(helper)
        helper.decorator_list = []
    try:
        exec(compile(ast.Module(body=[helper], type_ignores=[]), filename, "exec", flags=flags, dont_inherit=True),
             namespace)
        return None
    except (Exception, SystemExit) as err:  # noqa: BLE001 - defining runs annotations and defaults: anything
        if isinstance(err, LoadTimeout):
            raise
        error = f"{type(err).__name__}: {said(err)}"
    installed = namespace.get(helper.name)
    if installed is None:
        return None  # nothing stands in for it: a call raises NameError, which verify reports as inconclusive
    theirs, mine = _source_of(installed), ast.get_source_segment(source, helper)
    if theirs is not None and mine is not None and textwrap.dedent(theirs).strip() == textwrap.dedent(mine).strip():
        return None  # the installed torch's helper is the same function
    return (SourceLoc(filename, helper.lineno, helper.name, f"def {helper.name}(...)"),
            f"the file's helper {helper.name} cannot be defined here ({error}); the installed torch's version, "
            f"which differs, would be called instead, so the kernel verified is not the file's: nothing is "
            f"proved about it")


def _runs_installed(helper: ast.FunctionDef, source: str, filename: str, installed: dict[str, Any]) -> tuple | None:
    """A caveat ``(SourceLoc, why)`` where the file's ``helper``, which the kernel reaches only through a decorated
    function (so as the installed torch has it), differs from the installed torch's: the file's change is not
    what runs, so nothing is proved about it. None where the two are the same function."""
    theirs = _source_of(installed.get(helper.name))
    start = min([helper.lineno, *(d.lineno for d in helper.decorator_list)])
    mine = "\n".join(source.splitlines()[start - 1:helper.end_lineno])
    if theirs is not None and _code_lines(theirs) == _code_lines(mine):
        return None
    module = installed.get("__name__", "")
    what = (f"has no such function in {module}, the module the file is taken for" if theirs is None else
            "has another version of it")
    return (SourceLoc(filename, helper.lineno, helper.name, f"def {helper.name}(...)"),
            f"the file's {helper.name} runs only as the installed torch has it (the kernel reaches it through a "
            f"decorated function, which is not defined from the file), and the installed torch {what}: the "
            f"kernel verified is not the file's, so nothing is proved about it")


def _code_lines(text: str) -> list[str]:
    """A function's source without its comment lines and trailing spaces (a comment after its last line is part of
    the installed function's ``inspect`` source, not of its syntax tree's)."""
    return [line.rstrip() for line in textwrap.dedent(text).splitlines() if line.strip() and
            not line.lstrip().startswith("#")]


def _source_of(fn: Any) -> str | None:
    try:
        return inspect.getsource(fn) if fn is not None else None
    except (OSError, TypeError):
        return None


def _innermost(err: BaseException, path: Path) -> str:
    """``file:line`` of the deepest frame of the traceback inside the user's file, else the file."""
    file, line = str(path), None
    for frame in traceback.extract_tb(err.__traceback__):
        if Path(frame.filename).resolve() == path.resolve():
            line = frame.lineno
    return f"{file}:{line}" if line is not None else file


def _definition(fn: Any) -> SourceLoc | None:
    """Where a ``--meta`` function is defined: its ``def`` line (``_torch.kernels.definition``); None for a
    callable without Python code."""
    if fn is None or getattr(inspect.unwrap(fn), "__code__", None) is None:
        return None
    return K.definition(fn)


def _signature(fn: Any) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None


def import_modules(specs: tuple[str, ...] | list[str]) -> None:
    """``--import MODULE_OR_FILE``: import what registers the ops (a custom-op library, a file of fake
    kernels) before the op is resolved. A file is imported with its folder on ``sys.path``, as Python runs a
    script. Any failure is bad input naming the module and the line of its own code that raised, and where the
    module was named (``--import``, or the project file's ``imports``)."""
    from ..config import option_origin
    from ..progress import loading

    option = option_origin("imports", "--import")
    for spec in specs:
        path = Path(spec)
        if spec.endswith(".py") or path.is_file():
            read_python(spec, option)  # the file's limits (a FIFO, a device, its size), before Python reads it
            folder = str(path.resolve().parent)
            if folder not in sys.path:
                sys.path.insert(0, folder)
            name, where = path.stem, path
        elif "/" in spec and path.is_dir():  # a package's folder imports as the package (hunt 62: "No module
            # named '/tmp/pkgdir'"); a folder that is no package is bad input saying so
            if not (path / "__init__.py").is_file():
                raise TargetError(f"{option} {spec}: a directory with no __init__.py, not a module or a .py file")
            folder = str(path.resolve().parent)
            if folder not in sys.path:
                sys.path.insert(0, folder)
            name, where = path.resolve().name, None
        else:
            name, where = spec, None
            if str(Path.cwd()) not in sys.path and "" not in sys.path:
                sys.path.append(str(Path.cwd()))  # as `python -m` does: a package in the current directory imports
        try:
            if where is not None and _imported(where) is not None:
                continue  # already imported, under any name (its ops are registered once)
            with loading(f"{option} {spec}"), library_impls.recording():  # its Library.impl functions noted
                importlib.import_module(name)
        except SyntaxError as err:
            raise TargetError(f"{option} {spec}: {err.filename}:{err.lineno}: does not parse: {err.msg}") from err
        except LoadTimeout:
            raise
        except BaseException as err:  # noqa: BLE001 - the user's module failed (sys.exit and Ctrl-C too): bad input
            clash = registration_clash(err)
            if clash is not None:
                raise TargetError(f"{option} {spec}: {clash}; another module (or this one under another name) "
                                  "registered these ops first: import the library once") from err
            raise TargetError(f"{option} {spec}: {_innermost_any(err)}{_raised(err)}") from err


def _raised(err: BaseException) -> str:
    """``SystemExit: 0`` (what a module's import raised, for a message); a module that exits or is interrupted
    while it is imported has not registered its ops, so nothing after it could be checked."""
    text = f"{type(err).__name__}: {said(err)}" if said(err) else type(err).__name__
    cause = err.__cause__ or (None if err.__suppress_context__ else err.__context__)
    for _ in range(16):  # down to the first failure (a library's missing .so, say); a chain is never a cycle
        if cause is None or (cause.__cause__ or cause.__context__) is None:
            break
        cause = cause.__cause__ or cause.__context__
    if cause is not None and str(cause) and str(cause) not in text:
        text += f" (caused by {type(cause).__name__}: {str(cause).splitlines()[0][:300]})"
    if not isinstance(err, Exception):  # sys.exit(), Ctrl-C, a BaseException of the module's own
        text += " (the module stopped before it was imported: nothing can be checked)"
    return text


def _innermost_any(err: BaseException) -> str:
    """``file:line: `` of the deepest traceback frame outside torch and shapecheck, or nothing."""
    frames = [f for f in traceback.extract_tb(err.__traceback__)
              if not f.filename.startswith((C.TORCH_DIR, C.SHAPECHECK_DIR)) and "importlib" not in f.filename]
    return f"{frames[-1].filename}:{frames[-1].lineno}: " if frames else ""


def _file_label(path: Path) -> str:
    """A kernel file as a report's kernel label names it: its name, with its folder where the name says nothing
    alone (``functional/__init__.py`` for a copy of torch's ``_refs/nn/functional``, hunt 39)."""
    return f"{path.parent.name}/{path.name}" if path.name == "__init__.py" and path.parent.name else path.name
