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

from ..errors import InternalError, TargetError, UserError
from ..logic import expr as E
from ..rules import RuleCode
from .draft import schema_text
from .draft_outputs import Traced
from .draft_paths import MAX_CASES, CaseOutputs, draft_paths
from .draft_samples import SYMINT_SIZE, TENSOR_SIZE, int_sample, sample_ranks
from .inputs import constant_int

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


#: where a draft's given ranks come from: they stand, whatever a sample call would give
GIVEN_RANKS = ("--rank", "the audit's example call")


def draft_contract(op_name: str, ranks: dict[str, int] | None = None, *, trace: bool = True,
                   notes: list[str] | tuple[str, ...] = (), rank_source: str = "--rank") -> str:
    """A starting contract for ``op_name`` (``ns::name[.overload]``, registered in this process) as TOML text.
    ``ranks``: the rank of a tensor argument (or the length of a SymInt[] / Tensor[] one), by name. ``notes``:
    comment lines for the head (``audit --draft`` gives the audit's findings there); ``rank_source``: where
    ``ranks`` come from, for the comments (one of ``GIVEN_RANKS``)."""
    from .._torch import core as C
    from .._torch import schema as CL
    from ..contract.find import normalize_op

    try:
        name = normalize_op(op_name)
    except ValueError:
        raise TargetError(f"unknown op {op_name!r}: not an op name (expected ns::name[.overload])") from None
    op = C.resolve_op(name)
    if not CL.op_return_types(op):  # a contract's paths state outputs, at least one: no draft could load
        raise UserError(f"{name}: nothing to draft: the op returns nothing ({CL.schema_text(op)}), and a contract "
                        "states the shapes of an op's outputs (its guards are checked through an op that returns them)")
    schema = CL.schema_arguments(op)
    ranks = dict(ranks or {})
    unknown = sorted(set(ranks) - {n for n, *_ in schema})
    if unknown:
        raise UserError(f"--rank {unknown[0]}: {name} has no argument {unknown[0]!r} (its arguments: "
                        f"{', '.join(n for n, *_ in schema)})")
    args = [plan_arg(n, t, kw, has, default, ranks.get(n)) for n, t, kw, has, default in schema]
    for a in args:
        if ranks.get(a.name) is not None:
            a.rank_from = rank_source
    for a in args:
        if ranks.get(a.name) is not None and a.kind not in ("tensor", "tensors", "ints"):
            raise UserError(f"--rank {a.name}={ranks[a.name]}: the schema says {a.name} is {a.type}, which has "
                            "no rank")
    sample_ranks(op, args)
    eager = _eager_sample(name, op, args)
    names = _Names(args)
    _name_dims(args, names)
    if not any(a.dims for a in args):
        zero_d = [a.name for a in args if a.kind in ("tensor", "tensors")]
        takes = (f"its only tensor argument{'s' if len(zero_d) > 1 else ''} ({', '.join(zero_d)}) "
                 f"{'are' if len(zero_d) > 1 else 'is'} 0-d in the draft's sample call, and it takes "
                 "no SymInt argument") if zero_d else "it takes no tensor and no SymInt argument"
        raise UserError(f"{name}: nothing to draft: {takes}, so no size of its call is symbolic, and a contract's "
                        "sizes are its [dims] (its int arguments would be [choices], checked one value at a time)")
    head = f"# Drafted by `shapecheck contract draft {name}` from the schema in torch {C.TORCH_VERSION}:\n" \
           f"#   {CL.schema_text(op)}\n" + "".join(f"# {n}\n" for line in notes for n in line.splitlines())
    text = schema_text(name, args, names, head, Traced())
    lists = any(a.kind == "tensors" for a in args)
    if lists and not _loads(text):  # a shapecheck without tensor lists: the text, for a later one to load
        return schema_text(name, args, names, head, Traced(todos=[
            "the outputs: this shapecheck cannot load `kind = \"tensors\"` yet, so the kernel was not traced"]))
    kernel, missing = _draft_kernel(name) if trace else (None, "")
    traced = trace_draft(name, text, args, kernel, missing) if trace else \
        Traced(todos=["the outputs: not traced (--no-trace)"])
    if trace and eager:
        _eager_contradictions(name, args, names, traced)
    final = schema_text(name, args, names, head, traced)
    if trace:  # the eager kernel on every path and case; then the paths no case can take, the requires implied
        from .draft_eager import eager_paths, prune_paths, prune_requires, refused_cases

        def inputs_at(values: Any) -> Any:
            return _call_inputs(name, args, names, TENSOR_SIZE, values)[0]

        contract = _must_load(final)  # the checks read its paths, cases and dims, which they leave as they are
        changed = eager and eager_paths(name, contract, inputs_at, traced)
        changed = (eager and refused_cases(name, contract, inputs_at, traced)) or changed
        changed = prune_paths(contract, traced) or changed
        changed = prune_requires(contract, traced) or changed
        if eager and kernel is not None:  # the requires the kernels' checks gave, as [[rejects]] both kernels refuse
            from .draft_rejects import reject_regions

            changed = reject_regions(name, lambda t: schema_text(name, args, names, head, t), _load_text, inputs_at,
                                     traced, kernel) or changed
        if changed:
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


