"""Hashes of frozen expression trees, computed once per node.

A tree is hashed on every solver-cache lookup (``logic.solver``), and the hash a frozen dataclass generates walks
the whole tree each time. The memo lives in the node's ``__dict__``, outside its fields (equality and ``repr``
never see it), and is left out when the node is pickled: a string's hash differs between processes.
"""

from __future__ import annotations

from collections.abc import Callable


def memo_hash(*classes: type) -> None:
    """Each class's hash computed once per instance, then kept; a pickled instance leaves it behind."""
    for cls in classes:
        cls.__hash__ = _memo(cls.__dict__["__hash__"])  # type: ignore[method-assign, assignment]
        cls.__getstate__ = state_without_hash  # type: ignore[method-assign, assignment]


def _memo(computed: Callable[[object], int]) -> Callable[[object], int]:
    def __hash__(self: object) -> int:
        memo = vars(self)
        h = memo.get("_hash")
        if h is None:
            h = memo["_hash"] = computed(self)
        return h

    return __hash__


def state_without_hash(self: object) -> dict[str, object]:
    """``__getstate__``: the node's fields, without the kept hash."""
    return {k: v for k, v in vars(self).items() if k != "_hash"}
