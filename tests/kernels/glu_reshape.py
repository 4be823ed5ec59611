"""glu with a reshape that raises at a halved size of 0, whatever the other dims, and glu with a row count made
from data (hunt 39)."""

import torch


def glu_reshape(a, dim=-1):
    torch._check(a.shape[-1] % 2 == 0, lambda: "Halving dimension must be even")
    b, c = torch.tensor_split(a, 2, -1)
    out = b * torch.sigmoid(c)
    return out.reshape(-1, a.shape[-1] // 2).view(out.shape)


def glu_rows(a, dim=-1):  # keeps the finite rows: a row count made from data
    b, c = torch.tensor_split(a, 2, -1)
    out = b * torch.sigmoid(c)
    return out[torch.isfinite(out).all(dim=-1)]
