"""SC001: the kernel branches on the dynamic size (as the #177603 kernel branched on L <= 8); both sides
return the right shape, so the guard is the only finding."""


def kernel(self, size):
    if size[0] <= 8:
        return self.new_empty(size)
    return self.new_empty(size)
