"""pixel_shuffle kernels for the shipped contract, whose C appears only in its domain (``Ci == C * r * r``)."""


def branch_on_channels(self, upscale_factor):
    b, ci, h, w = self.shape
    r = upscale_factor
    c = ci // (r * r)
    if c > 1:  # a branch on the output's channel count: SC001 at C = 1
        return self.new_empty((b, c, h * r, w * r))
    return self.new_empty((b, 1, h * r, w * r))


def channels_last_always(self, upscale_factor):
    """The right shape in channels-last strides, where the runtime returns it contiguous: SC018 (hunt 58 B3)."""
    b, ci, h, w = self.shape
    r = upscale_factor
    return self.new_empty((b, ci // (r * r), h * r, w * r)).contiguous(memory_format=__import__("torch").channels_last)
