"""The compatibility layer, part 2: what torch decides on its own (the static reasoning torch.export applies to
a guard before installing it). Torch internals here as in ``_torch.core``, which this module builds on."""

from __future__ import annotations

from typing import Any

import sympy

from ..logic import expr as E
from .core import TORCH_VERSION, ShapeEnv

# ---------------------------------------------------------------------------------------------------------
# What torch decides on its own: the static reasoning torch.export applies to a guard before installing it


class TorchCannotSay(Exception):
    """The installed torch cannot answer whether it decides a condition (an API missing, or its own sympy
    functions failing on the expression): the caller reports inconclusive, never a pass."""


def to_sympy(node: E.Node, syms: dict[str, Any]) -> Any:
    """A contract expression as torch's sympy expression over ``syms`` (dim name -> sympy symbol), with
    torch's own integer functions (FloorDiv, PythonMod, Min, Max), as a traced kernel would produce it."""
    from torch.utils._sympy.functions import FloorDiv, Max, Min, PythonMod

    def t(n: E.Node) -> Any:
        return to_sympy(n, syms)

    if isinstance(node, E.Const):
        return sympy.true if node.value is True else sympy.false if node.value is False else sympy.Integer(node.value)
    if isinstance(node, E.Var):
        return syms[node.name]
    if isinstance(node, E.Arith):
        a, b = t(node.left), t(node.right)
        return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "//": lambda: FloorDiv(a, b),
                "%": lambda: PythonMod(a, b)}[node.op]()
    if isinstance(node, E.Neg):
        return -t(node.operand)
    if isinstance(node, E.Call):
        return (Min if node.fn == "min" else Max)(*[t(a) for a in node.args])
    if isinstance(node, E.Cmp):
        a, b = t(node.left), t(node.right)
        return {"==": sympy.Eq, "!=": sympy.Ne, "<": sympy.Lt, "<=": sympy.Le, ">": sympy.Gt,
                ">=": sympy.Ge}[node.op](a, b)
    if isinstance(node, E.And):
        return sympy.And(*[t(a) for a in node.args])
    if isinstance(node, E.Or):
        return sympy.Or(*[t(a) for a in node.args])
    if isinstance(node, E.Not):
        return sympy.Not(t(node.operand))
    if isinstance(node, E.Ite):
        return sympy.Piecewise((t(node.then), t(node.cond)), (t(node.other), True))
    raise TorchCannotSay(f"no sympy form for {E.to_text(node)}")


def _static_env() -> Any:
    """A fresh ShapeEnv for one static question: no guards, replacements or axioms of its own."""
    return ShapeEnv()


def static_decision(expr: Any, ranges: dict[str, tuple[int, int]], derived: dict[str, E.Node],
                    facts: list[E.Node]) -> bool | None:
    """What ``ShapeEnv._maybe_evaluate_static`` says of a condition (``static_answer``'s first half)."""
    return static_answer(expr, ranges, derived, facts)[0]


def static_answer(expr: Any, ranges: dict[str, tuple[int, int]], derived: dict[str, E.Node],
                  facts: list[E.Node]) -> tuple[bool | None, int]:
    """(torch's answer, how many dims the condition reads once the derived dims are replaced). A condition
    torch leaves undecided is installed as a guard; ``produce_guards`` then rejects the ``Dim`` range only where
    the guard reads one dim (a univariate guard on a ranged size is a constraint violation). A guard over two or
    more dims joins export's multivariate inequalities, which it neither solves nor reports (torch 2.13,
    checked with strict export: ``N - min(N, M) >= 0`` is accepted, ``2 * (N // 2) - 2 < N`` is not).

    What ``ShapeEnv._maybe_evaluate_static`` (the check torch makes before it installs a guard, and again
    in ``produce_guards`` against the ``Dim`` ranges) says of a condition: True or False when torch decides it
    without a guard, None when it cannot (torch.export then installs the guard).

    ``expr``: torch's sympy condition over dim-named symbols (``_torch.translate.with_dim_names``) or a contract
    expression. Each dim is a backed size with its range in ``ranges`` (as export gives a ``Dim``), a derived
    dim (``Ci == 4 * C``) is replaced by its expression, and ``facts`` (earlier guards) are torch's axioms.
    Raises TorchCannotSay when the installed torch cannot answer."""
    try:
        from torch.utils._sympy.value_ranges import ValueRanges
    except ImportError as err:  # pragma: no cover - depends on the torch release
        raise TorchCannotSay(f"this torch ({TORCH_VERSION}) lacks {err.name}") from None
    evaluate = getattr(_static_env(), "_maybe_evaluate_static", None)
    if evaluate is None:  # pragma: no cover - depends on the torch release
        raise TorchCannotSay(f"this torch ({TORCH_VERSION}) has no ShapeEnv._maybe_evaluate_static")
    syms = {n: sympy.Symbol(f"s_{n}", integer=True, positive=True if lo >= 1 else None,
                            nonnegative=True if lo >= 0 else None) for n, (lo, _) in ranges.items()}
    try:
        by_name = {n: to_sympy(node, syms) for n, node in derived.items()}
        for _ in range(len(by_name)):  # a derived dim over another derived dim, to the end of the chain
            before = dict(by_name)
            for n in list(by_name):
                by_name[n] = by_name[n].xreplace({syms[m]: by_name[m] for m in by_name if m != n})
            if by_name == before:
                break
        replace = {syms[n]: v for n, v in by_name.items()}
        if isinstance(expr, E.Node):
            cond = to_sympy(expr, syms)
        else:
            cond = expr.xreplace({s: syms[s.name] for s in expr.free_symbols if s.name in syms})
        cond = cond.xreplace(replace)
        axioms = tuple(to_sympy(f, syms).xreplace(replace) for f in facts)
        if any(s not in set(syms.values()) for s in cond.free_symbols):
            raise TorchCannotSay(f"{cond} reads a size that is not a contract dim")
        if cond in (sympy.true, sympy.false):
            return bool(cond), 0
        used = sorted(cond.free_symbols, key=str)
        vr = tuple((s, ValueRanges(ranges[s.name[2:]][0], ranges[s.name[2:]][1])) for s in used)
        out = evaluate(cond, axioms=tuple(a for a in axioms if a not in (sympy.true, sympy.false)), var_to_range=vr)
    except TorchCannotSay:
        raise
    except Exception as err:  # noqa: BLE001 - torch's own sympy functions failing: it cannot say
        raise TorchCannotSay(f"torch's static evaluation failed: {type(err).__name__}: {err}") from None
    if out is sympy.true or out is True:
        return True, len(used)
    if out is sympy.false or out is False:
        return False, len(used)
    return None, len(used)
