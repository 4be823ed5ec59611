"""The fake against the eager kernel, with no contract (issue 23, item 3).

On one op's inputs, at drawn points (the example; every dim at 0, at 1 and past the example; both sides of every
guard the symbolic trace saw), the fake runs under FakeTensorMode at concrete sizes (in this process) and the
eager kernel on real tensors (in the worker, ``audit.eager``). Their results are compared: which side raises,
the number and kind of outputs, each tensor's shape, dtype, device and significant strides (of dims of size > 1),
and non-tensor values. Each disagreement is a finding with its point. Then the symbolic trace's output formulas
(the finished paths of the exploration, each with its region) are evaluated at every point the eager kernel
accepts and compared with its output shapes: a formula it contradicts is a finding; where they agree at every
point, the record says so, as evidence (not a proof: only those points were run).

Torch-free: results are descriptions (``_torch.audit.describe``), plain data.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..logic import expr as E
from .candidates import NO_EAGER
from .concrete_only import SKIPPED_UNDER_EXPORT, concrete_only, holds
from .eager import in_child
from .inputs import DATA_DEPENDENT, OpInputs, fake_result
from .points import path_formulas

FAKE_CHILD_SECONDS = 20.0


@dataclass
class Disagreement:
    cls: str  # eager-shape | eager-dtype | eager-strides | fake-accepts | fake-rejects | eager-formula
    what: str  # the finding's expression: what differs ("output 1 dtype", "fake returns, eager raises")
    point: dict[str, int]
    detail: str


@dataclass
class DiffResult:
    points: int = 0  # points where both sides ran
    compared: int = 0  # points where both returned (outputs compared)
    formula_points: int = 0  # points where a trace formula was checked against the eager outputs
    disagreements: list[Disagreement] = field(default_factory=list)
    crashes: int = 0
    notes: list[str] = field(default_factory=list)
    lifted: set[str] = field(default_factory=set)  # the eager errors (numbers aside) tried again with dims lifted


def _flat(desc: tuple) -> list[tuple]:
    return list(desc[1]) if desc[0] == "L" else [desc]


def compare(eager: tuple, fake: tuple, device: str = "cpu") -> list[tuple[str, str, str]]:
    """(class, what, detail) for each way the two results differ. ``device``: where the eager kernel's inputs
    were; the fake's inputs are fake tensors on the cpu, so a fake output on the cpu stands for one on the
    eager inputs' device (flash attention's outputs on cuda:0)."""
    out: list[tuple[str, str, str]] = []
    e_items, f_items = _flat(eager), _flat(fake)
    if len(e_items) != len(f_items):
        return [("eager-shape", "output count", f"the eager kernel returns {len(e_items)} outputs, the fake "
                 f"{len(f_items)}")]
    for i, (e, f) in enumerate(zip(e_items, f_items)):
        _compare_one(f"output {i}", e, f, out, device)
    return out


#: a size the fake made from data, with the range torch gave it (``_torch.audit.describe``): ``u0 in [2, inf]``
DATA_RANGE_RE = re.compile(r" in \[(-inf|-?\d+), (inf|-?\d+)\]$")
_ASSERTED = ": outside that range (an exported program asserts it at run time and fails there)"


def _in_data_range(value: object, text: str) -> bool:
    """Whether an eager size or int lies in the range a fake's data-dependent size ``text`` states (true when
    it states none, or the value is no int)."""
    m = DATA_RANGE_RE.search(text)
    if m is None or not isinstance(value, int) or isinstance(value, bool):
        return True
    lo, hi = m.group(1), m.group(2)
    return (lo == "-inf" or value >= int(lo)) and (hi == "inf" or value <= int(hi))


def _place(dev: str, inputs_on: str) -> str:
    """A device relative to the inputs': ``inputs`` when of the inputs' device type, else itself."""
    return "inputs" if dev.split(":")[0] == inputs_on.split(":")[0] else dev


def _compare_one(where: str, e: tuple, f: tuple, out: list, device: str = "cpu") -> None:
    kinds = {"T": "a tensor", "N": "None", "L": "a list", "V": "a value"}
    if e[0] != f[0]:
        out.append(("eager-shape", f"{where} kind", f"the eager kernel returns {kinds[e[0]]}, the fake {kinds[f[0]]}"))
        return
    if e[0] == "L":
        if len(e[1]) != len(f[1]):
            out.append(("eager-shape", f"{where} length", f"the eager kernel returns {len(e[1])} items, the fake "
                        f"{len(f[1])}"))
            return
        for j, (a, b) in enumerate(zip(e[1], f[1])):
            _compare_one(f"{where}[{j}]", a, b, out, device)
        return
    if e[0] == "V":
        if e[1] != f[1] and not isinstance(f[1], str):
            out.append(("eager-shape", f"{where} value", f"the eager kernel returns {e[1]!r}, the fake {f[1]!r}"))
        elif isinstance(f[1], str) and not _in_data_range(e[1], f[1]):
            out.append(("eager-shape", f"{where} value", f"the eager kernel returns {e[1]!r}; the fake's value is made "
                        f"from data, {f[1]}{_ASSERTED}"))
        return
    if e[0] == "N":
        return
    _, es, ed, est, edev, *ea = e
    _, fs, fd, fst, fdev, *fa = f
    # a view of an input on one side, a tensor of its own on the other; an empty output has no element a write
    # could share (torch's .contiguous() returns an empty input itself, whatever its strides)
    if ea and fa and ea[0] != fa[0] and all(a != 0 for a in es):
        def said(names: tuple[str, ...]) -> str:
            return f"a view of {', '.join(names)} (it shares the storage)" if names else "a tensor of its own"
        out.append(("eager-alias", f"{where} aliasing", f"the eager kernel returns {said(ea[0])}, the fake "
                    f"{said(fa[0])}"))
    same_shape = len(es) == len(fs) and all(isinstance(b, str) or a == b for a, b in zip(es, fs))
    if not same_shape:
        out.append(("eager-shape", f"{where} shape", f"the eager kernel returns {list(es)}, the fake "
                    f"{[b if not isinstance(b, str) else '?' for b in fs]}"))
    else:
        outside = [(i, a, b) for i, (a, b) in enumerate(zip(es, fs)) if isinstance(b, str) and not _in_data_range(a, b)]
        for i, a, b in outside[:1]:
            out.append(("eager-shape", f"{where} shape", f"the eager kernel returns {list(es)}: size {a} in dim {i}, "
                        f"where the fake's size is made from data, {b}{_ASSERTED}"))
    if ed != fd:
        out.append(("eager-dtype", f"{where} dtype", f"the eager kernel returns {ed}, the fake {fd}"))
    if _place(edev, device) != _place(fdev, "cpu"):
        out.append(("eager-dtype", f"{where} device", f"the eager kernel returns a tensor on {edev}, the fake on "
                    f"{fdev}"))
    # an empty output has no element to address: no stride of it is significant (torch's is_contiguous is
    # true of every empty tensor), so a CUDA kernel's layout of a 0-batch output is not compared
    empty = any(a == 0 for a in es)
    if same_shape and not empty and est is not None and fst is not None and not any(isinstance(s, str) for s in fs):
        if any(a is not None and b is not None and a != b for a, b in zip(est, fst)):
            out.append(("eager-strides", f"{where} strides", f"{where}: the eager kernel's strides {list(est)}, the fake's "
                        f"{list(fst)} (shape {list(es)}; dims of size 1 do not count)"))


DATA_WORDS = ("out of bounds", "out of range", "IndexError", "index ", "nan", "inf ", "non-negative",
              "must be positive", "must be sorted", "must be in range", "must be in the range", "all elements of",
              "positive-definite", "required size", "ZeroDivisionError", "division by zero")
#: an eager error with data words that is about an argument, not the data: a dim past the rank (``maybe_wrap_dim``),
#: two tensors' sizes ("put_(): Expected source and index to have the same number of elements", hunt 51)
ARGUMENT_ERRORS = ("Dimension out of range", "the same number of elements")
#: an eager error that says the machine ran out of memory: no check of the op's (hunt 64: a 2048**3 variant)
MEMORY_WORDS = ("can't allocate memory", "Cannot allocate memory", "out of memory", "MemoryError")


def about_data(error: str, inputs: OpInputs | None = None) -> bool:
    """Whether an eager error is about the tensors' values (made-up data), not the call's sizes or arguments. An
    error that names one of the call's arguments that is no tensor ("num_heads must be positive, got 0": hunt 48's
    int argument at 0) is about that argument."""
    if not any(w in error for w in DATA_WORDS) or any(w in error for w in ARGUMENT_ERRORS):
        return False
    return inputs is None or not any(
        len(name) > 2 and tree[0] in ("sym", "const") and re.search(rf"\b{re.escape(name)}\b", error)
        for name, _, tree in inputs.args)


def run(op_name: str, call: Callable[..., Any], inputs: OpInputs, points: list[dict[str, int]],
        eager: Callable[[OpInputs, dict[str, int]], Any], paths: list[dict] | None = None,
        requires: list[E.Node] = (), device: str = "cpu",
        returned: Sequence[tuple[list[E.Node], list[E.Node]]] = (), zeros: bool = False) -> DiffResult:
    """Fake and eager at each point (the eager kernel's inputs on ``device``); their disagreements, and the trace's formulas checked at each point (where
    the inferred ``requires``, which the symbolic trace assumed, hold).

    Where the fake returns and the eager kernel raises, it is a finding only at a point with no dim at 0 and an
    error that is not about the tensors' values (an index out of range on made-up data): an eager kernel that
    rejects empty inputs, or the data made up for it, is noted, not reported."""
    res = DiffResult()
    generated_ok = True
    if inputs.blobs:  # a sample's own tensors: are tensors made here valid for the eager kernel too?
        control = eager(replace(inputs, blobs=()), points[0])
        generated_ok = control.ok
        if not generated_ok:
            res.notes.append(f"the eager kernel rejects made-up data at the sample's sizes ({control.error}): the "
                             "eager kernel's errors at other sizes are not findings")
    formulas = path_formulas(paths or [])
    agreed = 0
    both_crash: list[tuple[dict[str, int], str]] = []  # points where the fake dies with the eager kernel
    lifts = MAX_LIFTS  # empty points whose mismatch is tried again with their empty dims lifted
    for i, point in enumerate(points):
        e = eager(inputs, point)
        if not e.ok and not e.crashed and any(m in e.error for m in NO_EAGER) and "NotImplementedError" in e.error:
            res.notes.append(f"no eager kernel to compare with: {e.error}")
            return res
        if e.crashed:  # the fake may run that same kernel (FakeTensor's fallback): in a process of its own
            f = in_child(functools.partial(fake_result, call, inputs, point), FAKE_CHILD_SECONDS)
            if f.crashed:
                res.crashes += 1
                both_crash.append((point, f"{e.error}; the fake {f.error}"))
                continue
            f_ok, f_val = f.value
        else:
            f_ok, f_val = fake_result(call, inputs, point)
        res.points += 1
        res.crashes += e.crashed
        if e.ok and f_ok:
            res.compared += 1
            differ = compare(e.value, f_val, device)
            for cls, what, detail in differ:
                res.disagreements.append(Disagreement(cls, what, point, detail))
            # a formula is judged only where the fake at these sizes agrees with the kernel (else SC038 says it)
            skip = {int(w.split()[1]) for c, w, _ in differ if c == "eager-shape" and w.split()[1].isdigit()}
            if any(w == "output count" for _, w, _ in differ):
                skip = set(range(64))
            assumed = all(holds(r, point) for r in requires)
            checked, bad = _check_formulas(formulas, point, e.value, skip) if assumed else (0, [])
            res.formula_points += checked > 0
            agreed += checked > 0 and not bad
            for what, detail in bad:
                res.disagreements.append(Disagreement("eager-formula", what, point, detail))
        elif f_ok and not e.ok and (generated_ok or i == 0):
            lifts -= _fake_accepts(call, inputs, point, points, eager, e, res, lifts > 0)
        elif e.ok and not f_ok and not f_val.startswith(DATA_DEPENDENT):  # a guard on data: the exploration's
            # reported whatever the data: a fake check that is the op's own (transformers' grouped_mm: one offset
            # per expert) and a fake that refuses sizes the op takes (a meta_index_Tensor that raises at 7, whose
            # all-True masks of 7 and 3 then fail to broadcast in the eager kernel) both meet an eager kernel that
            # raises on other integers; the message says so
            res.disagreements.append(Disagreement("fake-rejects", "the fake raises where the eager kernel returns",
                                                  point, f"the fake: {f_val}{zeros_aside(inputs, point, eager)}"))
        elif not e.ok and not e.crashed and not f_ok and not about_data(e.error, inputs) \
                and (why := concrete_only(call, returned, inputs, point, e.error, f_val)) is not None:
            res.disagreements.append(Disagreement("fake-accepts", SKIPPED_UNDER_EXPORT, point, why))
    if both_crash:
        res.notes.append(f"the eager kernel and the fake both kill their process at {len(both_crash)} point"
                         f"{'s' if len(both_crash) > 1 else ''} ({both_crash[0][1]}): "
                         f"{'; '.join(_at(p, points[0]) for p, _ in both_crash)}: the kernel is memory-unsafe on "
                         "these inputs and the fake dies with it, not compared there")
    if formulas and res.formula_points and agreed == res.formula_points and not res.disagreements:
        res.notes.append(f"the fake's symbolic output formulas agree with the eager kernel at all {agreed} points "
                         "checked: evidence, not a proof")
    # ``zeros``: the op's first inputs (once an op: it costs an eager call or two)
    found = _on_zeros_only(inputs, points[0], eager) if zeros and res.compared and not res.disagreements else None
    if found is not None:  # transformers' grouped_mm_fallback_backward: offsets of zeros route no row (hunt 41)
        res.notes.append(f"{ZEROS_ONLY}, and raises with other integers at the same sizes ({found[:160]}): data of zeros may give it no work (offsets, indices), so "
                         "the comparison says little of other data; give the op samples")
    return res


def _fake_accepts(call: Callable[..., Any], inputs: OpInputs, point: dict[str, int], points: list[dict[str, int]],
                  eager: Callable[[OpInputs, dict[str, int]], Any], e: Any, res: DiffResult, lift: bool) -> bool:
    """The fake returned and the eager kernel raised (or died) at ``point``: a disagreement in ``res``, or a note
    where the point is empty or the error is the made-up data's (an empty point tried again with its empty dims
    lifted, where ``lift``). Whether a lift was tried."""
    empty = _empty(inputs, point)  # a tensor dim at 0 (an int argument at 0, a padding, empties nothing)
    # an empty point, even where the eager kernel dies there (a sample's index data that the emptied input no
    # longer holds), is reported only where it dies or raises the same with its empty dims lifted
    if not e.crashed and any(w in e.error for w in MEMORY_WORDS):
        res.notes.append(f"at {_at(point, points[0])} the eager kernel ran out of memory: not compared there")
        return lift
    if empty or (not e.crashed and about_data(e.error, inputs)):
        pattern = numbers_aside(e.error)  # one retry per error: the same refusal at another empty point
        lift = lift and not about_data(e.error, inputs) and pattern not in res.lifted
        res.lifted.add(pattern)
        lifted = _lifted(call, inputs, point, points, eager) if lift else None
        if lifted is not None and lifted[1] is not None and _same_error(lifted[1], e.error):
            # the same mismatch where nothing is empty (another error there may be about the made-up data)
            res.disagreements.append(Disagreement(
                "fake-accepts", "the fake returns where the eager kernel raises", lifted[0],
                f"the eager kernel: {lifted[1]} (found on an empty input, {_at(point, points[0])}, and here "
                f"with its empty dims at {LIFT})"))
            return True
        why = "an empty input" if empty else "made-up data"
        how = "dies" if e.crashed else "raises"
        said = e.error.removeprefix("the eager kernel ")
        note = f"the fake returns where the eager kernel {how} on {why} ({said}): noted, not reported"
        if note not in res.notes:
            res.notes.append(note)
        return lifted is not None
    # a crash (a signal, not an error) is the eager kernel's own failure to check these inputs as much as a
    # check the fake lacks: said so, so that the fix is looked for on both sides
    either = ("; the eager kernel dies where it could raise: a check is missing there, or in the fake, or both"
              if e.crashed else "")
    how = "crashes" if e.crashed else "raises"
    res.disagreements.append(Disagreement("fake-accepts", f"the fake returns where the eager kernel {how}",
                                          point, f"{_eager_said(e.error)}{either}"))
    return False


def _eager_said(error: str) -> str:
    """An eager error as a finding's detail: "the eager kernel: ERROR", once (a crash's own text names it)."""
    return error if error.startswith("the eager kernel ") else f"the eager kernel: {error}"


#: an empty point where the fake returns and the eager kernel raises is tried again with each dim at 0 at LIFT
#: (at most MAX_LIFTS times an input): the eager kernel's refusal may be about the sizes, not the emptiness
#: (nll_loss's batch sizes, copy_to's shapes), and then the fake lacks a check
LIFT, MAX_LIFTS = 2, 2


def _lifted(call: Callable[..., Any], inputs: OpInputs, point: dict[str, int], points: list[dict[str, int]],
            eager: Callable[[OpInputs, dict[str, int]], Any]) -> tuple[dict[str, int], str | None] | None:
    """(``point`` with its dims at 0 at LIFT, the eager kernel's error there where the fake returns and the
    eager kernel raises for a reason not about the data, else None); None: not tried (a point already drawn)."""
    dims = inputs.tensor_dims()
    lifted = {k: LIFT if v == 0 and k in dims else v for k, v in point.items()}
    if lifted in points:
        return None
    e = eager(inputs, lifted)
    if e.ok or e.crashed or about_data(e.error, inputs) or not fake_result(call, inputs, lifted)[0]:
        return lifted, None
    return lifted, e.error


#: how the note on a comparison made only on integer data of zeros opens (said once for an op)
ZEROS_ONLY = "the eager kernel returned on integer inputs made up as zeros"


def zeros_aside(inputs: OpInputs, point: dict[str, int], eager: Callable[[OpInputs, dict[str, int]], Any]) -> str:
    """What a fake-rejects finding adds where the eager kernel returned only on integer inputs made up as zeros
    (transformers' grouped_mm routes no token with offsets of zeros, hunt 41: its variants said nothing of it)."""
    zeros = _on_zeros_only(inputs, point, eager)
    return "" if zeros is None else (
        f" (the eager kernel returned on integer inputs made up as zeros; with other integers there it raises too, "
        f"{zeros}: the fake's check may be the op's own, met by no data of zeros)")


def _on_zeros_only(inputs: OpInputs, point: dict[str, int],
                   eager: Callable[[OpInputs, dict[str, int]], Any]) -> str | None:
    """The eager kernel's error at ``point`` with the integer tensors made up as zeros made up as ones, then as 0,
    1, 2, ... instead (offsets that route nothing, a loop run zero times: the eager kernel returned on the zeros
    alone); None where there are none or it returns on both."""
    def filled(tree: Any, fill: str) -> Any:
        if isinstance(tree, tuple) and tree and tree[0] == "list":
            return ("list", tuple(filled(t, fill) for t in tree[1]), *tree[2:])
        if isinstance(tree, tuple) and tree and tree[0] == "tensor" and not tree[3].startswith(FLOATING_OR_COMPLEX) \
                and (len(tree) < 5 or tree[4] == "zeros"):
            return (*tree[:4], fill, *tree[5:])
        return tree

    for fill in ("ones", "arange"):  # ones route one row to each group; 0, 1, 2, ... reach the later groups
        args = tuple((n, kw, filled(t, fill)) for n, kw, t in inputs.args)
        if args == inputs.args:
            return None
        e = eager(replace(inputs, args=args), point)
        if not e.ok and not e.crashed:
            return e.error
    return None


FLOATING_OR_COMPLEX = ("float", "bfloat", "complex")  # dtype name prefixes: their values are drawn, not filled


def _empty(inputs: OpInputs, point: dict[str, int]) -> bool:
    dims = inputs.tensor_dims()
    return any(v == 0 for k, v in point.items() if k in dims)


def numbers_aside(error: str) -> str:
    """An error's text with every number as ``#``: one refusal, whatever sizes it names."""
    return re.sub(r"\d+", "#", error)


def _same_error(a: str, b: str) -> bool:
    """The same error, its numbers aside (``size mismatch (target: [2])`` and ``... [0]``)."""
    return numbers_aside(a) == numbers_aside(b)


def _at(point: dict[str, int], example: dict[str, int]) -> str:
    """A point as the dims it moves from the example."""
    moved = [f"{k}={v}" for k, v in point.items() if example.get(k) != v]
    return ", ".join(moved) if moved else "the example"


def _check_formulas(formulas: list, point: dict[str, int], eager: tuple,
                    skip: set[int] = frozenset()) -> tuple[int, list[tuple[str, str]]]:
    """(formulas checked, [(what, detail)] for each the eager outputs contradict) at one point."""
    items = _flat(eager)
    checked, bad = 0, []
    for when, nodes, texts in formulas:
        try:
            if not E.evaluate(when, point):
                continue
        except Exception:  # noqa: BLE001, S112 - undefined at this point (a division by 0): not this path
            continue
        for i, (node, text) in enumerate(zip(nodes, texts)):
            if node is None or i >= len(items) or i in skip:
                continue
            try:
                value = E.evaluate(node, point)
            except Exception:  # noqa: BLE001, S112 - undefined here: nothing to compare
                continue
            got = items[i]
            want = list(value) if isinstance(value, tuple) else value
            have = list(got[1]) if got[0] == "T" else got[1] if got[0] == "V" else None
            if have is None or (isinstance(want, list) and any(isinstance(h, str) for h in have)):
                continue
            checked += 1
            if want != have:
                bad.append((f"output {i} formula {text}", f"the trace's formula {text} gives {want} here; the eager "
                            f"kernel returns {have}"))
        break  # the first path whose region holds: the one the kernel takes here
    return checked, bad
