"""The sample call of ``contract draft``: the first rank and dtype combination (of every ranked argument) that
the op's meta kernel accepts at concrete sizes, tried nearest the common case first. The arguments are
``schema_draft.Arg`` records (typed ``Any`` here: this module sits below ``schema_draft``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

#: concrete sizes of the sample call: tensor dims and SymInt[] entries (equal, so that view/expand/layer_norm's
#: sizes match the tensors'), and a SymInt argument (small, so that narrow's start + length fits)
TENSOR_SIZE, SYMINT_SIZE = 8, 2
#: tensor (rank, dtype) tried by the sample call, nearest the common case first
TENSOR_TRIES = ((2, "float32"), (1, "float32"), (3, "float32"), (4, "float32"), (0, "float32"), (5, "float32"),
                (1, "int64"), (2, "int64"), (0, "int64"), (3, "int64"), (2, "bool"))
LIST_TRIES = ((2, None), (1, None), (3, None), (4, None), (0, None))
SAMPLE_CALLS = 1500  # a refused sample costs about a millisecond

def int_sample(name: str) -> int:
    return 0 if "dim" in name else 2


def ranked_arg(a: Any) -> bool:
    return a.kind in ("tensor", "tensors") or (a.kind == "ints" and a.symbolic)


def sample_ranks(op: Any, args: list[Any]) -> None:
    """Each ranked argument's rank (and a tensor's dtype) from the first combination the kernel accepts at
    concrete sizes; a rank no call settles gets a default and a TODO."""
    from .._torch import schema as CL

    ranked = [a for a in args if ranked_arg(a)]
    tries = []
    for a in ranked:
        base = TENSOR_TRIES if a.kind != "ints" else LIST_TRIES
        if a.kind == "tensor" and "ind" in a.name:  # index, indices: integer tensors, most often 1-D
            base = tuple(sorted(base, key=lambda t: (t[1] != "int64", t[0] != 1)))
        if a.rank is not None:
            base = tuple((a.rank, d) for d in dict.fromkeys(d for _, d in base))
        tries.append(base)
    tried: list[tuple] = []

    def builders() -> Iterator[Any]:
        for combo in _nearest_first(tries):
            tried.append(combo)
            yield _builder(args, ranked, combo)

    found = CL.first_sample_that_runs(op, builders(), SAMPLE_CALLS) if ranked else None
    for a, (rank, dtype) in zip(ranked, tried[found] if found is not None else [(None, None)] * len(ranked)):
        if a.rank is not None:
            a.rank_from = a.rank_from or "--rank"
        if found is not None:
            a.rank, a.dtype = rank, dtype or a.dtype
            a.rank_from = a.rank_from or "a sample call"
        elif a.rank is None:
            a.rank = 2
            a.todo = "the rank: no sample call ran (pass --rank " + a.name + "=N)"


def _builder(args: list[Any], ranked: list[Any], combo: tuple) -> Any:
    def build(tensor: Any) -> tuple[list, dict]:
        chosen = {a.name: t for a, t in zip(ranked, combo)}
        values = [(a, _sample_value(a, chosen.get(a.name), tensor)) for a in args]
        return [v for a, v in values if not a.keyword_only], {a.name: v for a, v in values if a.keyword_only}
    return build


def _nearest_first(tries: list[tuple]) -> Iterator[tuple]:
    """Every combination of one entry per list, by the sum of the entries' positions (the likeliest first)."""
    from .candidates import nearest_first

    for idx in nearest_first([len(t) for t in tries]):
        yield tuple(t[i] for t, i in zip(tries, idx))


def _sample_value(a: Any, chosen: tuple | None, tensor: Any) -> Any:
    if a.kind == "dtype":
        from .._torch import audit as CA

        return CA.dtype_of(a.value)
    if a.kind == "tensor":
        rank, dtype = chosen
        return tensor((TENSOR_SIZE,) * rank, dtype)
    if a.kind == "tensors":
        rank, dtype = chosen
        return [tensor((TENSOR_SIZE,) * rank, dtype) for _ in range(2)]
    if a.kind == "ints" and a.symbolic:
        return [TENSOR_SIZE] * chosen[0]
    if a.kind == "int" and a.symbolic:
        return SYMINT_SIZE
    return a.value if a.kind != "none" else None
