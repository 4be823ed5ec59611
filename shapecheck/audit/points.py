"""The points the audit compares a fake with the eager kernel at, drawn from the inputs' example, the trace's
guards and output formulas and the inferred requires (``draw_points``): each dim at 0, 1 and past the example,
each requires just broken, the guards' sides, and points drawn for their shapes alone (every dim apart)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from ..logic import expr as E
from ..logic.simplify import conjuncts
from .inputs import OpInputs

MAX_POINTS = 14  # drawn points per input (the example first), before each dim's own at 0, 1 and past the example
WIDE_POINTS = 48  # drawn points per input at most, each dim's own included
PAST = 2  # "past the example": the example value plus this
SMALL = (2, 3)  # the values past 0 and 1 an int argument made a dim is tried at (a SymInt stride)
#: the fake at a point where the eager kernel died runs in a child this long at most (it takes milliseconds)

def _along(p: dict[str, int], names: set[str], example: dict[str, int], tensor_dims: set[str]) -> dict[str, int] | None:
    """``p``, where it moves a dim of the broken assert (``names``), with every tensor dim that shares that dim's value
    in the example moved to the same value, or None: a relation the eager kernel demands and the fake never asserts
    (slice_scatter's src as long as the slice of self) ties dims the trace knows nothing of, and a search's example
    gives related dims one value (every dim 3)."""
    moved = {d: p[d] for d in sorted(names & tensor_dims) if d in p and p[d] != example.get(d)}
    along = {e: v for d, v in moved.items() for e in sorted(tensor_dims) if e in example and example[e] == example[d]}
    q = {**p, **along}
    return q if q != p else None


def draw_points(inputs: OpInputs, guard_points: list[dict[str, int]],
                near: Callable[..., dict[str, int] | None],
                requires: list[E.Node], paths: list[dict] = (), shaped: list | None = None) -> list[dict[str, int]]:
    """The example, the formulas' zeros and bounds first (a variant compares only its first few), points for their
    shapes (``_for_shapes``), the guards' sides, each inferred inequality just broken (``boundaries``, no dim at
    0), each inferred equality of two dims broken (one side at 1, then past the example: does the eager kernel
    demand it, or broadcast?), then each dim at 0, at 1 (an int argument's at 2 and 3 too) and past the example
    (the rest where the requires let them stay): MAX_POINTS at most (WIDE_POINTS with each dim's own), each once."""
    example = dict(inputs.dims())
    out: list[dict[str, int]] = [example]

    def add(p: dict[str, int] | None, cap: int = MAX_POINTS) -> None:
        if p is not None and len(out) < cap:
            full = {**example, **{k: v for k, v in p.items() if k in example}}
            if full not in out:
                out.append(full)

    tensor_dims = inputs.tensor_dims()
    for p in [*zero_edges(paths, tensor_dims, near, requires), *formula_bounds(paths, tensor_dims, near, requires)]:
        add(p)
    # early too: a layout variant compares only the first few, and only where the shapes differ (x of 2 x 6 viewed
    # as 3 x 4) does a view of a non-contiguous input fail in the eager kernel (litert's reshape, hunt 31)
    before = len(out)
    for p in _for_shapes(example, tensor_dims, requires, near):
        add(p)
    for_shapes = len(out) - before  # beside the cap below, as beside a variant's budget
    if shaped is not None:
        shaped += out[before:]
    for p in guard_points:
        add(p)
    alongs: list[dict[str, int] | None] = []  # after the other points: a variant compares only its first few
    # each assert the trace saw, just broken with no input empty: the fake rejects there, and an eager kernel
    # that returns is a check the fake has and the runtime lacks (conv_transpose's zero-size output)
    for i, r in enumerate(requires):
        own = E.free_names(r) & example.keys()
        names = set(own)
        if not names or len(out) >= MAX_POINTS:
            continue
        others = [x for j, x in enumerate(requires) if j != i]
        # the dims tied to these by another assert move with them (a mask's length with the size it indexes:
        # ``self_0 != 7`` broken at self_0 = 7 needs indices_0_0 = 7 too, or the eager kernel refuses the mask)
        for _ in range(2):
            names |= {d for o in others if E.free_names(o) & names for d in E.free_names(o)} & example.keys()
        nonempty = [E.Cmp(">=", E.Var(d), E.Const(1)) for d in sorted(names & tensor_dims)]
        # an int argument's value (a padding) stays at the example, or moves up by one where the sizes alone
        # cannot break the assert: a stride of 0 is refused for a reason of its own, and with the ints fixed the
        # question is linear in the sizes
        moves = [{}] + [{d: example[d] + 1} for d in sorted(names - tensor_dims)]
        for broken in boundaries(r):
            for moved in moves:
                pins = [E.Cmp("==", E.Var(d), E.Const(v)) for d, v in moved.items()]
                keep = (names & tensor_dims) | set(moved)
                # a broadcast relation held as its equality first (``mat1_0 == self_0`` rather than mat1_0 = 1,
                # which the eager kernel refuses to expand: hunt 22's addmm broken at 7 read as a relation)
                equal = [x.args[0] if isinstance(x, E.Or) and isinstance(x.args[0], E.Cmp) else x for x in others]
                p = near([*equal, *broken, *nonempty, *pins], keep, False) or \
                    near([*others, *broken, *nonempty, *pins], keep, False) or \
                    near([*broken, *nonempty, *pins], keep, False)
                if p is not None:
                    add(p)
                    alongs.append(_along(p, own, example, tensor_dims))
                    break
    for r in requires:
        if isinstance(r, E.Cmp) and r.op == "==" and isinstance(r.left, E.Var) and isinstance(r.right, E.Var) \
                and r.left.name in example and example[r.left.name] == example.get(r.right.name):
            for v in (1, example[r.left.name] + PAST):
                if v != example[r.left.name]:
                    add({r.left.name: v})
    # room for each dim at 0, 1 and past the example however many dims the op has (a batch dim at 1 beside
    # another input's at 2: an attention op's 15 dims spent the points on their zeros, and its broadcast was never
    # compared), up to WIDE_POINTS
    per_dim = 3 * len(tensor_dims) + (3 + len(SMALL)) * (len(example) - len(tensor_dims))
    cap = max(MAX_POINTS, min(WIDE_POINTS + for_shapes, len(out) + len(alongs) + per_dim))
    for p in alongs:
        add(p, cap)
    for p in _each_dim(example, tensor_dims, requires, near):
        if len(out) >= cap:
            break
        add(p, cap)
    return out


def _for_shapes(example: dict[str, int], tensor_dims: set[str], requires: list[E.Node],
                near: Callable[..., dict[str, int] | None]) -> Iterator[dict[str, int] | None]:
    """The points drawn for their shapes alone: each equality of products at sizes all different
    (``_unequal_products``), every tensor dim apart from the others (``_all_apart``), and the example with its dims
    of 1 at 2 (an output size list the search gave ones: where an output's dims are all 1 its layout shows in no
    stride)."""
    yield from _unequal_products(requires, tensor_dims, near, set(example))
    yield _all_apart(requires, tensor_dims, near)
    ones = sorted(d for d, v in example.items() if v == 1)
    if ones:
        lifted = _allowed(requires, [E.Cmp("==", E.Var(d), E.Const(2)) for d in ones], set(ones), near)
        yield near([*requires, *lifted], set(ones), False) if lifted else None


def _allowed(base: list[E.Node], conds: list[E.Node], keep: set[str],
             near: Callable[..., dict[str, int] | None]) -> list[E.Node]:
    """``conds``, where ``base`` allows them all; else those it allows, taken in turn: a requires that holds a dim at
    1 (a per-row scale's [N, 1]) kept every point with its rows at 2 from being drawn (hunt 64's column-major
    output of a dequantizer, never compared with two rows). The probes are not kept among the points drawn: a
    variant compares only its first few."""
    if near([*base, *conds], keep, False, record=False) is not None:
        return conds
    kept: list[E.Node] = []
    for c in conds[:16]:
        if near([*base, *kept, c], keep, False, record=False) is not None:
            kept.append(c)
    return kept


def _all_apart(requires: list[E.Node], tensor_dims: set[str],
               near: Callable[..., dict[str, int] | None]) -> dict[str, int] | None:
    """Every tensor dim at 2 or more and apart from every other dim the inferred requires do not tie to it (a
    broadcast relation held as its equality; an ``x != y or z == y`` whose first side the ties make false ties z
    and y): at the example's sizes all alike, a kernel that mixes two dims up agrees with the fake (hunt 40:
    optimum-quanto's int8 ``qbytes_mm`` refuses A (2, 3), B (4, 3) with scales (4, 3), where the fake returns
    (2, 4); every point compared had M = N)."""
    dims = sorted(tensor_dims)
    if not 2 <= len(dims) <= 16:
        return None
    root = {d: d for d in dims}

    def find(d: str) -> str:
        while root[d] != d:
            d = root[d]
        return d

    def pair(x: E.Node, op: str) -> tuple[str, str] | None:
        if isinstance(x, E.Cmp) and x.op == op and isinstance(x.left, E.Var) and isinstance(x.right, E.Var) \
                and x.left.name in root and x.right.name in root:
            return x.left.name, x.right.name
        return None

    held = [x.args[0] if isinstance(x, E.Or) and pair(x.args[0], "==") else x for x in requires]
    for _ in range(len(dims)):
        moved = False
        for x in held:
            sides = x.args if isinstance(x, E.Or) else (x,)
            left = [a for a in sides if not ((p := pair(a, "!=")) and find(p[0]) == find(p[1]))]
            tie = pair(left[0], "==") if len(left) == 1 else None
            if tie is not None and find(tie[0]) != find(tie[1]):
                root[find(tie[0])] = find(tie[1])
                moved = True
        if not moved:
            break
    floors = _allowed(held, [E.Cmp(">=", E.Var(d), E.Const(2)) for d in dims], set(dims), near)
    two = {n for f in floors for n in E.free_names(f)}  # the dims the requires let be 2 or more
    apart = [E.Cmp("!=", E.Var(d), E.Var(e)) for i, d in enumerate(dims) for e in dims[i + 1:]
             if find(d) != find(e) and d in two and e in two]
    if not apart:
        return None
    return near([*held, *floors, *apart], set(dims), False)


def _unequal_products(requires: list[E.Node], tensor_dims: set[str],
                      near: Callable[..., dict[str, int] | None], dims: set[str] = frozenset()
                      ) -> Iterator[dict[str, int] | None]:
    """Each inferred equality of products or sums (a_0 * a_1 == b_0 * b_1: equal numel) where it holds with the
    dims it names all different and past 1 (2 * 6 == 3 * 4): a fake that demands the relation where the
    eager kernel demands more (equal shapes) returns there while the eager kernel raises (prims::copy_to), and a
    view of a non-contiguous input to another shape fails (reshape's ``shape`` list: ``dims``, the int arguments
    made dims, count with the tensor dims)."""
    for r in requires:
        if not isinstance(r, E.Cmp) or r.op != "==" or (isinstance(r.left, E.Var) and isinstance(r.right, E.Var)):
            continue
        names = sorted(E.free_names(r) & (tensor_dims | dims))
        if len(names) >= 2 and set(names) & tensor_dims:
            moved = [E.Cmp(">=", E.Var(d), E.Const(2)) for d in names] + [
                E.Cmp("!=", E.Var(d), E.Var(e)) for i, d in enumerate(names) for e in names[i + 1:]]
            yield near([*requires, *moved], set(names), False)


def _each_dim(example: dict[str, int], tensor_dims: set[str], requires: list[E.Node],
              near: Callable[..., dict[str, int] | None]) -> Iterator[dict[str, int]]:
    """Each dim at 0, then at 1, then past the example, the others where the inferred requires let them stay. An
    int argument made a dim (a SymInt stride, a padding) also at small values past 1: its trace is one formula for
    every value, and a fake that floors where the kernel takes the ceiling (D // stride for ceil(D / stride))
    agrees with it at 0, 1 and a value that divides the example's sizes."""
    for value in (0, 1, None, *SMALL):
        for d, ex in example.items():
            if value in SMALL and d in tensor_dims:
                continue
            v = ex + PAST if value is None else value
            p = near([*requires, E.Cmp("==", E.Var(d), E.Const(v))], {d})
            yield p if p is not None else {d: v}


ZERO_EDGES = 2  # points per input where a size of the fake's output formulas is 0 and no input is empty


def zero_edges(paths: list[dict], tensor_dims: set[str], near: Callable[..., dict[str, int] | None],
               requires: Sequence[E.Node] = ()) -> list[dict[str, int]]:
    """Points where a size of an output, by the fake's own formula on its path, is 0 while every tensor dim the
    size names is at least 1: a kernel larger than its input (a convolution's ``L + 2 * p - K + 1``). A fake
    that returns an empty output there, where the eager kernel raises, lacks the eager kernel's check; where
    both agree the formula holds at its edge. ``requires``: the fake's inferred asserts, held where they can be
    (the point is then one where the fake returns)."""
    out: list[dict[str, int]] = []
    for when, nodes, _ in path_formulas(list(paths)):
        sizes = [(item, when) for node in nodes for item in (node.items if isinstance(node, E.TupleE) else ())]
        # a value the kernel needed on the path (``(self_1 - 1) // 2 == 1``: im2col's block count, which the path
        # fixes): a size too, whose 0 lies outside the path, so the path's own condition is not kept
        sizes += [(c.left, E.TRUE) for c in conjuncts(when) if isinstance(c, E.Cmp) and c.op == "=="
                  and isinstance(c.right, E.Const) and type(c.right.value) is int and c.right.value >= 1]
        for item, where in sizes:
            names = E.free_names(item)
            if not names & tensor_dims or isinstance(item, E.Var) or len(out) >= ZERO_EDGES:
                continue
            nonempty = [E.Cmp(">=", E.Var(d), E.Const(1)) for d in sorted(names & tensor_dims)]
            conds = [E.Cmp("==", item, E.Const(0)), *nonempty, *([] if where == E.TRUE else [where])]
            # where the fake's own asserts hold (it returns the empty output there), else anywhere
            p = near([*conds, *requires], names, False) or near(conds, names, False)
            if p is not None and p not in out:
                out.append(p)
    return out


BOUND_POINTS = 2  # points per input past a constant bound in the fake's output formulas
BOUND_ELEMENTS = 1 << 24  # a point past a bound is tried where no input tensor then holds more elements than this


def formula_bounds(paths: list[dict], tensor_dims: set[str], near: Callable[..., dict[str, int] | None],
                   requires: Sequence[E.Node] = ()) -> list[dict[str, int]]:
    """Points on the far side of each constant bound in the fake's output formulas: a size that a ``min``/``max``
    caps at a constant is just past the cap (``min(x_0, 1024)`` at x_0 = 1025), a floor division or modulo by a
    constant at that constant (``x_0 // 1024`` at x_0 = 1024), and the condition of a
    conditional size (``Ite``) is taken both ways. Drawn points lie below most such bounds, where a fake that caps
    a size the eager kernel does not agrees with it everywhere (hunt 48's planted ``sym_min(x_0, 1024)``:
    "formulas agree at all 8 points")."""
    out: list[dict[str, int]] = []

    def sides(n: E.Node) -> Iterator[list[E.Node]]:
        if isinstance(n, E.Call) and n.fn in ("min", "max"):
            consts = [a.value for a in n.args if isinstance(a, E.Const) and type(a.value) is int]
            for a in n.args:
                if not isinstance(a, E.Const) and E.free_names(a) & tensor_dims:
                    for c in consts:
                        if 2 <= c < BOUND_ELEMENTS:
                            yield [E.Cmp("==", a, E.Const(c + 1))]
        if isinstance(n, E.Arith) and n.op in ("//", "%") and isinstance(n.right, E.Const) \
                and type(n.right.value) is int and 2 <= n.right.value < BOUND_ELEMENTS \
                and E.free_names(n.left) & tensor_dims:
            # a floor division or modulo by a constant changes at its first multiple (``x_0 - x_0 // 1024`` is
            # x_0 below 1024 and less from there: hunt 55's planted fake, clean at every drawn point)
            yield [E.Cmp("==", n.left, n.right)]
        if isinstance(n, E.Ite) and E.free_names(n.cond) & tensor_dims:
            yield [n.cond]
            yield [E.negate(n.cond)]
        for child in E.children(n):
            yield from sides(child)

    for when, nodes, _ in path_formulas(list(paths)):
        for node in nodes:
            for conds in sides(node) if node is not None else ():
                if len(out) >= BOUND_POINTS:
                    return out
                names = set().union(*(E.free_names(c) for c in conds)) & tensor_dims
                nonempty = [E.Cmp(">=", E.Var(d), E.Const(1)) for d in sorted(names)]
                where = [] if when == E.TRUE else [when]
                p = near([*conds, *nonempty, *where, *requires], names, False) or \
                    near([*conds, *nonempty], names, False)
                if p is not None and p not in out and _most_elements(p, tensor_dims) <= BOUND_ELEMENTS:
                    out.append(p)
    return out


def _most_elements(point: dict[str, int], tensor_dims: set[str]) -> int:
    """The most elements an input tensor holds at ``point`` (its dims are ``NAME_AXIS``): a cap of 100000 rows
    is tried at 100001 rows of 3, not one of 100001 rows of 4096 (hunt 52: a fixed cap of 65536 on the bound
    missed ``min(x_0, 100000)``)."""
    sizes: dict[str, int] = {}
    for dim in tensor_dims & point.keys():
        name = dim.rpartition("_")[0] or dim
        sizes[name] = sizes.get(name, 1) * max(point[dim], 0)
    return max(sizes.values(), default=0)


def boundaries(r: E.Node) -> list[list[E.Node]]:
    """Ways to break the assert ``r`` just past its edge, each a list of conditions: ``a > b`` at ``a == b``,
    ``a >= b`` at ``a == b - 1``; a disjunction with every part at its edge; a conjunction one part at a time,
    the others kept. An equality has no edge (the caller breaks it by moving one side)."""
    edges = {">": lambda a, b: E.Cmp("==", a, b), "<": lambda a, b: E.Cmp("==", a, b),
             ">=": lambda a, b: E.Cmp("==", a, E.arith("-", b, E.Const(1))),
             "<=": lambda a, b: E.Cmp("==", a, E.arith("+", b, E.Const(1))),
             "!=": lambda a, b: E.Cmp("==", a, b)}

    def edge(n: E.Node) -> E.Node:
        if isinstance(n, E.Not) and isinstance(n.operand, E.Cmp):
            n = E.negate(n.operand)
        if isinstance(n, E.Cmp) and n.op in edges:
            return edges[n.op](n.left, n.right)
        return E.negate(n)

    if isinstance(r, E.Cmp) and r.op == "==":
        return []
    if isinstance(r, E.Or):
        return [[edge(a) for a in r.args]]
    if isinstance(r, E.And):
        return [[edge(a), *(b for b in r.args if b is not a)] for a in r.args]
    return [[edge(r)]]


#: an eager error about the tensors' values (an index past a size): made-up data, not the sizes, is what it rejects


def path_formulas(paths: list[dict]) -> list[tuple[E.Node, list[E.Node | None], list[str | None]]]:
    """Each path record's region and output formulas, parsed (None where outside the language), with their text."""
    out = []
    for p in paths:
        try:
            when = E.parse(p["when"]) if p["when"] != "true" else E.TRUE
        except Exception:  # noqa: BLE001, S112 - a region outside the language: not checked
            continue
        nodes = []
        for o in p["outputs"]:
            try:
                nodes.append(E.parse(o) if o is not None and "?" not in o else None)
            except Exception:  # noqa: BLE001 - a formula outside the language: not checked
                nodes.append(None)
        out.append((when, nodes, list(p["outputs"])))
    return out