# An optional scalar with no default is None (div's rounding_mode: no empty string is a mode); an optional list
# with no default is given, and absent once the eager kernel takes a sample without it (upsample's output_size).
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
    absent = optional and (default is None if has_default else not is_list)  # an optional list: _eager_sample
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
    if base == "SymInt" and constant_int(name):  # an axis, a permutation: a constant, as the audit calls it
        base = "int"
    if base in ("int", "SymInt") and is_list:
        return _ints(a, base == "SymInt", int(size) if size else None, has_default, default, rank)
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


def _ints(a: Arg, symbolic: bool, n: int | None, has_default: bool, default: Any, rank: int | None) -> Arg:
    """``plan_arg`` of an int list: a SymInt list's rank (its dims are sizes), else its value (of ``n`` entries
    where the schema states them)."""
    a.kind, a.symbolic = "ints", symbolic
    if symbolic:
        a.rank = rank if rank is not None else n
        if n is not None:
            a.rank_from = "the schema"
    else:
        a.value = list(default) if has_default and isinstance(default, (list, tuple)) else \
            _int_list(a.name, rank if rank is not None else n or 2)
        if not has_default:
            a.todo = "the values to check"
    return a


# ---------------------------------------------------------------------------------------------------------
# The eager kernel: a sample it accepts, and the formulas it contradicts


def _int_list(name: str, count: int) -> list[int]:
    """A sample int[]: a list of dims takes distinct ones (flip, fft: a repeated dim is refused), another list
    one value."""
    return list(range(count)) if "dim" in name else [int_sample(name)] * count


def _call_inputs(name: str, args: list[Arg], names: Any, size: int,
                 values: Any = None) -> tuple[Any, dict[str, int]]:
    """The draft's sample call as audit inputs (``OpInputs``) with every tensor dim and SymInt[] entry at
    ``size`` and every SymInt at SYMINT_SIZE, and that point in the draft's dim names. ``values``: a case's
    choice values (the first of each choice where not given)."""
    from .inputs import OpInputs

    choices = getattr(names, "choices", {}) if names is not None else {}
    values = values or {}

    def concrete(v: Any) -> Any:
        if isinstance(v, str) and v in values:
            return values[v]
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
    if worker().call(name, inputs, point).ok or any(a.rank_from in GIVEN_RANKS for a in args):
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
        if a.kind == "tensor" and t == ("const", None) and a.rank_from not in GIVEN_RANKS:
            a.todo = (f"the eager kernel accepted a call without {a.name} (None); no call with it was found, so its "
                      "rank and its sizes' relation to the others are the fake's guess: check them with "
                      "`shapecheck ref check`")
        elif a.kind == "tensor" and t[0] == "tensor" and a.rank_from not in GIVEN_RANKS:
            a.rank, a.dtype, a.rank_from = len(t[1]), t[3], "a sample the eager kernel accepts"
            if a.todo.startswith("the rank:"):  # the sample call at equal sizes ran nowhere; this one did
                a.todo = ""
        elif a.kind == "dtype" and t[0] == "dtype":
            a.value = t[1]
        elif a.kind in ("int", "str", "float") and not a.symbolic and t[0] == "const" and t[1] is not None:
            a.value, a.choice = t[1], ((t[1],) if a.kind == "int" else None)
        elif a.kind in ("ints", "floats") and not a.symbolic and t[0] == "const" and isinstance(t[1], (list, tuple)):
            a.value = list(t[1])  # the list's length is the sample's (upsample's scale_factors: one per spatial dim)
        elif a.kind in ("ints", "floats", "int", "float", "str") and "?" in a.type and t == ("const", None):
            a.kind, a.value, a.choice, a.symbolic = "none", None, None, False
            a.todo = f"{a.type}: the kernel gets None, as in a sample the eager kernel accepts; give kind and " \
                     "value to pass one"
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


