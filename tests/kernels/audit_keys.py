"""Custom ops for the audit's one-report-per-disagreement keys and its reading of kernels registered through
torch's wrappers (hunt 43, bitsandbytes 0.50.2, rebuilt here):

- ``deq``: a fake with two checks at its ``def`` line (a positive blocksize, a uint8 A) the eager kernel makes
  neither of: two findings, not one;
- ``upd``: an eager kernel registered with ``torch.library.register_kernel`` (torch wraps it in
  ``_disable_dynamo``), which takes only the names it compares its string argument with;
- ``rows``: a fake that neither adds the eager kernel's extra row nor flattens a 3-D A's leading dims as it
  does: a size apart (2-D) and a rank apart (3-D), two findings."""

import torch

LIB = torch.library.Library("auditkeys", "DEF")
LIB.define("deq(Tensor A, Tensor absmax, int blocksize) -> Tensor")
LIB.define("upd(str name, Tensor g) -> Tensor")
LIB.define("rows(Tensor A) -> Tensor")


@torch.library.register_fake("auditkeys::deq", lib=LIB)
def _deq_fake(A, absmax, blocksize):
    torch._check(blocksize > 0, lambda: f"blocksize must be positive, got {blocksize}")
    torch._check(A.dtype == torch.uint8, lambda: f"A must be uint8, got {A.dtype}")
    return torch.empty_like(A, dtype=torch.float32)


def _deq(A, absmax, blocksize):  # takes any blocksize and any A dtype
    return A.to(torch.float32) * absmax.abs().max()


LIB.impl("deq", _deq, "CPU")


@torch.library.register_fake("auditkeys::upd", lib=LIB)
def _upd_fake(name, g):
    return torch.empty_like(g)


def _upd(name, g):
    if name not in ("adam", "lamb"):
        raise ValueError(f"Unsupported optimizer: {name}")
    return g * 2


torch.library.register_kernel("auditkeys::upd", "cpu", _upd, lib=LIB)


@torch.library.register_fake("auditkeys::rows", lib=LIB)
def _rows_fake(A):
    return torch.empty_like(A)


def _rows(A):
    flat = A.reshape(-1, A.shape[-1]) if A.dim() > 2 else A
    return torch.cat([flat, flat[:1]])


LIB.impl("rows", _rows, "CPU")


# the variants a hunt found missing (hunt 43): the first tensor one rank down, and float64 where it is float32
LIB.define("rowvec(Tensor A) -> Tensor")
LIB.define("quant(Tensor A) -> Tensor")


@torch.library.register_fake("auditkeys::rowvec", lib=LIB)
def _rowvec_fake(A):
    return torch.empty_like(A)


def _rowvec(A):  # a vector is one row
    return A.reshape(-1, A.shape[-1]).clone() if A.dim() < 3 else A.clone()


LIB.impl("rowvec", _rowvec, "CPU")


@torch.library.register_fake("auditkeys::quant", lib=LIB)
def _quant_fake(A):
    torch._check(A.dtype in (torch.float16, torch.bfloat16, torch.float32),
                 lambda: f"quantization only supports 16/32-bit floats, got {A.dtype}")
    return torch.empty_like(A, dtype=torch.uint8)


def _quant(A):  # any floating dtype: a generic path for the others
    torch._check(A.is_floating_point(), lambda: f"quantization takes floats, got {A.dtype}")
    return (A * 2).to(torch.uint8)


LIB.impl("quant", _quant, "CPU")



# a size that must divide the last dim (amd-quark's MX formats: shape[-1] % 32): none of the search's first sizes
LIB.define("blocks32(Tensor x) -> Tensor")


@torch.library.register_fake("auditkeys::blocks32", lib=LIB)
def _blocks32_fake(x):
    torch._check(x.shape[-1] % 32 == 0, lambda: f"the last dim must be divisible by 32, got {x.shape[-1]}")
    return x.new_empty(*x.shape[:-1], x.shape[-1] // 32)


def _blocks32(x):
    if x.shape[-1] % 32 != 0:
        raise ValueError(f"the last dim must be divisible by 32, got {x.shape[-1]}")
    return x.reshape(*x.shape[:-1], x.shape[-1] // 32, 32).amax(-1)


LIB.impl("blocks32", _blocks32, "CPU")


# an output that follows the second tensor's layout (litert-torch's gated delta update, hunt 46)
LIB.define("follow(Tensor q, Tensor v) -> Tensor")


@torch.library.register_fake("auditkeys::follow", lib=LIB)
def _follow_fake(q, v):
    return v.new_empty(v.shape)  # contiguous whatever v's layout


def _follow(q, v):
    return torch.zeros_like(v) + q.mean()


LIB.impl("follow", _follow, "CPU")

def samples(op):
    """The samples hook: ``rows`` on a matrix, then on a 3-D input (its eager kernel flattens the leading dims)."""
    if op == "auditkeys::rows.default":
        return [((torch.randn(4, 8),), {}), ((torch.randn(2, 4, 8),), {})]
    return []
