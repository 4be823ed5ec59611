"""``shapecheck contract draft OP``: a starting contract from the op's schema and one symbolic trace (the text is
``audit.draft.schema_text``'s).

One ``[[args]]`` per schema argument, with its kind; fresh dims for every tensor dimension and SymInt; choices
for dtypes, bools and plain ints. Ranks come from ``--rank ARG=N``, else from a sample call (the first rank
and dtype combination the meta kernel accepts at concrete sizes), else a default with a ``# TODO``. The meta
kernel is then traced once under unbacked sizes (the trace machinery verify uses): a guard or assert that two
input dims be equal (and any other assert over the dims) goes to ``[domain] requires`` with the kernel's line,
and the outputs become the single path's shapes, in the dims' names. The draft loads as written
(``contract check``); it is checked before it is returned.
"""

from __future__ import annotations

import itertools
import keyword
import math
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ExprError, InternalError, TargetError, UserError
from ..logic import expr as E
from ..rules import RuleCode
from .draft import schema_text
from .draft_paths import MAX_CASES, CaseOutputs, DraftPath, draft_paths
from .draft_samples import SYMINT_SIZE, TENSOR_SIZE, int_sample, sample_ranks

_TYPE = re.compile(r"(\w+)(\?)?(?:\[(\d*)\])?(\?)?")
_RESERVED = {"true", "false", "True", "False", "min", "max"}


@dataclass
class Arg:
    """How the draft gives one schema argument."""

    name: str
    type: str
    keyword_only: bool
    kind: str  # tensor | tensors | int | ints | float | floats | bool | str | none
    symbolic: bool = False  # SymInt / SymInt[]: dims
    optional: bool = False  # Tensor?: present = has_<name>
    rank: int | None = None  # tensors, tensor lists and SymInt[] (their length)
    rank_from: str = ""  # "--rank", "a sample call" or "" (a default: TODO)
    dtype: str = "float32"
    value: Any = None  # a literal, or the sample value of a choice
    choice: tuple[Any, ...] | None = None  # the value comes from a choice with these values
    todo: str = ""
    dims: list[str] = field(default_factory=list)
    shapes: list[str] = field(default_factory=list)  # per element, for a tensor list


def draft_contract(op_name: str, ranks: dict[str, int] | None = None, *, trace: bool = True,
                   notes: list[str] | tuple[str, ...] = ()) -> str:
    """A starting contract for ``op_name`` (``ns::name[.overload]``, registered in this process) as TOML text.
    ``ranks``: the rank of a tensor argument (or the length of a SymInt[] / Tensor[] one), by name. ``notes``:
    comment lines for the head (``audit --draft`` gives the audit's findings there)."""
    from .._torch import core as C
    from .._torch import schema as CL
    from ..contract.find import normalize_op

    try:
        name = normalize_op(op_name)
    except ValueError:
        raise TargetError(f"unknown op {op_name!r}: not an op name (expected ns::name[.overload])") from None
    op = C.resolve_op(name)
    schema = CL.schema_arguments(op)
    ranks = dict(ranks or {})
    unknown = sorted(set(ranks) - {n for n, *_ in schema})
    if unknown:
        raise UserError(f"--rank {unknown[0]}: {name} has no argument {unknown[0]!r} (its arguments: "
                        f"{', '.join(n for n, *_ in schema)})")
    args = [plan_arg(n, t, kw, has, default, ranks.get(n)) for n, t, kw, has, default in schema]
    for a in args:
        if ranks.get(a.name) is not None and a.kind not in ("tensor", "tensors", "ints"):
            raise UserError(f"--rank {a.name}={ranks[a.name]}: the schema says {a.name} is {a.type}, which has "
                            "no rank")
    sample_ranks(op, args)
    eager = _eager_sample(name, op, args)
    names = _Names(args)
    _name_dims(args, names)
    head = f"# Drafted by `shapecheck contract draft {name}` from the schema in torch {C.TORCH_VERSION}:\n" \
           f"#   {CL.schema_text(op)}\n" + "".join(f"# {n}\n" for line in notes for n in line.splitlines())
    text = schema_text(name, args, names, head, Traced())
    lists = any(a.kind == "tensors" for a in args)
    if lists and not _loads(text):  # a shapecheck without tensor lists: the text, for a later one to load
        return schema_text(name, args, names, head, Traced(todos=[
            "the outputs: this shapecheck cannot load `kind = \"tensors\"` yet, so the kernel was not traced"]))
    traced = trace_draft(name, text, args) if trace else Traced(todos=["the outputs: not traced (--no-trace)"])
    if trace and eager:
        _eager_contradictions(name, args, names, traced)
    final = schema_text(name, args, names, head, traced)
    _must_load(final)
    return final


