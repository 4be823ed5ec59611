"""What an error says of the arguments an input search should try next, beyond the dtypes and ranks
``candidates`` reads itself: a tensor ``.item()`` met with several elements, a bound an error states of an
int argument, a dim past a tensor's rank, the words and dtypes it quotes. Each works on the search's arguments (``candidates.Arg``: a name, a kind, its options in order)."""

from __future__ import annotations

import re
from typing import Any

#: a call's tensor that ``.item()`` met with more than one element ("a Tensor with 9 elements cannot be converted
#: to Scalar"): no argument named, so the tensors after the first whose element count it is want rank 0
TO_SCALAR_RE = re.compile(r"a Tensor with (\d+) elements cannot be converted to Scalar")
#: an int argument's bound ("group_size must be > 1", "block_size should be at least 2", "bits must be positive")
INT_BOUND_RE = r"\s*(?:must|should|has to|needs to|is expected to|expected to)?\s*(?:be\s*)?" \
    r"(>=|>|<=|<|==|greater than or equal to|greater than|less than or equal to|less than|at least|at most|" \
    r"equal to|equals|equal|positive|non-negative|nonnegative)\s*(-?\d+)?"
INT_TESTS = {">=": lambda v, n: v >= n, ">": lambda v, n: v > n, "<=": lambda v, n: v <= n, "<": lambda v, n: v < n,
             "greater than or equal to": lambda v, n: v >= n, "greater than": lambda v, n: v > n,
             "less than or equal to": lambda v, n: v <= n, "less than": lambda v, n: v < n,
             "at least": lambda v, n: v >= n, "at most": lambda v, n: v <= n, "==": lambda v, n: v == n,
             "equal to": lambda v, n: v == n, "equals": lambda v, n: v == n, "equal": lambda v, n: v == n}


def item_of(tensors: list[Any], option: dict[str, Any], error: str, sizes: tuple[int, ...]) -> Any:
    """The tensor ``.item()`` met with several elements ("a Tensor with 9 elements cannot be converted to
    Scalar" names none): the last tensor after the first whose element count that is, to be tried at rank 0
    (one per error: all at once gave _fused_adagrad 0-d grads, and torch's heap broke)."""
    m = TO_SCALAR_RE.search(error)
    if m is None:
        return None
    count = int(m.group(1))
    held = [a for a in tensors[1:] if isinstance(option.get(a.name), tuple) and option[a.name][0] > 0
            and any(size ** option[a.name][0] == count for size in sizes)]
    return held[-1] if held else None


def int_hint(args: list[Any], wanted: str) -> bool:
    """The values of an int argument that a bound the error states of it (``group_size must be > 1``,
    ``weight_quant_min == -2``) allows, to the front of its options (the bound's own value where none does).
    Whether anything moved."""
    moved = False
    for a in args:
        if a.kind not in ("int", "sym"):
            continue
        m = re.search(rf"\b{re.escape(a.name)}\b" + INT_BOUND_RE, wanted)
        if m is None:
            continue
        word, number = m.group(1), m.group(2)
        if word in ("positive", "non-negative", "nonnegative"):
            test, n = (INT_TESTS[">"] if word == "positive" else INT_TESTS[">="]), 0
        elif number is not None:
            test, n = INT_TESTS[word], int(number)
        else:
            continue
        new = [o for o in a.options if test(o, n)] + [o for o in a.options if not test(o, n)]
        if not new or not test(new[0], n):  # no option the bound allows ("weight_quant_min == -2", hunt 36): its own
            new = [next(v for v in (n, n + 1, n - 1) if test(v, n)), *new]
        moved |= new[:1] != a.options[:1]
        a.options = new
    return moved


#: a ``dim`` argument past a tensor's rank ("Dimension out of range (expected to be in range of [-1, 0], but got
#: 1)"): the tensor of that rank (the first: the one a dim indexes is most often ``self``) wants the dim's rank
_DIM_RANGE_RE = re.compile(r"Dimension out of range \(expected to be in range of \[-(\d+), \d+\], but got (-?\d+)\)")


def past_rank(error: str, tensors: list[Any], option: dict[str, Any]) -> tuple[list[int], list[Any], list[Any]] | None:
    """A ``dim`` past a tensor's rank (``_DIM_RANGE_RE``): (the rank wanted, [the first tensor of the rank the error
    states], no alike ones), or None."""
    m = _DIM_RANGE_RE.search(error)
    if m is None or int(m.group(2)) >= 8:
        return None
    dim = int(m.group(2))
    first = of_rank(tensors, option, m.group(1))[:1]
    return ([dim + 1 if dim >= 0 else -dim], first, []) if first else None


def front_words(args: list[Any], words: list[str], dtypes: list[str], named: list[Any]) -> bool:
    """The strings an error quotes to the front of each str argument's options, the dtypes it names to the
    front of the dtype arguments it names. Whether anything moved."""
    moved = False
    for a in args:
        if a.kind == "str" and words:
            new = list(dict.fromkeys([*a.options[:1], *words, *a.options[1:]]))
            moved |= new != a.options
            a.options = new
        if a.kind == "dtype" and dtypes and a in named:
            new = list(dict.fromkeys([*dtypes, *a.options]))
            moved |= new[:2] != a.options[:2]
            a.options = new
    return moved


def of_rank(tensors: list[Any], option: dict[str, Any], got: str | None) -> list[Any]:
    """The tensors the call gave rank ``got`` (every tensor of the call when None)."""
    return [a for a in tensors if isinstance(option.get(a.name), tuple) and (got is None or option[a.name][0] == int(got))]
