"""Proofs that do not depend on spelling (issue 22): every output formula of the shipped contracts
(contracts/), of tests/ (every *.toml, and the `outputs = [...]` formulas written inline in tests/**/*.py) and
of docs/examples, each written three equivalent ways, proved in one process.

The spellings are made mechanically from the bound tree (choices substituted), bottom up:

- ``as written``;
- ``into the floor``: ``X // s + c`` -> ``(X + c*s) // s``, ``-((-X) // s)`` -> ``(X + s - 1) // s``,
  ``X % s`` -> ``X - s * (X // s)``, and ``+ 0`` on the whole;
- ``reordered``: every sum and product commuted, ``X - c`` -> ``-c + X``, ``X // s + c`` ->
  ``(c*s + X) // s``, ``(X + s - 1) // s`` -> ``-((-X) // s)``, min/max arguments reversed.

For each formula and spelling, with a fresh solver (verify's timeout, 10 s) and the normal form's cache
emptied, the bench proves (a) the spelling equal to the next spelling under the case's domain and, where the
op's kernel is the installed torch (no import needed), (b) torch's traced output equal to the spelling on
every finished trace of the case (the trace is made once, outside the timing). A formula's verdict per
spelling is the worst of its obligations; its time is their sum in CPU seconds of this process (z3 runs in
it; other processes on a shared machine do not count), the least of ``--repeat`` runs taken in turns. Reported:
whether the three spellings get the same verdict, and the spread of their times (max / min; target <= 2x).
``--raw`` also runs everything with the normal form switched off (z3 given the spellings as written), the
"before" figures.

    .venv/bin/python bench/bench_spelling.py [--repeat N] [--raw] [--no-trace] [--timeout-ms MS]
"""

from __future__ import annotations

import argparse
import contextlib
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from shapecheck.contract.load import load_contract  # noqa: E402
from shapecheck.logic import expr as E  # noqa: E402
from shapecheck.logic import normal as N  # noqa: E402
from shapecheck.logic import solver as S  # noqa: E402
from shapecheck.prove.premises import simplified  # noqa: E402 - verify's simplifier, as make_solver gives it

SPELLINGS = ("as written", "into the floor", "reordered")
_RANK = {S.Outcome.PROVED: "proved", S.Outcome.UNKNOWN: "unknown", S.Outcome.REFUTED: "refuted"}


# ---------------------------------------------------------------------------------------------------------
# Spellings


def _rebuild(n: E.Node, kids: list[E.Node]) -> E.Node:
    if isinstance(n, E.Arith):
        return E.Arith(n.op, *kids)
    if isinstance(n, E.Cmp):
        return E.Cmp(n.op, *kids)
    if isinstance(n, E.Neg):
        return E.Neg(kids[0])
    if isinstance(n, E.Not):
        return E.Not(kids[0])
    if isinstance(n, E.Call):
        return E.Call(n.fn, tuple(kids))
    if isinstance(n, E.And):
        return E.And(tuple(kids))
    if isinstance(n, E.Or):
        return E.Or(tuple(kids))
    if isinstance(n, E.Ite):
        return E.Ite(*kids)
    if isinstance(n, E.TupleE):
        return E.TupleE(tuple(kids))
    return n


def _int(n: E.Node) -> int | None:
    return n.value if isinstance(n, E.Const) and type(n.value) is int else None


def _floor_plus(n: E.Node) -> tuple[E.Node, int, int] | None:
    """``X // s + c`` or ``X // s - c`` (s > 0 constant): (X, s, c)."""
    if isinstance(n, E.Arith) and n.op in "+-" and isinstance(n.left, E.Arith) and n.left.op == "//":
        s, c = _int(n.left.right), _int(n.right)
        if s is not None and s > 0 and c is not None:
            return n.left.left, s, (c if n.op == "+" else -c)
    return None


def _ceil(n: E.Node) -> tuple[E.Node, int] | None:
    """``-((-X) // s)`` (s > 0): (X, s)."""
    if isinstance(n, E.Neg) and isinstance(n.operand, E.Arith) and n.operand.op == "//" \
            and isinstance(n.operand.left, E.Neg) and (_int(n.operand.right) or 0) > 0:
        return n.operand.left.operand, _int(n.operand.right)
    return None