def _loads(text: str) -> bool:
    from ..errors import ContractError

    try:
        _load_text(text)
        return True
    except ContractError:
        return False


def plan_arg(name: str, type_text: str, keyword_only: bool, has_default: bool, default: Any,
             rank: int | None) -> Arg:
    """The contract kind and value of one schema argument (``type_text`` in schema notation)."""
    spelled = type_text.replace(" ", "")
    for _ in range(3):  # torchgen's spelling (List[int], Optional[Tensor]) in schema notation (int[], Tensor?)
        spelled = re.sub(r"List\[([^\[\]]*(?:\[\d*\])?\??)\]", r"\1[]", spelled)
        spelled = re.sub(r"Optional\[([^\[\]]*(?:\[\d*\])?\??)\]", r"\1?", spelled)
    m = _TYPE.fullmatch(spelled)
    base, inner_opt, size, outer_opt = m.groups() if m else (type_text, None, None, None)
    is_list = size is not None
    optional = bool(inner_opt or outer_opt)
    a = Arg(name, type_text, keyword_only, "none")
    absent = optional and has_default and default is None
    if base == "Tensor" and not is_list:
        a.kind, a.optional, a.rank = "tensor", optional, rank
        return a
    if base == "Tensor":
        a.kind, a.rank = "tensors", rank
        return a
    if absent:
        a.todo = f"{type_text} = None: give kind and value to pass one" + \
            (' (kind = "dtype")' if base == "ScalarType" else "")
        return a
    if base in ("int", "SymInt") and is_list:
        a.kind, a.symbolic = "ints", base == "SymInt"
        n = int(size) if size else None
        if a.symbolic:
            a.rank = rank if rank is not None else n
            if n is not None:
                a.rank_from = "the schema"
        else:
            count = rank if rank is not None else n or 2
            # a list of dims takes distinct ones (flip, fft: a repeated dim is refused), other lists one value
            a.value = list(default) if has_default and isinstance(default, (list, tuple)) else \
                list(range(count)) if "dim" in name else [int_sample(name)] * count
            if not has_default:
                a.todo = "the values to check"
        return a
    if base == "SymInt":
        a.kind, a.symbolic = "int", True
        return a
    if base == "int":
        a.kind = "int"
        a.value = default if has_default and isinstance(default, int) else int_sample(name)
        a.choice = (a.value,)
        if not has_default:
            a.todo = "the values to check"
        return a
    if base == "bool" and is_list:  # an output_mask: every output asked for
        a.kind = "bools"
        a.value = [bool(v) for v in default] if has_default and isinstance(default, (list, tuple)) else \
            [True] * (int(size) if size else 2)
        return a
    if base == "bool" and not is_list:
        a.kind = "bool"
        first = bool(default) if has_default and isinstance(default, bool) else False
        a.value, a.choice = first, (first, not first)
        return a
    if base in ("float", "Scalar") and not is_list:
        a.kind = "float"
        a.value = default if has_default and isinstance(default, (int, float)) and math.isfinite(default) else 1.0
        return a
    if base == "float" and is_list:
        a.kind = "floats"
        a.value = [float(x) for x in default] if has_default and isinstance(default, (list, tuple)) else \
            [1.0] * (int(size) if size else 2)
        if not has_default:
            a.todo = "the values to check"
        return a
    if base == "ScalarType" and not is_list:
        a.kind = "dtype"
        a.value = default if has_default and isinstance(default, str) else "float32"
        return a
    if base == "str" and not is_list:
        a.kind = "str"
        a.value = default if has_default and isinstance(default, str) else ""
        if not has_default:
            a.todo = "the string to pass"
        return a
    a.todo = f"{type_text} cannot be given in a contract: the kernel gets None" if not optional else \
        f"{type_text}: the kernel gets None"
    return a


