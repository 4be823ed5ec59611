"""The audit's representation variants (``audit.variants.representations``): the first inputs with the same sizes
non-contiguous and in another dtype, compared with the eager kernel. A fake that is right on contiguous float32
inputs and wrong on the others is found only there."""

from __future__ import annotations

import pytest

from shapecheck.audit.inputs import OpInputs, at_point, materialize
from shapecheck.audit.variants import representations

LIBRARY = "tests/kernels/representation_ops.py"


def _inputs(*trees):
    return OpInputs("x::y", "schema", tuple((f"a{i}", False, t) for i, t in enumerate(trees)))


def test_the_variants_lay_out_the_first_floating_tensor_and_change_the_first_tensors_dtype():
    base = _inputs(("tensor", ("a0_0", "a0_1", "a0_2", "a0_3"), (2, 3, 4, 5), "float32", "data:k"),
                   ("tensor", ("a1_0",), (3,), "float32"), ("tensor", ("a2_0", "a2_1"), (3, 3), "int64"))
    layout, dtype, wide, ints, int8, mixed, precision, weight = representations(base)
    assert layout.args[0][2] == ("tensor", ("a0_0", "a0_1", "a0_2", "a0_3"), (2, 3, 4, 5), "float32", "zeros",
                                 (0, 2, 3, 1))
    assert layout.args[1:] == base.args[1:] and "with dim 1 innermost" in layout.label
    # every tensor of the first tensor's dtype changes with it; the int64 one keeps its dtype
    assert [t[3] for _, _, t in dtype.args] == ["bfloat16", "bfloat16", "int64"]
    assert dtype.args[0][2][4] == "data:k" and dtype.label == "a0, a1 as bfloat16"
    assert dtype.dims() == base.dims()  # the same sizes: compared at the first inputs' points
    # float32 as float64 too: a kernel's generic path for other dtypes, which a fake limited to 16/32 bits refuses
    assert [t[3] for _, _, t in wide.args] == ["float64", "float64", "int64"] and wide.label == "a0, a1 as float64"
    # floating ones as int32 too (a reduction promotes integers)
    assert [t[3] for _, _, t in ints.args] == ["int32", "int32", "int64"] and ints.label == "a0, a1 as int32"
    # and as int8, a quantized kernel's codes (an int8 product accumulates in int32)
    assert [t[3] for _, _, t in int8.args] == ["int8", "int8", "int64"] and int8.label == "a0, a1 as int8"
    # and the second tensor of the first one's floating dtype alone in another: mixed dtypes
    assert [t[3] for _, _, t in mixed.args] == ["float32", "float64", "int64"]
    assert mixed.label == "a1 as float64 (the others stay float32)"  # promotion takes the wider one
    # and mixed precision: the first alone as bfloat16 beside float32 parameters (an adaptive norm's modulation)
    assert [t[3] for _, _, t in precision.args] == ["bfloat16", "float32", "int64"]
    assert precision.label == "a0 as bfloat16 (the others stay float32)"
    # and a quantized weight: the second alone as int8
    assert [t[3] for _, _, t in weight.args] == ["float32", "int8", "int64"]
    assert weight.label == "a1 as int8 (the others stay float32)"
    # no floating tensor of rank 2 or more: the first integer one is laid out otherwise, its fill kept (indices,
    # codes); an int64 first tensor goes to int32
    layout, only = representations(_inputs(("tensor", ("a0_0", "a0_1"), (3, 3), "int64", "range")))
    assert layout.args[0][2] == ("tensor", ("a0_0", "a0_1"), (3, 3), "int64", "range", (1, 0))
    assert only.label == "a0 as int32"
    assert representations(_inputs(("const", 1))) == []


