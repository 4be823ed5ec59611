"""What a path's output table states beyond the shape, checked on every finished trace that overlaps the path:

- SC019 output-presence-mismatch: the runtime returns None (``"none"``) and the kernel a tensor, or the reverse;
- SC017 output-dtype-mismatch: the output's dtype differs from the contract's for the case;
- SC018 output-layout-mismatch: z3 proves the kernel's symbolic strides equal the layout's on the whole region
  (``exact``), or equal wherever torch's ``is_contiguous`` rule looks (``dense``);
- SC020 dynamic-size-range: a data-dependent size (a new unbacked size of the fake) must admit every value the
  runtime can give it, ``min..max`` of the contract; a wider range is a precision note.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import cast

from ..contract import dtypes
from ..contract.model import BoundCase, BoundPath
from ..contract.outputs import BoundOutput
from ..findings import Finding, PathStatus, SourceLoc
from ..logic import expr as E
from ..logic import simplify as S
from ..logic.solver import Outcome, Sat, Solver, restrict
from ..result.report import PathCheck
from ..rules import PLAIN_SIZE_FIX, RuleCode
from ..trace.run import FRESH, OutputKind
from .obligations import Leaf, Obligation, Status, _compare_output, _OutputCheck, discharge, path_name


def spec_obligations(case: BoundCase, leaves: list[Leaf], solver: Solver, eras: tuple[str, ...], checks: list[PathCheck],
                     definition=None, notes: list[str] | None = None) -> list[Finding]:
    """The findings of every output table (and ``"none"``) of the case's paths; a refuted path's status in
    ``checks`` becomes ``refuted``. Precision notes (a data-dependent size wider than the runtime's) go to
    ``notes``."""
    found: list[Finding] = []
    seen: set[tuple] = set()
    for p in case.paths:
        if (eras and p.era not in eras) or not any(s is not None for s in p.specs):
            continue
        bad = False
        for leaf in leaves:
            # where the kernel returns: its own asserts hold (elsewhere it raises, SC004 says so; hunt 63's strides
            # ``max(1, B)`` against ``B`` "at B = 0", where unfold's ``B >= 2`` fails and no output exists)
            held = [a.relation for a in leaf.trace.asserts if a.relation is not None]
            premises = [case.domain, p.when] + leaf.pc + held
            if solver.satisfiable(premises).sat is not Sat.SAT:
                continue
            for j, spec in enumerate(p.specs):
                if spec is None:
                    continue
                got = leaf.trace.outputs[j] if j < len(leaf.trace.outputs) else None
                c = _Check(case, p, j, spec, leaf, premises, solver)
                for v in c.run(got, notes if notes is not None else []):
                    where = leaf.trace.returned_at or definition  # the return statement, as --show-obligations
                    if v.location is None and where is not None:
                        v = replace(v, location=where)
                    if (v.code, v.expr, v.path) not in seen:
                        seen.add((v.code, v.expr, v.path))
                        found.append(v)
                        bad = bad or v.code != RuleCode.INCONCLUSIVE
        if bad:
            name = path_name(p)
            checks[:] = [PathCheck(name, PathStatus.REFUTED) if pc.path == name else pc for pc in checks]
    return found


@dataclass(frozen=True)
class _Check:
    case: BoundCase
    path: BoundPath
    index: int
    spec: BoundOutput
    leaf: Leaf
    premises: list[E.Node]
    solver: Solver

    @property
    def where(self) -> str:
        return f"output {self.index}"

    @property
    def dims(self) -> list[str]:
        return self.case.point_dims  # a domain-only dim (Ci == C * r * r's C) is part of every point

    def finding(self, code: RuleCode, expr: str, message: str, point: dict | None, dims: tuple[str, ...] = ()) -> Finding:
        return Finding(code=code, case=self.case.id, path=path_name(self.path), expr=expr, dims=dims,
                         counterexample=point or {}, message=message)

    def _bounded_at(self, fresh: str, value: int | None, least: int | None) -> SourceLoc | None:
        """The kernel's line that set the bound a runtime ``value`` falls outside (the least value where it lies
        below it, else the greatest), else where the kernel created the size."""
        sites = {n: (lo, hi) for n, lo, hi in self.leaf.trace.fresh_bounded_at}.get(fresh, (None, None))
        below = value is not None and least is not None and value < least
        return sites[0 if below else 1] or dict(self.leaf.trace.fresh_at).get(fresh)

    def least(self, extra: Sequence[E.Node] = (), names: Sequence[str] = ()) -> dict[str, int]:
        return restrict(self.solver.small_model(self.premises + list(extra)), self.dims + list(names))

    def run(self, got, notes: list[str]) -> list[Finding]:
        spec, where = self.spec, self.where
        is_none = got is not None and got.kind is OutputKind.OTHER and got.text == "NoneType"
        if spec.absent:
            if got is None:
                return [self.finding(RuleCode.OUTPUT_PRESENCE_MISMATCH, f"{where}: nothing, runtime None", f"{where} is missing: the kernel "
                                     f"returns fewer outputs; the runtime returns None there", self.least())]
            if is_none:
                return []
            what = f"a tensor {got.formula}" if got.is_tensor or got.kind is OutputKind.TENSOR else f"a {got.text}"
            return [self.finding(RuleCode.OUTPUT_PRESENCE_MISMATCH, f"{where}: {what}, runtime None",
                                 f"{where} is {what}, but the runtime returns None on path {path_name(self.path)}",
                                 self.least())]
        if is_none:
            return [self.finding(RuleCode.OUTPUT_PRESENCE_MISMATCH, f"{where}: None, runtime a tensor",
                                 f"{where} is None, but the runtime returns a tensor on path {path_name(self.path)}",
                                 self.least())]
        if got is None or got.kind is OutputKind.OTHER:
            if not spec.sizes:
                return []  # a missing output is SC002's finding (the shape loop)
            what = "nothing" if got is None else f"a {got.text}"
            return [self.finding(RuleCode.OUTPUT_SHAPE_MISMATCH, f"{where}: {what}", f"{where} is missing: the kernel returned {what}",
                                 self.least())]
        out: list[Finding] = []
        if spec.dtype is not None and got.dtype is not None and got.dtype != dtypes.canonical(spec.dtype):
            out.append(self.finding(RuleCode.OUTPUT_DTYPE_MISMATCH, f"{where} dtype {got.dtype}, contract {spec.dtype}",
                                    f"{where} has dtype {got.dtype}, but the runtime's is {spec.dtype} on path "
                                    f"{path_name(self.path)}" + (f" in case {self.case.id}" if self.case.id else ""), self.least()))
        if spec.sizes and got.kind is not OutputKind.TENSOR:  # the shape is checked here, not by SC002's loop
            why = f"cannot translate {where}'s shape: {got.text}" if got.kind is OutputKind.UNSUPPORTED else \
                f"{where} should be a tensor with data-dependent sizes, the kernel returned {got.formula}"
            return out + [self.finding(RuleCode.INCONCLUSIVE if got.kind is OutputKind.UNSUPPORTED else RuleCode.OUTPUT_SHAPE_MISMATCH,
                                       f"{where}: {got.formula}", why, self.least())]
        if got.kind is not OutputKind.TENSOR or spec.shape is None:
            return out
        shape, renames = got.shape, {}
        if spec.sizes:
            sized = self._sizes(got, notes)
            if isinstance(sized, Finding):
                return out + [sized]
            shape, renames = sized
            v = _compare_output(_OutputCheck(self.case, path_name(self.path), self.index, spec.shape, self.leaf,
                                             self.premises + self.size_bounds(), self.solver), replace(got, shape=shape))
            if v is not None:
                return out + [v]
        if spec.strides is not None:
            v = self._layout(got, shape, renames)
            if v is not None:
                out.append(v)
        return out

    def size_bounds(self) -> list[E.Node]:
        return [E.conj([E.Cmp("<=", lo, E.Var(n)), E.Cmp("<=", E.Var(n), hi)]) for n, lo, hi in self.spec.sizes]

    def _sizes(self, got, notes: list[str]):
        """Each data-dependent size of the contract matched with the kernel's size at its place: SC020 where the
        kernel's range misses a value the runtime can give. -> (the kernel's shape in the contract's names,
        fresh name -> contract name), or the finding."""
        where, renames = self.where, {}
        ranges = {name: (lo, hi) for name, lo, hi in self.leaf.trace.fresh}
        spec_shape = self.spec.shape
        assert spec_shape is not None  # a table with data-dependent sizes states its shape
        for n, lo, hi in self.spec.sizes:
            at = next((i for i, x in enumerate(spec_shape.items) if E.Var(n) in _walk(x)), None)
            if at is None:
                continue  # this case's shape does not use the size
            have = got.shape.items[at] if at < len(got.shape.items) else None
            if not (isinstance(have, E.Var) and have.name.startswith(FRESH)):
                single = self._single(n, lo, hi, have)
                if single is None:
                    continue  # the runtime's range is that one value on the whole region (nonzero's 0 at numel 0)
                return single
            renames[have.name] = n
        sub = {f: E.Var(n) for f, n in renames.items()}
        unmatched = {x for f in self.leaf.trace.fresh_facts if f is not None for x in E.free_names(f)
                     if x.startswith(FRESH)} - set(renames)
        if None in self.leaf.trace.fresh_facts or unmatched:
            return self.finding(RuleCode.INCONCLUSIVE, f"{where}: data-dependent sizes", f"the kernel constrains a data-dependent "
                                f"size in a way shapecheck cannot read ({', '.join(sorted(unmatched)) or 'untranslated'})",
                                None)
        for fresh, n in renames.items():
            lo, hi = next((lo, hi) for m, lo, hi in self.spec.sizes if m == n)
            flo, fhi = ranges.get(fresh, (None, None))
            facts = [E.bind(f, sub) for f in self.leaf.trace.fresh_facts if f is not None and fresh in E.free_names(f)]
            allowed = E.conj([E.Cmp(">=", E.Var(n), E.Const(flo if flo is not None else 0))]
                             + ([E.Cmp("<=", E.Var(n), E.Const(fhi))] if fhi is not None else []) + facts)
            runtime = E.conj([E.Cmp("<=", lo, E.Var(n)), E.Cmp("<=", E.Var(n), hi)])
            kernel = f"[{flo}, {'inf' if fhi is None else fhi}]" + "".join(f" with {E.to_text(f)}" for f in facts)
            d = discharge(Obligation(tuple(self.premises + [runtime]), allowed), self.case, self.solver)
            text = f"{where} size {n}: kernel {kernel}, runtime [{E.to_text(lo)}, {E.to_text(hi)}]"
            if d.status is Status.UNKNOWN:
                return self.finding(RuleCode.INCONCLUSIVE, text, f"z3 could not compare the range of {n} ({d.reason})", None)
            if d.status is Status.REFUTED:
                point = self.least([runtime, E.negate(allowed)], [n]) or restrict(d.point, self.dims + [n])
                found = self.finding(RuleCode.DYNAMIC_SIZE_RANGE, text, f"{where}'s data-dependent size {n} ranges over {kernel} in the "
                                     f"kernel, but the runtime gives any value in [{E.to_text(lo)}, {E.to_text(hi)}]: "
                                     f"{n}={point.get(n)} is outside the kernel's range, so a compiled or exported "
                                     f"program fails its runtime assertion there", point, (n,))
                return replace(found, location=self._bounded_at(fresh, point.get(n), flo),
                               fix=_range_fix(n, point.get(n), flo, hi))
            wider = self.solver.satisfiable(self.premises + [allowed, E.negate(runtime)])
            if wider.sat is Sat.SAT:
                notes.append(f"{self.case.id or 'the case'}: path {path_name(self.path)}: {where}'s data-dependent size {n} "
                             f"ranges over {kernel} in the kernel, wider than the runtime's [{E.to_text(lo)}, "
                             f"{E.to_text(hi)}] (precision, not a failure)")
        return E.bind(got.shape, sub), renames

    def _single(self, n: str, lo: E.Node, hi: E.Node, have: E.Node | None) -> Finding | None:
        """A size that is no data-dependent size where the contract has one: right only where the runtime's range is
        that one value at every point of the region (``nonzero`` of an empty input: 0, and the runtime's [0, A * B]
        at A = 0). None then; else SC020 at a point where the range holds another value (or INCONCLUSIVE)."""
        where = self.where
        shown = "nothing" if have is None else E.to_text(have)
        text = f"{where} size {n}: {shown}, contract {n} in [{E.to_text(lo)}, {E.to_text(hi)}]"
        point = self.least()
        if have is not None and not any(x.startswith(FRESH) for x in E.free_names(have)):
            one = E.conj([E.Cmp("==", lo, have), E.Cmp("==", hi, have)])
            d = discharge(Obligation(tuple(self.premises), one), self.case, self.solver)
            if d.status is Status.PROVED:
                return None
            if d.status is Status.UNKNOWN:
                return self.finding(RuleCode.INCONCLUSIVE, text, f"z3 could not compare {where}'s size {shown} with the "
                                    f"runtime's range of {n} ({d.reason})", None)
            point = self.least([E.negate(one)]) or restrict(d.point, self.dims)
        found = self.finding(RuleCode.DYNAMIC_SIZE_RANGE, text, f"{where}'s size is {shown}, not a data-dependent size: "
                             f"the runtime's {n} ranges over [{E.to_text(lo)}, {E.to_text(hi)}]", point)
        return replace(found, fix=PLAIN_SIZE_FIX)

    def _layout(self, got, shape: E.TupleE, renames: dict[str, str]) -> Finding | None:
        spec, where = self.spec, self.where
        want = spec.strides
        assert want is not None  # called only for a table that states a layout
        if got.strides is None:
            return self.finding(RuleCode.INCONCLUSIVE, f"{where} strides {got.stride_text}",
                                f"cannot translate {where}'s strides {got.stride_text}", None)
        sub = {f: E.Var(n) for f, n in renames.items()}
        floor = {d.name: d.min for d in self.case.contract.dims}
        have = tuple(_drop_max(E.bind(s, sub), floor) for s in got.strides)
        if any(n.startswith(FRESH) for h in have for n in E.free_names(h)):
            return None  # a data-dependent size the contract does not name: SC005 on the shape already
        if len(have) != len(want) or spec.shape is None or len(spec.shape.items) != len(shape.items):
            return None  # a rank mismatch is SC002's
        sizes = shape.items
        if all(_product(h, floor) == _product(w, floor) is not None for h, w in zip(have, want)):
            return None  # equal as products of the same sizes: proved without z3 (the usual case, and cheap)
        significant = spec.match != "exact"
        if all(_product(h, floor, sizes, significant) == _product(w, floor, spec.shape.items, significant) is not None
               for h, w in zip(have, want)):
            return None  # equal as products of the output's sizes: equal once the shape is (SC002 proves that)
        known = _known_values(self.premises)  # a region's E == 64 and E == Ev: 64 * L against L * Ev
        if known and all(_product(E.bind(h, known), floor) == _product(E.bind(w, known), floor) is not None
                         for h, w in zip(have, want)):
            return None  # equal as products once the names the premises fix are put in
        same = E.conj([E.compare("==", a, b) for a, b in zip(sizes, spec.shape.items)])
        pairs = [E.compare("==", h, w) for h, w in zip(have, want)]
        if significant:  # significant (or its older name, dense): as assert_size_stride compares
            pairs = [E.disj([E.compare("==", s, E.Const(1)), eq]) for s, eq in zip(sizes, pairs)]
            claim = E.disj([E.compare("==", s, E.Const(0)) for s in sizes] + [E.conj(pairs)])
        else:
            claim = E.conj(pairs)
        premises: list[E.Node] = self.premises + self.size_bounds()
        if self.solver.implies(premises, same).outcome is not Outcome.PROVED:
            return None  # the shape differs somewhere: SC002's finding (or SC005's); fix the shape first
        d = discharge(Obligation(tuple(premises), claim), self.case, self.solver)
        if d.status is Status.PROVED:
            return None
        stated = _tuple(want)  # a layout written as its strides is said once (hunt 42: "(1, A) (1, A)")
        once = spec.layout.removeprefix("strides ").replace(" ", "") == stated.replace(" ", "")
        text = f"{where} strides {_tuple(have)}, contract {spec.layout if once else f'{spec.layout} {stated}'}"
        if d.status is Status.UNKNOWN:
            return self.finding(RuleCode.INCONCLUSIVE, text, f"z3 could not prove {where}'s strides ({d.reason})", None)
        # a point where every size of the output is at least 2: no size-1 dim hides the difference
        wide: list[E.Node] = [E.Cmp(">=", s, E.Const(2)) for s in sizes if not isinstance(s, E.Const)]
        names = [n for _, n in renames.items()]
        model = self.solver.small_model(premises + [E.negate(claim)] + wide) or \
            self.solver.small_model(premises + [E.negate(claim)]) or d.point
        point = restrict(model, self.dims + names)
        at = dict(model or {})
        got_at, want_at, shape_at = (cast(tuple, E.evaluate(E.TupleE(tuple(x)), at)) for x in (have, want, sizes))
        v = self.finding(RuleCode.OUTPUT_LAYOUT_MISMATCH, text, f"{where} has strides {got_at} but the runtime's {spec.layout} ({spec.match} "
                         f"comparison) gives {want_at} for shape {shape_at} on path {path_name(self.path)}", point,
                         tuple(sorted(set().union(*map(E.free_names, have + want)))))
        return replace(v, fix=_layout_fix(got_at, want_at, shape_at, spec.layout))


def _layout_fix(got: tuple, want: tuple, shape: tuple, layout: str = "") -> str:
    """SC018's fix where the strides differ only at dims of size 1 (or the output is empty): no memory order
    is wrong there, only a stride torch's own checks never read; for a channels-last or contiguous layout, how to
    allocate in it; "" otherwise (the rule's fix)."""
    differ = [i for i, (g, w) in enumerate(zip(got, want)) if g != w]
    if differ and (0 not in shape and any(shape[i] > 1 for i in differ)):
        if "channels_last" in layout:
            fmt = "channels_last_3d" if "channels_last_3d" in layout else "channels_last"
            return (f"allocate the output in the input's memory format, as the runtime does: empty(shape, "
                    f"memory_format=torch._prims_common.suggest_memory_format(input)) (torch.{fmt} here), not "
                    "contiguous")
        if layout == "contiguous":
            return "allocate the output contiguous (torch.empty(shape), or .contiguous() on what the kernel built)"
        return ""
    if not differ:
        return ""
    dims = ", ".join(str(i) for i in differ)
    why = "the output is empty" if 0 in shape else f"dim {dims} {'has' if len(differ) == 1 else 'have'} size 1"
    return (f"the strides differ only where {why}, which torch's own stride checks ignore (Inductor's "
            "assert_size_stride, torch._prims_common.check_significant_strides): no memory order is wrong; compare "
            "with layout_match = \"significant\" (the default) unless a consumer reads every stride")


def _product(node: E.Node, floor: dict[str, int], sizes: tuple = (), significant: bool = False) -> tuple | None:
    """A stride as (constant factor, sorted factors) when it is a product of integers, names and ``max(x, 1)``
    of names (``max(x, 1)`` is ``x`` for a name whose least value is at least 1); None for anything else. Two
    strides with equal products are equal for every size (multiplication commutes).

    With ``sizes`` (the output's shape on the side the stride comes from), a factor that is the i-th size, or
    ``max`` of it and 1, is the factor ``#i`` (``max(#i, 1)`` under an exact comparison: under the significant
    one, an empty output matches whatever its strides, and where no size is 0 the two are equal). A let such as
    pooling's ``Ho`` (a ``min`` of floor divisions) is so one factor on both sides: the strides are equal once
    the shapes are, which SC002 proves (or reports)."""
    const, factors, todo = 1, [], [node]
    while todo:
        n = todo.pop()
        size = _size_index(n, sizes, significant)
        if size is not None:
            factors.append(size)
        elif isinstance(n, E.Arith) and n.op == "*":
            todo += [n.left, n.right]
        elif isinstance(n, E.Const) and type(n.value) is int:
            const *= n.value
        elif isinstance(n, E.Var):
            factors.append(n.name)
        elif isinstance(n, E.Call) and n.fn == "max" and len(n.args) == 2 and E.Const(1) in n.args:
            x = n.args[0] if n.args[1] == E.Const(1) else n.args[1]
            if not isinstance(x, E.Var):
                return None
            factors.append(x.name if floor.get(x.name, 0) >= 1 else f"max({x.name}, 1)")
        else:
            return None
    return const, tuple(sorted(factors))


def _size_index(node: E.Node, sizes: tuple, significant: bool) -> str | None:
    """``#i`` when ``node`` is the i-th of ``sizes``; for ``max(x, 1)`` of it, ``#i`` under a significant
    comparison and ``max(#i, 1)`` under an exact one; None otherwise (no sizes given: None)."""
    if not sizes or isinstance(node, E.Const):
        return None
    if node in sizes:
        return f"#{sizes.index(node)}"
    if isinstance(node, E.Call) and node.fn == "max" and len(node.args) == 2 and E.Const(1) in node.args:
        x = node.args[0] if node.args[1] == E.Const(1) else node.args[1]
        if x in sizes:
            return f"#{sizes.index(x)}" if significant else f"max(#{sizes.index(x)}, 1)"
    return None


def _known_values(premises: Sequence[E.Node]) -> dict[str, E.Node]:
    """The names the premises' conjuncts equate (``x == 64``, ``x == y``): each name -> its class's constant, or
    its class's first name. Putting them in keeps every value the premises allow, so a stride equal to the
    contract's after it is equal wherever the premises hold."""
    parent: dict[str, str] = {}
    value: dict[str, int] = {}

    def root(n: str) -> str:
        while parent.get(n, n) != n:
            n = parent[n]
        return n

    for fact in (c for p in premises for c in S.conjuncts(p)):
        if not (isinstance(fact, E.Cmp) and fact.op == "==" and isinstance(fact.left, (E.Var, E.Const))
                and isinstance(fact.right, (E.Var, E.Const))):
            continue
        a, b = fact.left, fact.right
        if isinstance(a, E.Const):
            a, b = b, a
        if not isinstance(a, E.Var):
            continue
        ra = root(a.name)
        if isinstance(b, E.Const):
            if type(b.value) is not int or value.get(ra, b.value) != b.value:
                return {}  # contradictory premises (or not integers): nothing is taken from them
            value[ra] = b.value
            continue
        rb = root(b.name)
        if ra != rb:
            first, second = sorted((ra, rb))
            parent[second] = first
            if second in value:
                if value.setdefault(first, value[second]) != value[second]:
                    return {}
    out: dict[str, E.Node] = {}
    for n in set(parent) | set(value):
        r = root(n)
        out[n] = E.Const(value[r]) if r in value else E.Var(r)
    return {n: v for n, v in out.items() if v != E.Var(n)}


def _drop_max(node: E.Node, floor: dict[str, int]) -> E.Node:
    """``max(x, 1)`` -> ``x`` for a dim ``x`` whose least value is at least 1 (torch's contiguous strides take
    ``max(size, 1)``): equal on the whole domain, and readable."""
    if isinstance(node, E.Call) and node.fn == "max" and len(node.args) == 2 and E.Const(1) in node.args:
        x = node.args[0] if node.args[1] == E.Const(1) else node.args[1]
        if isinstance(x, E.Var) and floor.get(x.name, 0) >= 1:
            return x
    if isinstance(node, E.Arith):
        return E.arith(node.op, _drop_max(node.left, floor), _drop_max(node.right, floor))
    return node


def _tuple(items) -> str:
    return S.shown_deep(E.TupleE(tuple(items)))


def _walk(node: E.Node) -> list[E.Node]:
    out, todo = [], [node]
    while todo:
        n = todo.pop()
        out.append(n)
        todo.extend(E.children(n))
    return out


def _range_fix(name: str, value: int | None, least: int | None, most: E.Node) -> str:
    """SC020's fix for the side of the range the kernel misses: its minimum (a value below the fake's least)
    or its maximum (a bound the fake states with torch._check that the runtime exceeds)."""
    if value is not None and least is not None and value < least:
        return (f"the fake's {name} starts at {least}, above the runtime's {value}: give it no least value above "
                f"{value} (the min= of torch.library.get_ctx().new_dynamic_size(), a constrain_range or a "
                "torch._check on it; torch.library's deprecated ctx.create_unbacked_symint() starts at 2)")
    return (f"the fake bounds {name} below the runtime's maximum ({E.to_text(most)}): loosen its torch._check (or "
            f"the max= of new_dynamic_size) to the runtime's bound, so that {name}={value} is admitted")