# ---------------------------------------------------------------------------------------------------------
# The eager kernel: a sample it accepts, and the formulas it contradicts


def _call_inputs(name: str, args: list[Arg], names: Any, size: int) -> tuple[Any, dict[str, int]]:
    """The draft's sample call as audit inputs (``OpInputs``) with every tensor dim and SymInt[] entry at
    ``size`` and every SymInt at SYMINT_SIZE, and that point in the draft's dim names."""
    from .inputs import OpInputs

    choices = getattr(names, "choices", {}) if names is not None else {}

    def concrete(v: Any) -> Any:
        return choices[v][0] if isinstance(v, str) and v in choices else v

    trees, point = [], {}
    for a in args:
        dims = a.dims or [f"{a.name}_{i}" for i in range(a.rank or 0)]
        if a.kind == "tensor" and a.optional and concrete(a.value) is False:
            tree = ("const", None)
        elif a.kind == "tensor":
            tree = ("tensor", tuple(dims), (size,) * len(dims), concrete(a.dtype))
            point.update({d: size for d in dims})
        elif a.kind == "tensors":
            n = len(dims) // 2 if a.dims else (a.rank or 1)
            items = [dims[j * n:(j + 1) * n] if a.dims else [f"{a.name}_{j}_{i}" for i in range(n)] for j in range(2)]
            tree = ("list", tuple(("tensor", tuple(it), (size,) * len(it), concrete(a.dtype)) for it in items))
            point.update({d: size for it in items for d in it})
        elif a.kind == "ints" and a.symbolic:
            tree = ("list", tuple(("sym", d, size) for d in dims))
            point.update({d: size for d in dims})
        elif a.kind == "int" and a.symbolic:
            d = a.dims[0] if a.dims else a.name
            tree, point[d] = ("sym", d, SYMINT_SIZE), SYMINT_SIZE
        elif a.kind == "dtype":
            tree = ("dtype", concrete(a.value))
        elif a.kind == "none":
            tree = ("const", None)
        else:
            tree = ("const", concrete(a.value))
        trees.append((a.name, a.keyword_only, tree))
    return OpInputs(name, "schema", tuple(trees)), point


def _eager_sample(name: str, op: Any, args: list[Arg]) -> bool:
    """Whether the op has an eager kernel on the CPU. When it has and rejects the fake's sample, the audit's
    search finds a call both accept; its ranks, dtypes, ints and strings become the draft's."""
    from .._torch import audit as CA

    if not CA.has_eager_kernel(op, "cpu"):
        return False
    from .candidates import Search
    from .eager import worker
    from .run import audit_kernel

    inputs, point = _call_inputs(name, args, None, TENSOR_SIZE)
    if worker().call(name, inputs, point).ok or any(a.rank_from == "--rank" for a in args):
        return True
    kernel = audit_kernel(name, None)
    found = Search(name, op, kernel.fn, lambda i: worker().call(name, i, dict(i.dims()))).run()
    if found.inputs is None or found.eager != "accepted":
        return True
    trees = {n: t for n, _, t in found.inputs.args}
    for a in args:
        t = trees.get(a.name)
        if t is None:
            continue
        if a.kind == "tensor" and t[0] == "tensor" and a.rank_from != "--rank":
            a.rank, a.dtype, a.rank_from = len(t[1]), t[3], "a sample the eager kernel accepts"
            if a.todo.startswith("the rank:"):  # the sample call at equal sizes ran nowhere; this one did
                a.todo = ""
        elif a.kind == "dtype" and t[0] == "dtype":
            a.value = t[1]
        elif a.kind in ("int", "str", "float") and not a.symbolic and t[0] == "const" and t[1] is not None:
            a.value, a.choice = t[1], ((t[1],) if a.kind == "int" else None)
    return True


