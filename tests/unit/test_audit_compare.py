"""The audit's comparison of a fake's result with the eager kernel's (``audit.differential.compare``), on the
plain descriptions ``_torch.audit.describe`` makes: ("T", shape, dtype, significant strides, device, aliased inputs)."""

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


def test_an_output_that_is_a_view_of_an_input_on_one_side_only_is_eager_alias():
    """describe names the inputs an output shares storage with, for real tensors and for fakes alike; a view
    on both sides agrees, a view against a new tensor is SC044 naming the input."""
    import torch

    from shapecheck._torch import audit as CA

    def described(fn, x, y):
        named = CA.named_tensors([("x", False), ("y", True)], [x], {"y": y})
        return CA.describe(fn(x, y), named)

    x, y = torch.ones(3, 4), torch.ones(4)
    with CA.concrete_fake_mode():
        fx, fy = torch.empty(3, 4), torch.empty(4)
        fake_view, fake_new = described(lambda a, b: a.t(), fx, fy), described(lambda a, b: a + b, fx, fy)
        fake_y = described(lambda a, b: b.view(2, 2), fx, fy)
    eager_view = described(lambda a, b: a.t(), x, y)
    assert eager_view[5] == ("x",) and fake_view[5] == ("x",) and fake_new[5] == () and fake_y[5] == ("y",)
    assert compare(eager_view, fake_view) == []
    [(cls, what, detail)] = compare(eager_view, _t((4, 3), (1, 4), dtype="float32") + ((),))
    assert (cls, what) == ("eager-alias", "output 0 aliasing") and "a view of x" in detail
    assert [c for c, _, _ in compare(described(lambda a, b: a * 2, x, y), fake_new)] == []
    [(cls, _, detail)] = compare(("T",) + fake_new[1:5] + ((),), fake_y[:1] + fake_new[1:5] + (("y",),))
    assert cls == "eager-alias" and "the fake a view of y" in detail


def test_an_error_without_a_message_names_the_line_that_raised():
    """hunt 31: a fake's bare ``assert`` was reported as "AssertionError: " and nothing more."""
    from shapecheck._torch import audit as CA

    def fake(x):
        if x <= 2:
            raise ValueError()  # as a bare ``assert`` (which pytest rewrites here) raises AssertionError()
        return x

    try:
        fake(1)
    except ValueError as exc:
        text = CA.call_error(exc)
    assert text.startswith("ValueError (no message) at test_audit_compare.py:") and ": raise ValueError()" in text, text
    assert CA.call_error(ValueError("bad size")) == "ValueError: bad size"
