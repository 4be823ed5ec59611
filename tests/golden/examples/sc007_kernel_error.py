"""SC007: the kernel reads a second size that a 1-D size list does not have."""


def kernel(self, size):
    return self.new_empty([size[0], size[1]])