def _eager_contradictions(name: str, args: list[Arg], names: Any, traced: Traced) -> None:
    """Each traced output formula checked against the eager kernel at the sample sizes and one size past them:
    a formula it contradicts is not copied (``# TODO: the eager kernel gives ...`` instead)."""
    from .eager import worker

    for size in (TENSOR_SIZE, TENSOR_SIZE + 1):
        inputs, point = _call_inputs(name, args, names, size)
        res = worker().call(name, inputs, point)
        if not res.ok:
            continue
        items = list(res.value[1]) if res.value[0] == "L" else [res.value]
        for i, formula in enumerate(traced.outputs):
            if formula is None or i >= len(items) or items[i][0] != "T":
                continue
            try:
                want = E.evaluate(E.parse(formula), point)
            except Exception:  # noqa: BLE001, S112 - a formula with data-dependent sizes: not compared
                continue
            have = tuple(items[i][1])
            if isinstance(want, tuple) and tuple(want) != have:
                at = ", ".join(f"{k}={v}" for k, v in point.items())
                traced.todos.append(f"the eager kernel gives {list(have)} for output {i} at {at}, where the fake's "
                                    f"formula {formula} gives {list(want)}: the formula is not copied")
                traced.outputs[i] = None
                if i < len(traced.tables):
                    traced.tables[i] = None


