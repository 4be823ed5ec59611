"""Obligations simplified with the contract's own equalities before z3 gives up on them.

z3 is incomplete on nonlinear integer arithmetic: with ``requires = ["Ci == Co * PH * PW"]`` it cannot prove
``Ci % (PH * PW) == 0`` (z3 says unknown, even with minutes). Substituting the premises' definitions
(``X == expr``, X a dim not in expr) into the claim and letting torch's integer functions and sympy simplify it
gives ``True``. The simplified claim is equivalent to the claim wherever the premises hold (a substitution of
equals, then an equivalence-preserving simplification of integer expressions with Python's semantics), so the
caller keeps the premises and asks z3 again: a model is still a model of the original query, and an unknown
stays unknown.
"""

from __future__ import annotations

from ..logic import expr as E

_MAX_OPS = 400  # sympy's simplify on anything larger costs more than it can save


def conjuncts(node: E.Node) -> list[E.Node]:
    return [p for a in node.args for p in conjuncts(a)] if isinstance(node, E.And) else [node]


def definition(part: E.Node, dims: set[str] | None, known: dict[str, E.Node]) -> tuple[str, E.Node] | None:
    """``X == expr`` (either side), X a dim (any name when ``dims`` is None) not in expr and not defined yet,
    expr over no defined dim: X is defined by expr."""
    if not (isinstance(part, E.Cmp) and part.op == "=="):
        return None
    for a, b in ((part.left, part.right), (part.right, part.left)):
        if isinstance(a, E.Var) and (dims is None or a.name in dims) and a.name not in known \
                and a.name not in E.free_names(b) and not (E.free_names(b) & set(known)) \
                and not any(a.name in E.free_names(v) for v in known.values()):
            return a.name, b
    return None


def modulo_step(c: E.Node) -> tuple[str, int, int] | None:
    """``X % k == r`` (either side; X a name, k >= 2, 0 <= r < k) as (X, k, r), else None: torch.export
    states it as the derived Dim ``k * X_k + r``."""
    if not (isinstance(c, E.Cmp) and c.op == "=="):
        return None
    for m, rest in ((c.left, c.right), (c.right, c.left)):
        if not (isinstance(m, E.Arith) and m.op == "%" and isinstance(m.left, E.Var) and isinstance(m.right, E.Const)
                and isinstance(rest, E.Const)):
            continue
        k, r = m.right.value, rest.value
        if isinstance(k, int) and isinstance(r, int) and not isinstance(k, bool) and not isinstance(r, bool) \
                and k >= 2 and 0 <= r < k:
            return m.left.name, k, r
    return None


def implied_steps(domain: E.Node, names: set[str], solver) -> list[tuple[str, int, int]]:
    """``X % k == r`` that the domain implies without stating it (``B0 == 2 * (A1 // 2)`` with ``A1 == B0``: A1 is
    even), for each dim X of ``names`` that the domain divides by a constant k (``X // k``, ``X % k``, 2 <= k
    <= 64): (X, k, r), proved by z3. torch.export can state each as the derived Dim ``k * X_k + r``, as it
    states a written ``X % k == r`` (``modulo_step``)."""
    from ..logic.solver import Outcome

    seen: list[tuple[str, int]] = []

    def visit(n: E.Node) -> None:
        if isinstance(n, E.Arith) and n.op in ("//", "%") and isinstance(n.left, E.Var) and n.left.name in names \
                and isinstance(n.right, E.Const) and type(n.right.value) is int and 2 <= n.right.value <= 64:
            if (n.left.name, n.right.value) not in seen:
                seen.append((n.left.name, n.right.value))
        for c in E.children(n):
            visit(c)

    visit(domain)
    written = {step[:2] for step in map(modulo_step, conjuncts(domain)) if step is not None}
    seen = [pair for pair in seen if pair not in written]
    out: list[tuple[str, int, int]] = []
    model = solver.small_model([domain]) if seen else None
    for x, k in seen:
        if model is None or x not in model:
            continue
        r = model[x] % k
        step = E.Cmp("==", E.Arith("%", E.Var(x), E.Const(k)), E.Const(r))
        if solver.implies([domain], step).outcome is Outcome.PROVED:
            out.append((x, k, r))
    return out


def quotient(x: str, k: int, r: int, lo: int, hi: int) -> tuple[str, int, int]:
    """The root Dim of ``X % k == r`` (X == k * X_k + r) for X in [lo, hi]: its name and range."""
    return f"{x}_{k}", max(0, -((r - lo) // k)), (hi - r) // k


def definitions(premises: list[E.Node]) -> dict[str, E.Node]:
    found: dict[str, E.Node] = {}
    for p in premises:
        for part in conjuncts(p):
            d = definition(part, None, found)
            if d is not None:
                found[d[0]] = d[1]
    return found


def simplified(premises: list[E.Node], claim: E.Node, full: bool = True) -> E.Node | None:
    """The claim with the premises' definitions substituted (torch's integer functions simplify as they are
    built) and, when ``full``, simplified by sympy; None when nothing changes or it cannot be done (a form torch's
    sympy functions or the translation back do not take). Without ``full``, only a claim over a defined dim."""
    defs = definitions(premises)
    if not full and not (E.free_names(claim) & (set(defs) | set(divisors(premises)))):
        return None
    # torch (and its sympy functions) only now: the common query, with nothing to substitute, imports nothing
    # inside the solver's time budget
    from .._torch import static as CS
    from .._torch import translate as T

    names = E.free_names(claim) | set(defs) | {n for v in defs.values() for n in E.free_names(v)}
    try:
        import sympy

        syms = {n: sympy.Symbol(n, integer=True) for n in names}
        value = CS.to_sympy(claim, syms).xreplace({syms[n]: CS.to_sympy(v, syms) for n, v in defs.items()})
        value = _divisible(value, premises, syms, set(defs))
        if full and value not in (sympy.true, sympy.false) and sympy.count_ops(value) <= _MAX_OPS:
            value = sympy.simplify(value)
        out = T.to_node(value, {s: n for n, s in syms.items()})
    except (CS.TorchCannotSay, T.Unsupported, RecursionError, TypeError, ValueError, AttributeError):
        return None
    return None if out == claim else out


def divisors(premises: list[E.Node]) -> dict[str, E.Node]:
    """``X % Y == 0`` among the premises, X a name: X -> Y (X is a multiple of Y)."""
    found: dict[str, E.Node] = {}
    for p in premises:
        for part in conjuncts(p):
            if isinstance(part, E.Cmp) and part.op == "==" and part.right == E.Const(0) \
                    and isinstance(part.left, E.Arith) and part.left.op == "%" and isinstance(part.left.left, E.Var) \
                    and part.left.left.name not in E.free_names(part.left.right):
                found.setdefault(part.left.left.name, part.left.right)
    return found


def _divisible(value, premises: list[E.Node], syms: dict, defined: set[str]):
    """With ``X % Y == 0`` known, X is Y * q for some integer q: when the claim then no longer depends on q
    (``(H // Hk) * Hk == H``), that is its value; else the claim as it was."""
    import sympy

    from .._torch import static as CS

    known = {x: y for x, y in divisors(premises).items() if x in syms and x not in defined
             and E.free_names(y) <= set(syms)}
    if not known or value in (sympy.true, sympy.false):
        return value
    fresh = {x: sympy.Symbol(f"_q_{x}", integer=True) for x in known}
    tried = value.xreplace({syms[x]: CS.to_sympy(y, syms) * fresh[x] for x, y in known.items()})
    return tried if tried in (sympy.true, sympy.false) else value