def _into_the_floor(n: E.Node) -> E.Node:
    n = _rebuild(n, [_into_the_floor(k) for k in E.children(n)])
    fp, ce = _floor_plus(n), _ceil(n)
    if fp is not None:
        x, s, c = fp
        return E.Arith("//", E.Arith("+", x, E.Const(c * s)), E.Const(s))
    if ce is not None:
        x, s = ce
        return E.Arith("//", E.Arith("+", x, E.Const(s - 1)), E.Const(s))
    if isinstance(n, E.Arith) and n.op == "%" and (_int(n.right) or 0) > 0:
        return E.Arith("-", n.left, E.Arith("*", n.right, E.Arith("//", n.left, n.right)))
    return n


def _reordered(n: E.Node) -> E.Node:
    n = _rebuild(n, [_reordered(k) for k in E.children(n)])
    fp = _floor_plus(n)
    if fp is not None:
        x, s, c = fp
        return E.Arith("//", E.Arith("+", E.Const(c * s), x), E.Const(s))
    if isinstance(n, E.Arith) and n.op == "//" and isinstance(n.left, E.Arith) and n.left.op == "+":
        s, c = _int(n.right), _int(n.left.right)
        if s is not None and s > 1 and c == s - 1:
            return E.Neg(E.Arith("//", E.Neg(n.left.left), n.right))
    if isinstance(n, E.Arith) and n.op in "+*":
        return E.Arith(n.op, n.right, n.left)
    if isinstance(n, E.Arith) and n.op == "-" and _int(n.right) is not None:
        return E.Arith("+", E.Const(-_int(n.right)), n.left)
    if isinstance(n, E.Call):
        return E.Call(n.fn, tuple(reversed(n.args)))
    return n


def spellings(n: E.Node) -> tuple[E.Node, E.Node, E.Node]:
    """Three trees, pairwise different (``0 +`` in front of a reordering that changed nothing)."""
    reordered = _reordered(n)
    if reordered == n:
        reordered = E.Arith("+", E.Const(0), n)
    return n, E.Arith("+", _into_the_floor(n), E.Const(0)), reordered


# ---------------------------------------------------------------------------------------------------------
# Formulas


@dataclass
class Formula:
    source: str  # file (and case)
    text: str  # as written, bound
    node: E.Node
    dims: list[S.Bounds]
    domain: E.Node = E.TRUE
    traced: list[tuple[list[E.Node], E.Node]] = field(default_factory=list)  # (premises, torch's size)
    case: object = None
    path: str = ""
    index: tuple[int, int | None] = (0, None)  # output, size (None: an int output)


def _nontrivial(n: E.Node) -> bool:
    return isinstance(n, (E.Arith, E.Neg, E.Call, E.Ite))


def contract_formulas(paths: list[Path]) -> tuple[list[Formula], dict]:
    out: list[Formula] = []
    contracts = {}
    seen: set[tuple] = set()
    for path in paths:
        c = load_contract(path)
        contracts[str(path)] = c
        dims = [S.Bounds(d.name, d.min, d.max) for d in c.dims]
        for case in c.cases():
            for p in case.paths:
                for j, want in enumerate(p.outputs):
                    items = want.items if isinstance(want, E.TupleE) else (want,) if want is not None else ()
                    for i, item in enumerate(items):
                        key = (str(path), E.to_text(item), E.to_text(case.domain), E.to_text(p.when))
                        if not _nontrivial(item) or key in seen:
                            continue
                        seen.add(key)
                        out.append(Formula(f"{path.relative_to(ROOT)} [{case.id}]", E.to_text(item), item, dims,
                                           E.conj([case.domain, p.when]), case=case, path=p.id,
                                           index=(j, i if isinstance(want, E.TupleE) else None)))
    return out, contracts


_INLINE = re.compile(r'outputs = \[([^\]\n{]*)\]')