def test_a_memory_order_gives_the_strides_of_that_layout_at_concrete_and_symbolic_sizes():
    import torch

    from shapecheck._torch import audit as CA

    tree = ("tensor", ("n", "c", "h", "w"), (2, 3, 4, 5), "float32", "zeros", (0, 2, 3, 1))
    inputs = _inputs(tree)
    with CA.concrete_fake_mode():
        (x,), _ = at_point(inputs, {"n": 2, "c": 3, "h": 4, "w": 5})
        assert tuple(x.shape) == (2, 3, 4, 5) and x.stride() == (60, 1, 15, 3)
        assert x.is_contiguous(memory_format=torch.channels_last)
    made = []
    (y,), _ = materialize(inputs, lambda d, e, dt, f: made.append(d) or torch.empty(e), lambda d, e: e)
    assert made == [("n", "h", "w", "c")] and y.stride() == (60, 1, 15, 3)
    (t,), _ = materialize(_inputs(("tensor", ("r", "k"), (3, 5), "float32", "zeros", (1, 0))),
                          lambda d, e, dt, f: torch.empty(e), lambda d, e: e)
    assert tuple(t.shape) == (3, 5) and t.stride() == (1, 3)


@pytest.mark.slow
def test_a_fake_wrong_only_for_another_layout_or_dtype_is_found_there_and_its_twin_is_clean():
    from shapecheck.audit.run import run_audit

    records = {r["op"]: r for r in run_audit(("reprs::*",), (LIBRARY,), jobs=1).records}
    found = {op.split("::")[1]: [(f["class"], f["expr"]) for f in r["findings"]] for op, r in records.items()}
    assert found["layout_ok.default"] == [] and found["dtype_ok.default"] == []
    # a dtype the eager kernel lacks on this device is not the fake's to refuse (pdist, svd in bfloat16 on the cpu)
    assert found["float_only.default"] == []
    # the first inputs' formula (0,) is their contiguous path's: a variant, not traced, is not held to it (a hunt's
    # false SC043 on embedding_bag with a transposed weight)
    assert found["fast_path.default"] == []
    [(cls, expr)] = found["layout_bad.default"]
    assert cls == "eager-strides" and expr == "output 0 strides (with x transposed (memory order (1, 0)))"
    [(cls, expr)] = found["dtype_bad.default"]
    assert cls == "eager-dtype" and expr == "output 0 dtype (with x as bfloat16)"
    variants = [v for v in records["reprs::dtype_bad.default"]["variants"] if v["status"] == "compared"]
    # the variant with x a rank up is compared in another memory order too, after the first inputs' own
    assert [v["args"] for v in variants] == ["x transposed (memory order (1, 0))", "x as bfloat16", "x as float64",
                                             "x as int32",
                                             "x as int8",
                                             "x=Tensor[rank 3, float32], x with dim 1 innermost (memory order (0, 2, 1))"]



@pytest.mark.slow
def test_a_clean_op_never_compared_with_an_eager_kernel_is_counted_apart():
    """A hunt found the summary's "clean" count holding ops that never met their eager kernel."""
    from shapecheck.audit.run import run_audit
    from shapecheck.render.audit import summary_line

    run = run_audit(("fakeonly::*",), ("tests/kernels/fake_only.py",), jobs=1)
    [rec] = run.records
    assert rec["status"] == "clean" and rec["eager"]["status"] == "none"
    assert run.counts()["clean_not_compared"] == 1
    assert "1 clean (1 of them not compared with the eager kernel)" in summary_line(run)


def test_integer_data_beside_integer_indices_gets_a_variant_with_the_data_as_floats():
    """take's search made its data int64 like its index: a fake that gives the output the index's dtype was right
    there. The data alone as float32 shows it (a mutant of meta_take passed)."""
    from shapecheck.audit.inputs import OpInputs
    from shapecheck.audit.variants import representations

    ints = OpInputs("aten::take.default", "schema", (("self", False, ("tensor", ("self_0",), (3,), "int64")),
                                                      ("index", False, ("tensor", ("index_0",), (3,), "int64"))))
    labels = [v.label for v in representations(ints)]
    assert "self as float32 (the others stay int64)" in labels
    (mixed,) = [v for v in representations(ints) if v.label == "self as float32 (the others stay int64)"]
    assert [t[3] for _, _, t in mixed.args] == ["float32", "int64"]
    floats = OpInputs("aten::mm.default", "schema", (("self", False, ("tensor", ("a", "b"), (3, 3), "float32")),
                                                      ("mat2", False, ("tensor", ("c", "d"), (3, 3), "float32"))))
    assert "mat2 as float64 (the others stay float32)" in [v.label for v in representations(floats)]
