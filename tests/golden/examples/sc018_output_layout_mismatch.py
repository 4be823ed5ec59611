import torch


def kernel(q):
    stats = torch.float64 if q.dtype == torch.float64 else torch.float32
    return q.new_empty(q.shape), q.new_empty(q.shape[:-1], dtype=stats), None
