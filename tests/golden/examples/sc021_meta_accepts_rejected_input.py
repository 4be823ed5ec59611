"""SC021: the meta kernel never looks at the index's rank, so it accepts a 2-D index (as torch 2.13's
meta_index_select does), where the runtime raises "Index is supposed to be a vector"."""


def kernel(self, dim, index):
    size = list(self.shape)
    size[dim] = index.numel()
    return self.new_empty(size)