def inline_formulas(files: list[Path]) -> list[Formula]:
    """The formulas of contracts written inline in test files (``outputs = ["(N, C, H // 2, W // 2)"]``): every
    name a dim in [1, 2**20], no domain."""
    out: list[Formula] = []
    seen: set[str] = set()
    for f in files:
        for m in _INLINE.finditer(f.read_text(encoding="utf-8")):
            for text in re.findall(r'"([^"]+)"', m.group(1)):
                try:
                    node = E.bind(E.parse(text), {})
                except E.ExprError:
                    continue
                items = node.items if isinstance(node, E.TupleE) else (node,)
                for item in items:
                    if _nontrivial(item) and E.kind_of(item) == "int" and E.to_text(item) not in seen:
                        seen.add(E.to_text(item))
                        dims = [S.Bounds(n, 1, 2**20) for n in sorted(E.free_names(item))]
                        out.append(Formula(str(f.relative_to(ROOT)), E.to_text(item), item, dims))
    return out


def attach_traces(formulas: list[Formula], contracts: dict, timeout_ms: int) -> tuple[list[str], list[str]]:
    """Torch's traced size for each formula whose op's kernel is the installed one: every finished trace of
    its case that meets the path. Returns the contracts traced, and the cases whose tracing crashed."""
    from shapecheck.kernel import sources
    from shapecheck.kernel.load import load_target
    from shapecheck.prove import verify as V
    from shapecheck.prove.explore import explore_case
    from shapecheck.trace.run import OutputKind

    traced, failed = [], []
    by_file: dict[str, list[Formula]] = {}
    for f in formulas:
        if f.case is not None:
            by_file.setdefault(f.source.split(" [")[0], []).append(f)
    for file, fs in by_file.items():
        c = contracts[str(ROOT / file)]
        try:
            _, kernel = load_target(c.op, str(ROOT / file), sources.from_options(None, None))
        except Exception:  # noqa: BLE001 - a custom op (needs --import) or no kernel: logic only
            continue
        traced.append(file)
        opts = V.Options(jobs=1, timeout_ms=timeout_ms, full=True)
        solver = V.make_solver(c, timeout_ms)
        runs = {}
        for f in fs:
            if f.case.id not in runs:
                try:
                    runs[f.case.id] = explore_case(kernel, f.case, solver, opts, {}).leaves
                except Exception as err:  # noqa: BLE001 - a crash while tracing (issue 22 item 3): logic only
                    runs[f.case.id] = []
                    failed.append(f"{file} [{f.case.id}]: {type(err).__name__}: {str(err)[:80]}")
            j, i = f.index
            for leaf in runs[f.case.id]:
                premises = [f.domain, *leaf.pc]
                if solver.satisfiable(premises).sat is S.Sat.UNSAT or j >= len(leaf.trace.outputs):
                    continue
                got = leaf.trace.outputs[j]
                have = (got.scalar if i is None else got.shape.items[i] if got.kind is OutputKind.TENSOR
                        and i < len(got.shape.items) else got.items[i] if got.items and i < len(got.items) else None)
                if have is not None:
                    f.traced.append((premises, have))
    return traced, failed


# ---------------------------------------------------------------------------------------------------------
# Proving


@contextlib.contextmanager
def normal_form(on: bool):
    """The solver with its normal form, or (``--raw``) with z3 given the expression as written."""
    saved = S.normal
    S.normal = saved if on else (lambda n: n)
    try:
        yield
    finally:
        S.normal = saved


def prove(f: Formula, mine: E.Node, other: E.Node, timeout_ms: int, trace: bool) -> tuple[str, float]:
    """The formula's obligations in one spelling: its worst outcome and the seconds they took."""
    N.normal.cache_clear()
    N._key.cache_clear()
    worst = S.Outcome.PROVED
    start = time.process_time()
    names = {b.name for b in f.dims}
    dims = f.dims + [S.Bounds(n, 0, 2**63 - 1) for n in sorted(E.free_names(mine) - names)]
    r = S.Solver(dims, timeout_ms, simplified).implies([f.domain], E.compare("==", mine, other))
    worst = max(worst, r.outcome)
    for premises, have in (f.traced if trace else []):
        r = S.Solver(dims, timeout_ms, simplified).implies(premises, E.compare("==", have, mine))
        worst = max(worst, r.outcome)
    return _RANK[worst], time.process_time() - start


