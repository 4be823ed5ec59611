import torch


def kernel(q):
    b, h, seq, e = q.shape
    stats = torch.float64 if q.dtype == torch.float64 else torch.float32
    return q.new_empty((b, seq, h, e)).transpose(1, 2), q.new_empty((b, h, seq), dtype=stats), q.new_empty((0,))
