"""Every dtype of the installed torch by name, aliases included (part of the door into torch)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import torch


class _Dtypes(Mapping):
    """Every dtype of this torch by name (``DTYPES["float4_e2m1fn_x2"]``), aliases included: read from torch's
    module, as ``contract.dtypes`` validates them."""

    def __getitem__(self, name: str) -> torch.dtype:
        value = getattr(torch, name, None) if isinstance(name, str) else None
        if not isinstance(value, torch.dtype):
            raise KeyError(name)
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(n for n in dir(torch) if isinstance(getattr(torch, n, None), torch.dtype))

    def __len__(self) -> int:
        return sum(1 for _ in self)


DTYPES: Mapping[str, torch.dtype] = _Dtypes()