def measure(formulas: list[Formula], repeat: int, timeout_ms: int, trace: bool, on: bool) -> list[tuple]:
    rows = []
    with normal_form(on):
        for f in formulas:
            sp = spellings(f.node)
            runs: list[list[tuple[str, float]]] = [[], [], []]
            for _ in range(repeat):  # the spellings take turns, so that a busy moment falls on all of them
                for k, mine in enumerate(sp):
                    runs[k].append(prove(f, mine, sp[(k + 1) % 3], timeout_ms, trace))
            verdicts = [r[0][0] if len({v for v, _ in r}) == 1 else "varies" for r in runs]
            times = [min(t for _, t in r) for r in runs]
            rows.append((f, sp, verdicts, times))
    return rows


def _ms(t: float) -> str:
    return f"{t * 1000:.1f}"


def report(rows: list[tuple], raw: list[tuple] | None) -> None:
    head = "| # | formula (as written) | source | traces | verdicts | ms per spelling | spread |"
    if raw is not None:
        head += " raw verdicts | raw ms per spelling | raw spread |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for k, (f, _sp, verdicts, times) in enumerate(rows):
        line = (f"| {k + 1} | `{f.text}` | {f.source} | {len(f.traced)} | {_verdicts(verdicts)} | "
                f"{' / '.join(_ms(t) for t in times)} | {max(times) / min(times):.2f}x |")
        if raw is not None:
            _, _, rv, rt = raw[k]
            line += f" {_verdicts(rv)} | {' / '.join(_ms(t) for t in rt)} | {max(rt) / min(rt):.2f}x |"
        print(line)
    print()
    for label, rs in (("normal form", rows), ("raw (normal form off)", raw)):
        if rs is None:
            continue
        spreads = [max(t) / min(t) for *_, t in rs]
        agree = sum(len(set(v)) == 1 for _, _, v, _ in rs)
        unknown = sum("unknown" in v for _, _, v, _ in rs)
        total = sum(sum(t) for *_, t in rs)
        print(f"{label}: {len(rs)} formulas, same verdict for all three spellings: {agree}/{len(rs)}; "
              f"a spelling inconclusive: {unknown}; spread max {max(spreads):.2f}x, median "
              f"{statistics.median(spreads):.2f}x, over 2x: {sum(s > 2 for s in spreads)}; total {total:.2f} s")


def _verdicts(v: list[str]) -> str:
    return f"{v[0]} x3" if len(set(v)) == 1 else " / ".join(v)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--timeout-ms", type=int, default=10_000)
    ap.add_argument("--raw", action="store_true", help="also with the normal form switched off (before)")
    ap.add_argument("--no-trace", action="store_true", help="logic only: no kernel traces")
    args = ap.parse_args()
    tomls = sorted([*(ROOT / "contracts").rglob("*.toml"), *(ROOT / "tests").rglob("*.toml"),
                    *(ROOT / "docs" / "examples").glob("*.toml")])
    formulas, contracts = contract_formulas(tomls)
    formulas += inline_formulas(sorted((ROOT / "tests").rglob("*.py")))
    traced, failed = ([], []) if args.no_trace else attach_traces(formulas, contracts, args.timeout_ms)
    print(f"{len(tomls)} contract files, {len(formulas)} output formulas; traced (installed kernels): "
          f"{', '.join(traced) or 'none'}")
    for line in failed:
        print(f"- tracing crashed, logic only: {line}")
    print()
    for f in formulas:  # every spelling is the same number: checked at points before anything is timed
        _check_spellings(f)
    import shapecheck._torch.static  # noqa: F401 - what the simplifier imports on its first use, outside the timing

    measure(formulas[:3], 1, args.timeout_ms, False, on=True)  # warm up z3
    rows = measure(formulas, args.repeat, args.timeout_ms, not args.no_trace, on=True)
    raw = measure(formulas, 1, args.timeout_ms, not args.no_trace, on=False) if args.raw else None
    report(rows, raw)
    return 0


def _check_spellings(f: Formula) -> None:
    import itertools

    names = sorted(E.free_names(f.node))
    for values in itertools.islice(itertools.product(range(1, 12), repeat=len(names)), 400):
        point = dict(zip(names, values))
        try:
            want = E.evaluate(f.node, point)
        except (E.ExprError, ZeroDivisionError):
            continue
        for sp in spellings(f.node)[1:]:
            assert E.evaluate(sp, point) == want, (f.text, E.to_text(sp), point)


if __name__ == "__main__":
    raise SystemExit(main())