class _Names:
    """Names for dims and choices that collide with nothing (tensor arguments are names in expressions)."""

    def __init__(self, args: list[Arg]) -> None:
        self.used = {a.name for a in args if a.kind in ("tensor", "tensors")} | _RESERVED
        self.letters = (c for n in itertools.count(1) for c in map("".join, itertools.product(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZ", repeat=n)))
        self.choices: dict[str, tuple[Any, ...]] = {}

    def fresh(self, wish: str) -> str:
        name, n = wish, 1
        while name in self.used or keyword.iskeyword(name) or not name.isidentifier():
            name, n = f"{wish}_{n}", n + 1
        self.used.add(name)
        return name

    def letter(self) -> str:
        while True:
            cand = next(self.letters)
            if not any(u.startswith(cand) and u[len(cand):].isdigit() for u in self.used) and cand not in self.used:
                self.used.add(cand)
                return cand

    def choice(self, wish: str, values: tuple[Any, ...]) -> str:
        name = self.fresh(wish)
        self.choices[name] = values
        return name


def _name_dims(args: list[Arg], names: _Names) -> None:
    """Fresh dims per tensor dimension (a letter per tensor, numbered by dimension; for a tensor list a letter
    per dimension, numbered by element) and per SymInt; the choices the arguments read."""
    dtype_choice = None
    for a in args:
        if a.kind == "tensor":
            letter = names.letter()
            a.dims = [f"{letter}{i}" for i in range(a.rank)]
            if a.dtype == "float32":
                dtype_choice = dtype_choice or names.choice("dtype", ("float32",))
                a.dtype = dtype_choice
            if a.optional:
                a.choice = (True, False)
                a.value = names.choice(f"has_{a.name}", a.choice)
        elif a.kind == "tensors":
            letters = [names.letter() for _ in range(a.rank)]
            a.value = names.choice("n", (2,))
            a.shapes = ["(" + ", ".join(f"{x}{j}" for x in letters) + ("," if a.rank == 1 else "") + ")"
                        for j in range(2)]
            a.dims = [f"{x}{j}" for j in range(2) for x in letters]
            if a.dtype == "float32":
                dtype_choice = dtype_choice or names.choice("dtype", ("float32",))
                a.dtype = dtype_choice
        elif a.symbolic and a.kind == "int":
            a.dims = [names.fresh(a.name)]
        elif a.symbolic and a.kind == "ints":
            a.dims = [names.fresh(f"{a.name}{i}") for i in range(a.rank)]
        elif a.choice is not None and a.kind in ("int", "bool"):
            a.value = names.choice(a.name, a.choice)


@dataclass
class Traced:
    """What the symbolic trace of the sample case gave the draft."""

    outputs: list[str | None] = field(default_factory=list)  # None: unspecified
    requires: list[tuple[str, str]] = field(default_factory=list)  # (expression, why)
    todos: list[str] = field(default_factory=list)
    # per output: what else the trace says of it (dtype, layout or strides, data-dependent sizes), or None
    tables: list[dict[str, Any] | None] = field(default_factory=list)
    # every case traced: a path per group of cases with the same outputs (the first one's lists are ``outputs``,
    # ``tables`` and ``todos`` themselves); fewer than two: one path, ``outputs``
    paths: list[DraftPath] = field(default_factory=list)


def trace_draft(op_name: str, text: str, args: list[Arg]) -> Traced:
    """Trace the installed kernel on the skeleton's first case, assuming each dim equality a guard asks for
    (and, for another guard, the side that holds at the sample sizes, with a TODO), up to 8 traces; then every
    other case (up to ``draft_paths.MAX_CASES``), so that cases with other outputs get paths of their own."""
    from ..kernel.load import installed_kernel

    contract = _must_load(text)
    cases = list(contract.cases())
    case = cases[0]
    out = Traced()
    try:
        kernel = installed_kernel(op_name)
    except TargetError as err:
        from .._torch import audit as CA
        from .._torch import core as C2
        from .run import audit_kernel

        if not CA.fake_reachable(C2.resolve_op(op_name)):
            out.todos.append(f"the outputs: no meta kernel to trace ({err})")
            return out
        kernel = audit_kernel(op_name, None)  # a FakeTensor rule or a C++ kernel FakeTensorMode reaches
    finished = _trace_one(kernel, case, contract, args, out)
    if len(cases) > MAX_CASES or not finished:
        if len(cases) > 1:
            out.todos.append(f"traced on the case {case.id}; other cases may return other shapes (verify reports "
                             f"where: {RuleCode.OUTPUT_SHAPE_MISMATCH}): give them their own [[paths]] with a `when` "
                             "over the choices")
        return out
    first_requires = set(out.requires)

    def finished_case(other: Any) -> CaseOutputs | None:
        t = Traced()
        if not _trace_one(kernel, other, contract, args, t) or not set(t.requires) <= first_requires:
            return None
        return t.outputs, t.tables, t.todos

    out.paths, unfinished = draft_paths((out.outputs, out.tables, out.todos), cases, finished_case)
    if unfinished:
        out.todos.append(f"{len(unfinished)} case(s) could not be traced to the end ({', '.join(unfinished[:3])}"
                         f"{', ...' if len(unfinished) > 3 else ''}): they stay on the first path; verify reports "
                         f"where they return other shapes ({RuleCode.OUTPUT_SHAPE_MISMATCH})")
    return out


def _trace_one(kernel: Any, case: Any, contract: Any, args: list[Arg], out: Traced) -> bool:
    """One case traced into ``out`` (outputs, requires, TODOs); whether the kernel finished."""
    from .._torch import core as C
    from ..findings import SourceLoc
    from ..trace.run import Failed, Finished, Guarded, trace_case

    point = {d: (SYMINT_SIZE if a.symbolic and a.kind == "int" else TENSOR_SIZE) for a in args for d in a.dims}
    assumptions: list[E.Node] = []

    def where(loc: SourceLoc | None) -> str:
        own = loc is not None and (loc.file in kernel.located_in or loc.file.startswith(C.TORCH_DIR))
        return f" at {Path(loc.file).name}:{loc.line}" if own else ""

    taken: tuple[int, E.Node, str] | None = None  # the last branch followed at the sample sizes, and its TODO
    for _ in range(8):
        try:
            t = trace_case(kernel, case, assumptions)
        except C.AssumptionRejected as why:  # torch finds the sides assumed so far empty
            out.todos.append(f"the outputs: torch refuses the region assumed for the sample case ({why})")
            return False
        if isinstance(t, Finished):
            _checked_fallbacks(kernel, case, contract, assumptions, t, out, where)
            _finish(out, t, contract, where)
            return True
        if isinstance(t, Failed):
            if taken is None:
                out.todos.append(f"the outputs: the kernel raised {t.error}{where(t.loc)} on the sample case")
                return False
            # the side the sample sizes took ends in an error: the branch is the kernel's check of its inputs,
            # and the other side is what the op demands (``grid last dimension must be 2``)
            at, side, todo = taken
            taken = None
            other = E.negate(side)
            out.todos.remove(todo)
            out.requires.append((_ordered(other, contract), f"the kernel raises {t.error.splitlines()[0][:120]}"
                                 f"{where(t.loc)} otherwise"))
            assumptions = [*assumptions[:at], other]
            for name, value in _fixed_by(other).items():  # the sample sizes move with it: later sides follow
                point[name] = value
            continue
        assert isinstance(t, Guarded)
        if t.guard is None or t.is_specialization:
            out.todos.append(f"the outputs: the kernel needs the value of {t.guard_raw}{where(t.loc)}")
            return False
        if _is_dim_equality(t.guard):
            out.requires.append((_ordered(t.guard, contract), f"the kernel guards on these being equal{where(t.loc)}; "
                                 "the sample run took them equal"))
            assumptions.append(t.guard)
            continue
        holds = bool(E.evaluate(t.guard, point))
        side = t.guard if holds else E.negate(t.guard)
        todo = (f"the kernel branches on {E.to_text(t.guard)}{where(t.loc)}: the path below follows "
                f"{E.to_text(side)} (the sample sizes); give the other side its own [[paths]] (or fix the "
                f"branch: shapecheck verify reports it as {RuleCode.GUARD_ON_DYNAMIC_DIM})")
        out.todos.append(todo)
        taken = (len(assumptions), side, todo)
        assumptions.append(side)
    out.todos.append("the outputs: more than 8 guards on the sample case")
    return False


def _checked_fallbacks(kernel: Any, case: Any, contract: Any, assumptions: list[E.Node], t: Any, out: Traced,
                       where: Any) -> None:
    """A guard_or_false/guard_or_true the trace answered (``guard_or_false(index >= size)`` in select's fake) whose
    other side makes the kernel raise is a check of its inputs: the side assumed becomes a requires, as a
    branch into an error does (``index < A0``). One trace per such answer, at most four."""
    from .._torch import core as C
    from ..trace.run import Failed, trace_case

    for fb in [f for f in t.fallbacks if f.guard is not None and not f.data_dependent][:4]:
        assumed = fb.guard if fb.value else E.negate(fb.guard)
        try:
            other = trace_case(kernel, case, [*assumptions, E.negate(assumed)])
        except C.AssumptionRejected:  # the other side has no point: nothing to demand
            continue
        if isinstance(other, Failed) and not other.missing_name:
            text = _ordered(assumed, contract)
            if text not in {r for r, _ in out.requires}:
                out.requires.append((text, f"the kernel raises {other.error.splitlines()[0][:120]}{where(other.loc)} "
                                           "otherwise"))


def _fixed_by(node: E.Node) -> dict[str, int]:
    """``{B3: 2}`` for ``B3 == 2`` (either way round); {} for anything else."""
    if isinstance(node, E.Cmp) and node.op == "==":
        for a, b in ((node.left, node.right), (node.right, node.left)):
            if isinstance(a, E.Var) and isinstance(b, E.Const) and isinstance(b.value, int):
                return {a.name: b.value}
    return {}


def _is_dim_equality(node: E.Node) -> bool:
    return isinstance(node, E.Cmp) and node.op == "==" and bool(E.free_names(node.left)) \
        and bool(E.free_names(node.right))


def _finish(out: Traced, t: Any, contract: Any, where: Any) -> None:
    from ..trace.run import OutputKind, exprs_dims

    fresh = {name: (lo, hi) for name, lo, hi in t.fresh}
    for o in t.outputs:
        if o.kind is OutputKind.TENSOR:
            shape, sizes = _named_sizes(o.shape, contract, fresh, out, _fresh_bounds(t.fresh_facts))
            out.outputs.append(shown_shape(shape))
            out.tables.append(_table(o, shape, sizes, contract))
            continue
        if o.kind is OutputKind.INT and not (E.free_names(o.scalar) - set(contract.dim_names)):
            out.outputs.append(o.formula)
            out.tables.append(None)
            continue
        out.outputs.append(None)
        out.tables.append(None)
        made = o.exprs is not None and not exprs_dims(o.exprs) <= set(contract.dim_names)
        what = "a data-dependent size the kernel made (no dim can name it)" if made else \
            "a size outside the contract language" if o.kind is OutputKind.UNSUPPORTED else f"a {o.text}"
        out.todos.append(f"output {len(out.outputs) - 1} is {what}: left unspecified")
    seen = {r for r, _ in out.requires}
    facts = [(part, where(a.loc)) for a in t.asserts if a.expr is not None for part in _conjuncts(a.expr)]
    facts += [(E.compare("==", E.Var(n), node), "") for n, node, _ in t.replacements if node is not None]
    for node, at in facts:
        text = _ordered(node, contract)
        if text not in seen and not _holds_at_corners(node, contract):
            seen.add(text)
            why = f"the kernel needs these equal{at}" if _is_dim_equality(node) else f"the kernel asserts this{at}"
            out.requires.append((text, why))


def shown_shape(shape: E.Node) -> str:
    from ..logic.simplify import shown

    return shown(shape)


def _fresh_bounds(facts: tuple[E.Node | None, ...]) -> dict[str, tuple[list[E.Node], list[E.Node]]]:
    """What the kernel asserted of each data-dependent size in terms of the dims: ``?u2`` -> (its lower bounds,
    its upper bounds), from facts ``minlength <= ?u2``, ``?u2 <= N`` (either way round, ``<`` too)."""
    out: dict[str, tuple[list[E.Node], list[E.Node]]] = {}
    flip = {"<=": ">=", "<": ">", ">=": "<=", ">": "<", "==": "=="}
    for fact in facts:
        for part in _conjuncts(fact) if fact is not None else []:
            if not isinstance(part, E.Cmp) or part.op not in flip:
                continue
            for var, op, other in ((part.left, part.op, part.right), (part.right, flip[part.op], part.left)):
                if not isinstance(var, E.Var) or not var.name.startswith("?") \
                        or any(n.startswith("?") for n in E.free_names(other)):
                    continue
                lows, highs = out.setdefault(var.name, ([], []))
                if op in (">=", "=="):
                    lows.append(other)
                if op == ">":
                    lows.append(E.arith("+", other, E.Const(1)))
                if op in ("<=", "=="):
                    highs.append(other)
                if op == "<":
                    highs.append(E.arith("-", other, E.Const(1)))
    return out


def _named_sizes(shape: E.TupleE, contract: Any, fresh: dict[str, tuple], out: Traced,
                 stated: dict[str, tuple[list[E.Node], list[E.Node]]] | None = None) -> tuple[E.TupleE, dict]:
    """The shape with each data-dependent size (``?u2``, which no contract can name) renamed ``n``, ``n_1``, ...,
    and the ``sizes`` table entry of each: the fake's range for it (min 0 and the int32 top where it states
    none, with a TODO: the runtime's range is the contract's to state), narrowed by the bounds the kernel
    asserts in the dims (``stated``: ``torch._check(n <= x.shape[0])`` gives ``max = "min(2147483647, N)"``)."""
    made = sorted(n for n in E.free_names(shape) if n.startswith("?"))
    if not made:
        return shape, {}
    taken = set(contract.dim_names) | {n for n, _ in contract.choices} | {a.name for a in contract.args}
    known = set(contract.dim_names) | {n for n, _ in contract.choices}
    renames, sizes = {}, {}
    for m in made:
        name = next(c for c in ("n", *(f"n_{i}" for i in range(1, 100))) if c not in taken and c not in renames.values())
        renames[m] = name
        lo, hi = fresh.get(m, (None, None))
        lows, highs = (stated or {}).get(m, ([], []))
        low = [E.Const(lo if lo is not None else 0), *(x for x in lows if E.free_names(x) <= known)]
        high = [E.Const(hi if hi is not None else 2**31 - 1), *(x for x in highs if E.free_names(x) <= known)]
        sizes[name] = (_bound("max", low), _bound("min", high))
        out.todos.append(f"the output size {name} depends on the tensors' data: its range in `sizes` is the fake's "
                         "(or 0 to 2**31-1); give the runtime's")
    return E.bind(shape, {m: E.Var(n) for m, n in renames.items()}), sizes


def _bound(fn: str, items: list[E.Node]) -> str:
    """``max(1, minlength)``: the tightest of a size's bounds, as contract text; one bound alone as it is."""
    texts = list(dict.fromkeys(E.to_text(x) for x in items))
    return texts[0] if len(texts) == 1 else f"{fn}({', '.join(texts)})"


def _table(o: Any, shape: E.TupleE, sizes: dict, contract: Any) -> dict[str, Any]:
    """An output's dtype and layout as the trace gives them: ``contiguous`` where its strides are a contiguous
    tensor's at the sample sizes, else its strides where they translate."""
    table: dict[str, Any] = {"dtype": o.dtype}
    if o.strides is not None and not sizes:
        # two points, the dims rising and falling: an output dim that is 1 at one (``ceil(A0 / step)`` with the
        # step past A0) hides its stride there
        names = contract.dim_names
        points = [{d: TENSOR_SIZE + i for i, d in enumerate(names)},
                  {d: TENSOR_SIZE + len(names) - i for i, d in enumerate(names)}]
        try:
            contiguous = all(_contiguous_at(shape, o.strides, point) for point in points)
        except Exception:  # noqa: BLE001 - undefined at a sample point: no layout stated
            return table
        if contiguous:
            table["layout"] = "contiguous"
        else:
            table["strides"] = shown_shape(E.TupleE(tuple(o.strides)))
    if sizes:
        table["sizes"] = sizes
    return table


def _contiguous_at(shape: E.TupleE, strides: Any, point: dict[str, int]) -> bool:
    """Whether the strides are a contiguous tensor's at ``point`` (where a dim is over 1: the others' strides
    do not matter)."""
    dims = [E.evaluate(x, point) for x in shape.items]
    have = [E.evaluate(x, point) for x in strides]
    expected, acc = [], 1
    for d in reversed(dims):
        expected.insert(0, acc)
        acc *= max(int(d), 1)
    return all(s == e for s, e, d in zip(have, expected, dims) if d > 1)


def _conjuncts(node: E.Node) -> list[E.Node]:
    return [p for a in node.args for p in _conjuncts(a)] if isinstance(node, E.And) else [node]


def _ordered(node: E.Node, contract: Any) -> str:
    """``a == b`` with the dim declared first on the left (``A1 == B0``, not ``B0 == A1``)."""
    if isinstance(node, E.Cmp) and node.op == "==" and isinstance(node.left, E.Var) and isinstance(node.right, E.Var):
        order = contract.dim_names
        if node.left.name in order and node.right.name in order \
                and order.index(node.right.name) < order.index(node.left.name):
            return f"{node.right.name} == {node.left.name}"
    return E.to_text(node)


def _holds_at_corners(node: E.Node, contract: Any) -> bool:
    """Whether ``node`` holds at every corner of its dims' ranges: a bound the ranges already give (left out of
    the draft to keep it short; verify proves what is left either way)."""
    dims = sorted(E.free_names(node))
    if len(dims) > 10 or any(d not in contract.dim_names for d in dims):
        return False
    bounds = [(contract.dim(d).min, contract.dim(d).max) for d in dims]
    try:
        return all(E.evaluate(node, dict(zip(dims, corner))) for corner in itertools.product(*bounds))
    except (ExprError, ArithmeticError):  # undefined at a corner (a division by a dim that may be 0)
        return False


def _load_text(text: str) -> Any:
    from ..contract.load import load_contract

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "draft.toml"
        path.write_text(text, encoding="utf-8")
        return load_contract(path)


def _must_load(text: str) -> Any:
    from ..errors import ContractError

    try:
        return _load_text(text)
    except ContractError as err:  # the draft is ours: one that does not load is a bug in shapecheck
        raise InternalError(f"the draft does not load: {err}") from err