def trace_draft(op_name: str, text: str, args: list[Arg], kernel: Any, missing: str) -> Traced:
    """Trace the installed kernel on the skeleton's first case, assuming each dim equality a guard asks for
    (and, for another guard, the side that holds at the sample sizes, with a TODO), up to 8 traces; then every
    other case (up to ``draft_paths.MAX_CASES``), so that cases with other outputs get paths of their own.
    ``kernel``: ``_draft_kernel``'s; where there is none, ``missing`` says why."""
    contract = _must_load(text)
    cases = list(contract.cases())
    case = cases[0]
    out = Traced()
    if kernel is None:
        out.todos.append(f"the outputs: no meta kernel to trace ({missing})")
        return out
    finished = _trace_one(kernel, case, contract, args, out)
    if len(cases) > MAX_CASES or not finished:
        if len(cases) > 1:
            out.todos.append(f"traced on the case {case.id}; other cases may return other shapes (verify reports "
                             f"where: {RuleCode.OUTPUT_SHAPE_MISMATCH}): give them their own [[paths]] with a `when` "
                             "over the choices")
        return out
    first_requires = set(out.requires)
    own: dict[str, set[str]] = {}  # each case traced to the end: its own requires

    def finished_case(other: Any) -> CaseOutputs | None:
        t = Traced()
        if not _trace_one(kernel, other, contract, args, t, out.regions, out.flat) or not set(t.requires) <= first_requires:
            return None
        own[other.id] = {r for r, _ in t.requires}
        return t.outputs, t.tables, t.todos, t.sides

    out.paths, unfinished = draft_paths((out.outputs, out.tables, out.todos, out.sides), cases, finished_case)
    if not out.regions:  # each case walked its own sides: a requires it lacks may be the first case's alone
        from .draft_sides import scope_requires

        scope_requires(kernel, contract, cases, out, own, _sample_point(args))
    if unfinished:
        out.todos.append(f"{len(unfinished)} case(s) could not be traced to the end ({', '.join(unfinished[:3])}"
                         f"{', ...' if len(unfinished) > 3 else ''}): they stay on the first path; verify reports "
                         f"where they return other shapes ({RuleCode.OUTPUT_SHAPE_MISMATCH})")
    return out


def _draft_kernel(op_name: str) -> tuple[Any, str]:
    """The kernel a draft traces, and checks its regions on: the installed meta kernel, else the FakeTensor rule
    or C++ kernel FakeTensorMode reaches; (None, why) where there is none."""
    from ..kernel.load import installed_kernel

    try:
        return installed_kernel(op_name), ""
    except TargetError as err:
        from .._torch import audit as CA
        from .._torch import core as C2
        from .run import audit_kernel

        if not CA.fake_reachable(C2.resolve_op(op_name)):
            return None, str(err)
        return audit_kernel(op_name, None), ""


def _trace_one(kernel: Any, case: Any, contract: Any, args: list[Arg], out: Traced,
               regions: list[tuple[str, list[E.Node]]] | None = None, flat: bool = False) -> bool:
    """One case traced into ``out`` (outputs, requires, TODOs, and its sides where the kernel branches on its
    sizes: ``draft_sides``); whether the kernel finished on the sample's side. ``regions``: the first case's
    sides, traced once each."""
    from .draft_sides import explore_case

    return explore_case(kernel, case, contract, _sample_point(args), out, regions, flat)


def _sample_point(args: list[Arg]) -> dict[str, int]:
    """The sample sizes of the draft's dims: a SymInt's and a tensor dim's."""
    return {d: (SYMINT_SIZE if a.symbolic and a.kind == "int" else TENSOR_SIZE) for a in args for d in a.dims}


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
