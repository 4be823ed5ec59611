"""The audit's comparison of a fake's result with the eager kernel's (``audit.differential.compare``), on the
plain descriptions ``_torch.audit.describe`` makes: ("T", shape, dtype, significant strides, device)."""

from __future__ import annotations

from shapecheck.audit.differential import compare


def _t(shape, strides, device="cpu", dtype="float16"):
    return ("T", tuple(shape), dtype, tuple(strides), device)


def test_a_fake_on_the_cpu_stands_for_the_eager_inputs_device():
    """The fake's inputs are cpu fakes; the eager kernel's are on --device. A CUDA output is where the fake's
    cpu output says; a meta output, or a cpu output of a CUDA kernel, is not."""
    fake = _t((8, 8, 8, 8), (512, 8, 64, 1))
    assert compare(_t((8, 8, 8, 8), (512, 8, 64, 1), "cuda:0"), fake, "cuda") == []
    assert compare(_t((8, 8, 8, 8), (512, 8, 64, 1), "cpu"), fake, "cpu") == []
    [(cls, what, detail)] = compare(_t((8, 8, 8, 8), (512, 8, 64, 1), "cpu"), fake, "cuda")
    assert (cls, what) == ("eager-dtype", "output 0 device") and "on cpu" in detail
    [(cls, what, _)] = compare(_t((8, 8, 8, 8), (512, 8, 64, 1)), _t((8, 8, 8, 8), (512, 8, 64, 1), "meta"))
    assert (cls, what) == ("eager-dtype", "output 0 device")


def test_strides_of_an_empty_output_are_not_compared_and_of_a_full_one_are():
    """An output with a 0 dim addresses no element (torch calls every empty tensor contiguous); the same
    strides at a non-empty shape are a finding."""
    assert compare(_t((0, 8, 8, 8), (None, 8, 64, 1), "cuda:0"), _t((0, 8, 8, 8), (None, 64, 8, 1)), "cuda") == []
    [(cls, what, _)] = compare(_t((2, 8, 8, 8), (512, 8, 64, 1), "cuda:0"), _t((2, 8, 8, 8), (512, 64, 8, 1)), "cuda")
    assert (cls, what) == ("eager-strides", "output 0 strides")


def test_a_shape_that_differs_is_eager_shape_with_both_shapes():
    """flash attention's debug mask (F1): the eager kernel's [8, 8, 128, 128], the fake's [8, 8, 8, 128]."""
    eager = ("L", (_t((8, 8, 8, 8), (512, 8, 64, 1), "cuda:0"), _t((8, 8, 128, 128), (131072, 16384, 128, 1), "cuda:0")))
    fake = ("L", (_t((8, 8, 8, 8), (512, 8, 64, 1)), _t((8, 8, 8, 128), (8192, 1024, 128, 1))))
    [(cls, what, detail)] = compare(eager, fake, "cuda")
    assert (cls, what) == ("eager-shape", "output 1 shape")
    assert "[8, 8, 128, 128]" in detail and "[8, 8, 8, 128]" in detail
