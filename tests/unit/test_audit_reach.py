"""Where the audit once did not look (a hunt that rebuilt historical fake-kernel bugs as custom ops): an index that
must be 1-D, a data-dependent size whose fake range the eager kernel leaves, a dtype check the fake lacks, a mixed
precision output dtype, and an
op whose eager kernel refuses every input the search makes (never a pass). Kernels: tests/kernels/audit_reach.py."""

from __future__ import annotations

import pytest

from shapecheck.audit.candidates import Arg
from shapecheck.audit.differential import compare
from shapecheck.audit.hints import hint

LIBRARY = "tests/kernels/audit_reach.py"


def test_an_error_asking_for_a_vector_or_a_dim_past_the_rank_moves_the_right_tensor():
    args = [Arg("src", "Tensor", False, [(2, "float32"), (1, "float32"), (3, "float32")], "tensor"),
            Arg("picks", "Tensor", False, [(2, "float32"), (1, "float32"), (3, "float32")], "tensor")]
    # "Index is supposed to be a vector": rank 1 first (the "is" no longer cuts off what it is supposed to be)
    assert hint(args, "IndexError: index_select(): Index is supposed to be a vector", ((2, "float32"), (2, "float32")))
    assert [a.options[0][0] for a in args] == [1, 1]
    # a dim past a 1-D tensor's rank: the first tensor of that rank wants rank dim + 1; the other keeps rank 1
    assert hint(args, "IndexError: Dimension out of range (expected to be in range of [-1, 0], but got 1)",
                 ((1, "float32"), (1, "float32")))
    assert args[0].options[0] == (2, "float32") and args[1].options[0] == (1, "float32")
    # a dtype "for index", naming no argument: the tensor whose name says it holds indices moves, the data stays
    pairs = [Arg("src", "Tensor", False, [(2, "float32"), (2, "int64")], "tensor"),
             Arg("outlier_cols", "Tensor", False, [(1, "float32"), (1, "int64")], "tensor")]
    assert hint(pairs, "RuntimeError: index_select(): Expected dtype int32 or int64 for index",
                 ((2, "float32"), (1, "float32")))
    assert pairs[0].options[0] == (2, "float32") and pairs[1].options[0][1] in ("int32", "int64")


@pytest.mark.parametrize(("error", "rank"), [
    ("RuntimeError: It is expected input_size equals to 5, but got size 3", 5),  # upsample_trilinear3d's eager kernel
    ("RuntimeError: Expected grad_output to be a tensor of dimension 4 but got: dimension 2", 4),  # its backward's
    ("RuntimeError: b should have at least 3 dimensions, but has 2 dimensions instead", 3),
    ("AssertionError: input.ndim must be > 3, got 2", 4),  # reflection_pad3d_backward's fake
    ("RuntimeError: Expected a tensor of dimension 3 and tensor.size[0] == 3 but got: dimension 2", 3),
])
def test_the_rank_an_error_asks_for_is_tried_first_not_the_one_it_got(error, rank):
    """Upsampling's eager kernels name the rank they want so (the search stayed at rank 3 and drafted a rank-3
    input the eager kernel refuses); the rank the call had ("but has 2 dimensions") is not one."""
    args = [Arg("self", "Tensor", False, [(2, "float32"), (1, "float32"), (3, "float32")], "tensor")]
    assert hint(args, error, ((2, "float32"),))
    assert args[0].options[0] == (rank, "float32")
    held = [Arg("self", "Tensor", False, [(2, "float32"), (1, "float32"), (3, "float32")], "tensor")]
    assert not hint(held, "RuntimeError: too many indices for tensor of dimension 2 (got 4)", ((2, "float32"),))


def test_an_error_in_words_moves_the_dtype_and_string_it_asks_for():
    """Errors of aten's eager kernels the search read wrong: "Got torch.float32" (a capital G) kept float32 first,
    "an integral dtype" and "a complex output tensor" named no dtype, "either add or multiply" no string (a
    random sample of 200 aten ops: 3 of them never reached an input)."""
    index = [Arg("self", "Tensor", False, [(2, "float32")], "tensor"),
             Arg("indices", "Tensor", False, [(1, "float32"), (1, "int64")], "tensor")]
    assert hint(index, "RuntimeError: expected indices to be long or int, got torch.float32", ((2, "float32"), (1, "float32")))
    assert index[0].options[0] == (2, "float32") and index[1].options[0][1] in ("int64", "int32")
    shift = [Arg("self", "Tensor", False, [(2, "float32"), (2, "int64")], "tensor")]
    assert hint(shift, "RuntimeError: rshift: Expected input tensor to have an integral dtype. Got torch.float32",
                ((2, "float32"),))
    assert shift[0].options[0] == (2, "int64")
    fft = [Arg("self", "Tensor", False, [(2, "float32")], "tensor"),
           Arg("out", "Tensor", True, [(2, "float32")], "tensor")]
    assert hint(fft, "RuntimeError: ihfft expects a complex output tensor, but got Float", ((2, "float32"), (2, "float32")))
    assert (2, "complex64") in [o for a in fft for o in a.options]
    # "a floating point or complex dtype" is met by the float32 call already: no complex64 first (hunt 51)
    loss = [Arg("self", "Tensor", False, [(2, "float32"), (2, "int64")], "tensor")]
    hint(loss, "RuntimeError: Input dtype must be either a floating point or complex dtype. Got: Long", ((2, "int64"),))
    assert loss[0].options[0][1] != "complex64"
    reduce = [Arg("self", "Tensor", False, [(2, "float32")], "tensor"), Arg("reduce", "str", False, ["sum"], "str")]
    assert hint(reduce, "RuntimeError: reduce argument must be either add or multiply.", ((2, "float32"), "sum"))
    assert {"add", "multiply"} <= set(reduce[1].options[:3])


def test_an_eager_size_outside_the_fakes_data_dependent_range_is_a_shape_disagreement():
    eager = ("T", (0,), "int64", (None,), "cpu")
    assert compare(eager, ("T", ("u0 in [2, inf]",), "int64", (None,), "cpu")) == [
        ("eager-shape", "output 0 shape", "the eager kernel returns [0]: size 0 in dim 0, where the fake's size is "
         "made from data, u0 in [2, inf]: outside that range (an exported program asserts it at run time and fails "
         "there)")]
    assert compare(eager, ("T", ("u0 in [0, inf]",), "int64", (None,), "cpu")) == []
    assert compare(eager, ("T", ("u0",), "int64", (None,), "cpu")) == []  # no range known: nothing to hold it to
    assert compare(("V", 7), ("V", "u3 in [0, 5]"))[0][:2] == ("eager-shape", "output 0 value")


@pytest.mark.slow
def test_each_bad_fake_is_found_its_twin_is_not_and_an_op_never_compared_is_inconclusive():
    from shapecheck.audit.run import run_audit

    run = run_audit(("reach::*",), (LIBRARY,), jobs=1)
    records = {r["op"].split("::")[1]: r for r in run.records}
    found = {op: {(f["class"], f["expr"]) for f in r["findings"]} for op, r in records.items()}
    assert ("eager-shape", "output 0 shape") in found["gather_cols_bad.default"]
    assert found["gather_cols_ok.default"] == set() and records["gather_cols_ok.default"]["eager"]["compared"] >= 5
    [(cls, expr)] = found["nonzero_rows_bad.default"]
    assert cls == "eager-shape" and "u0 in [2, inf]" in records["nonzero_rows_bad.default"]["findings"][0]["message"]
    assert found["nonzero_rows_ok.default"] == set()
    # one finding for the one check the fake lacks, whichever dtypes showed it (b as float64, a as bfloat16, b as int8)
    assert found["matmul_mixed_bad.default"] == {
        ("fake-accepts", "the fake returns where the eager kernel raises, with b as float64 (the others stay float32)")}
    assert found["matmul_mixed_ok.default"] == set()
    # mixed precision: bf16 activations beside float32 parameters, where the kernel has no float64 backend
    assert found["modulate_bad.default"] == {
        ("eager-dtype", "output 0 dtype (with x as bfloat16 (the others stay float32))")}
    assert found["modulate_ok.default"] == set() and records["modulate_ok.default"]["eager"]["compared"] >= 5
    # a 4-D-only fake refuses the 2-D call (SC042); its 4-D inputs, a call both take, are laid out channels-last too
    assert ("eager-strides", "output 0 strides (with x with dim 1 innermost (memory order (0, 2, 3, 1)))") in \
        found["pad4_bad.default"]
    assert {cls for cls, _ in found["pad4_ok.default"]} == {"fake-rejects"}
    # SymInt[] lists of axes and a permutation are constants: no specialization on them, and a permutation is found
    for op in ("sum_axes.default", "permute_axes.default"):
        assert records[op]["status"] == "clean" and records[op]["eager"]["compared"] >= 5, records[op]
    assert "perm=[1, 0]" in records["permute_axes.default"]["example"]
    # a fake whose signature lacks schema arguments: one finding naming them, with no eager kernel to compare
    [(cls, expr)] = found["few_args_bad.default"]
    assert (cls, expr) == ("fake-rejects", "the fake's signature takes no bias, p, scale"), found["few_args_bad.default"]
    assert found["few_args_ok.default"] == set() and records["few_args_ok.default"]["status"] == "clean"
    # a list of tensors is varied as a tensor is: a rank up (to 4, a batched image) and channels-last, mixed dtypes
    assert {("eager-strides", "output 0 strides (with xs=Tensor[rank 4, float32] each, each of xs with dim 1 innermost "
             "(memory order (0, 2, 3, 1)))"),
            ("eager-dtype", "output 0 dtype (with xs[1] as float64 (the others stay float32))")} <= \
        found["concat_bad.default"], found["concat_bad.default"]
    assert found["concat_ok.default"] == set()
    # a view the eager kernel refuses on a transposed x of another shape (2 x 6 as 3 x 4), which a reshape takes
    assert ("fake-accepts", "the fake returns where the eager kernel raises (with x transposed (memory order (1, 0)))") \
        in found["view_as_shape_bad.default"], found["view_as_shape_bad.default"]
    assert found["view_as_shape_ok.default"] == set()
    # an output size the search gave ones is compared at 2 x 2 too, where a channels-last output shows in its strides
    assert ("eager-strides", "output 0 strides (with x with dim 1 innermost (memory order (0, 2, 3, 1)))") in \
        found["upsample_bad.default"], found["upsample_bad.default"]
    assert "eager-strides" not in {cls for cls, _ in found["upsample_ok.default"]}, found["upsample_ok.default"]
    # int8: a quantized weight beside float activations, and int8 by int8 (accumulated in int32)
    assert ("eager-dtype", "output 0 dtype (with b as int8 (the others stay float32))") in found["qmm_bad.default"]
    assert ("eager-dtype", "output 0 dtype (with a, b as int8)") in found["qmm8_bad.default"], found["qmm8_bad.default"]
    assert found["qmm_ok.default"] == set(), found["qmm_ok.default"]
    magic = records["magic_only.default"]
    assert magic["status"] == "inconclusive" and magic["eager"]["status"] == "rejected"
    assert any(n.startswith("not compared: the eager kernel rejected every input tried") for n in magic["notes"])
    # traced to the end but never compared: listed apart from the ops explored in part (hunt 55)
    assert "reach::magic_only.default" in run.coverage()["not_compared"]
    assert "reach::magic_only.default" not in run.coverage()["inconclusive"]


def test_an_error_that_opens_with_its_subject_moves_that_argument_alone():
    """torch 2.14's group norm: "Expected weight to be a vector of size equal to the number of channels in input":
    the demand (rank 1) is weight's, though input is named too; input keeps its rank."""
    args = [Arg("input", "Tensor", False, [(2, "float32"), (1, "float32")], "tensor"),
            Arg("weight", "Tensor?", True, [(2, "float32"), (1, "float32")], "tensor")]
    error = ("RuntimeError: Expected weight to be a vector of size equal to the number of channels in input, but got "
             "weight of shape torch.Size([3, 3]) and input of shape torch.Size([3, 3])")
    assert hint(args, error, ((2, "float32"), (2, "float32")))
    assert args[0].options[0] == (2, "float32") and args[1].options[0][0] == 1


@pytest.mark.slow
def test_a_draft_keeps_a_symint_list_of_axes_a_constant():
    """hunt 31: ``audit --draft`` made an axis argument (tfl's ``SymInt dim``, ``SymInt[] squeeze_dims``) a size of
    its own, and verify then reported a false SC003 on it; the draft gives it a value, as every caller does."""
    from click.testing import CliRunner

    from shapecheck.cli.main import cli

    res = CliRunner().invoke(cli, ["contract", "draft", "reach::sum_axes", "--import", LIBRARY])
    assert res.exit_code == 0, res.output
    arg = res.output.split('name = "squeeze_dims"')[1].split("[[")[0]
    assert 'kind = "ints"' in arg and "value = [0, 1]" in arg and "dims" not in arg.split("doc")[0].replace(
        "squeeze_dims", "")


def test_the_schema_arguments_a_python_fake_cannot_take_are_named():
    """torch passes the positional arguments up to the last non-default one by position and a keyword-only one by
    name: a fake of fewer parameters cannot take the rest; one that demands a defaulted argument fails on every call
    (the audit's kernel-error, not a missing argument); torch's own meta_mm takes every argument of mm."""
    import torch

    from shapecheck._torch import audit as CA

    lib = torch.library.Library("sigs", "DEF")
    schema = "(Tensor q, Tensor? bias=None, float p=0.0, *, float? scale=None) -> Tensor"
    fakes = {"lacks_p": lambda q, bias=None, *, scale=None: q, "demands_bias": lambda q, bias, p=0.0, *, scale=None: q,
             "no_keyword": lambda q, bias=None, p=0.0: q, "takes_all": lambda q, *args, **kwargs: q}
    for name, fn in fakes.items():
        lib.define(name + schema)
        torch.library.register_fake(f"sigs::{name}", fn, lib=lib)
    gaps = {name: set(CA.unbindable(getattr(torch.ops.sigs, name).default)[1]) for name in fakes}
    assert gaps == {"lacks_p": {"p"}, "demands_bias": set(), "no_keyword": {"scale"}, "takes_all": set()}
    assert CA.unbindable(torch.ops.aten.mm.default)[1] == {}  # meta_mm(a, b, out_dtype=None, *, out=None)


def test_an_int_an_error_fixes_is_tried_at_that_value_even_where_no_option_had_it():
    """hunt 36: "embedding_2bit in ExecuTorch expects weight_quant_min == -2" (executorch's quantized_decomposed
    ops); the options of an int never held -2, so the eager kernel rejected every input and nothing was compared."""
    from shapecheck.audit.hints import int_hint

    low = Arg("weight_quant_min", "int", False, [1, 0, 2, 4, -1], "int")
    high = Arg("weight_quant_max", "int", False, [1, 0, 2], "int")
    assert int_hint([low, high], "AssertionError: embedding_2bit in ExecuTorch expects weight_quant_min == -2")
    assert low.options[0] == -2 and high.options == [1, 0, 2]
    group = Arg("group_size", "int", False, [1, 0, 2], "int")
    assert int_hint([group], "group_size must be > 1") and group.options[0] == 2
    big = Arg("block", "int", False, [1, 0, 2], "int")
    assert int_hint([big], "block must be at least 128") and big.options[0] == 128
    width = Arg("bits", "int", False, [4, 8], "int")
    assert int_hint([width], "bits must equal 8") and width.options[0] == 8


@pytest.mark.slow  # over 0.5 s on an idle core
def test_a_fake_that_demands_a_defaulted_argument_is_found_and_the_search_gives_it():
    """hunt 36/38: executorch's ``embedding_2bit.dtype`` fakes take ``dtype`` without its schema default, so every
    call that leaves it out raises TypeError under FakeTensorMode (strict export fails); with no eager kernel to
    compare, the audit called the op clean or found no inputs. The search now keeps that refusal as a finding and
    gives the argument from then on, so the fake's shape logic is traced too; the twin with the default is clean."""
    from shapecheck.audit.run import run_audit

    run = run_audit(("reach::cast*",), (LIBRARY,), jobs=1)
    records = {r["op"].split("::")[1]: r for r in run.records}
    [bad] = records["cast_bad.default"]["findings"]
    assert (bad["class"], bad["expr"]) == ("fake-rejects", "the fake's signature demands dtype")
    assert "missing 1 required keyword-only argument: 'dtype'" in bad["message"]
    assert records["cast_bad.default"]["traces"], records["cast_bad.default"]
    assert records["cast_ok.default"]["status"] == "clean" and records["cast_ok.default"]["findings"] == []


def test_an_error_naming_an_argument_in_the_plural_moves_that_argument():
    """"Expecting weights to be of dtype in [torch.int8, torch.uint8]" is about ``weight`` (executorch)."""
    args = [Arg("weight", "Tensor", False, [(2, "float32"), (2, "int8")], "tensor"),
            Arg("weight_scales", "Tensor", False, [(1, "float32"), (1, "int8")], "tensor")]
    assert hint(args, "AssertionError: Expecting weights to be of dtype in [torch.int8, torch.uint8], but got "
                       "torch.float32", ((2, "float32"), (1, "float32")))
    assert args[0].options[0][1] in ("int8", "uint8") and args[1].options[0] == (1, "float32")


@pytest.mark.slow  # over 0.5 s on an idle core
def test_an_int_the_kernels_compare_with_a_constant_is_tried_at_that_constant():
    """hunt 36: modelopt's ``if num_bits == 8 and exponent_bits == 4:`` (its CPU kernel, registered through
    ``torch.library.impl``) takes a branch of its own that the int options (default, then small magnitudes) may
    never reach. ``pack``'s eager kernel keeps one column at ``bits == 5``; the bad fake lacks that branch and was
    called clean; a ``bits`` is a constant every caller passes, so the twin's branch is no SC030."""
    from shapecheck.audit.run import run_audit

    run = run_audit(("reach::pack*",), (LIBRARY,), jobs=1)
    records = {r["op"].split("::")[1]: r for r in run.records}
    assert [(f["class"], f["expr"]) for f in records["pack_bad.default"]["findings"]] == [
        ("eager-shape", "output 0 shape")]
    assert "the eager kernel returns [3, 1], the fake [3, 3]" in records["pack_bad.default"]["findings"][0]["message"]
    assert records["pack_ok.default"]["status"] == "clean", records["pack_ok.default"]


def test_the_ints_a_kernel_compares_are_read_by_the_variable_they_are_compared_to():
    import torch

    from shapecheck._torch import kernel_code as KC

    lib = torch.library.Library("ints_read", "DEF")  # noqa: TOR901 - the test's own namespace
    lib.define("q(Tensor x, int num_bits, int exponent_bits, int group) -> Tensor")

    def fake(x, num_bits, exponent_bits, group):
        if num_bits == 8 and exponent_bits == 4:
            return x
        if 3 != group and (num_bits, group) == (6, 7):
            return x
        if exponent_bits in (1, 2):
            return x
        return x.new_empty(x.shape)

    torch.library.register_fake("ints_read::q", fake, lib=lib)
    assert KC.kernel_ints(torch.ops.ints_read.q.default) == {"num_bits": [8, 6], "exponent_bits": [4, 1, 2],
                                                             "group": [3, 7]}


@pytest.mark.slow  # over 0.5 s on an idle core
def test_an_op_never_compared_with_findings_is_no_pass_once_a_baseline_accepts_them(tmp_path):
    """hunt 40: deepspeed's ``all_to_all`` had a finding and an eager kernel that ran past its time limit on every
    input: no "not compared" note, so a baseline accepting the finding passed an op never compared."""
    import json

    from click.testing import CliRunner

    from shapecheck.cli.main import cli

    base = tmp_path / "base.json"
    args = ["audit", "--import", LIBRARY, "--ops", "reach::magic_guarded*", "-j", "1", "--no-cache", "--baseline",
            str(base)]
    CliRunner().invoke(cli, args)
    doc = json.loads(base.read_text())
    assert [f["rule"] for f in doc["findings"]] == ["SC030"]
    assert [u["op"] for u in doc["untraced"]] == ["reach::magic_guarded.default"]  # listed, with its reason
    base.write_text(json.dumps({**doc, "untraced": []}))  # the finding accepted, the op not excused
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 3, res.output
    assert "not compared: the eager kernel rejected every input tried" in res.output


def test_a_record_a_time_out_cut_short_is_not_cached():
    """hunt 40: optimum-quanto builds its C++ extension on the first eager call, past the 60 s limit; the record
    ("not compared: ... ran past 60 s") was cached, and later runs replayed it where a fresh run finds 2 SC041s."""
    from shapecheck.audit.run import _repeatable

    timed_out = {"notes": ["not compared: the eager kernel rejected every input tried: the eager kernel ran past "
                           "60 s; the fake returned on each"],
                 "eager": {"status": "rejected", "evidence": "the eager kernel rejected every input tried: the eager "
                                                             "kernel ran past 60 s"}, "variants": []}
    assert not _repeatable(timed_out)
    assert not _repeatable({"notes": [], "eager": {"evidence": ""},
                            "variants": [{"args": "bits=1", "status": "the eager kernel ran past 60 s"}]})
    assert _repeatable({"notes": ["not compared: the eager kernel rejected every input tried: RuntimeError: x"],
                        "eager": {"status": "rejected", "evidence": "RuntimeError: x"}, "variants": []})


def test_an_index_named_int_is_a_constant_and_an_absent_axis_is_tried_from_the_front():
    """hunt 40: deepspeed's ``all_to_all(..., int scatter_idx, ...)`` (a custom_op's SymInt) was made a size, and its
    ``if scatter_idx == 1`` an SC031; strict export keeps it a constant. optimum-quanto's ``int? axis`` takes 0 or -1
    only, and the variants tried 2 and 1: an axis is tried first and last."""
    from shapecheck.audit.candidates import Arg
    from shapecheck.audit.inputs import constant_int
    from shapecheck.audit.variants import _alternatives

    assert constant_int("scatter_idx") and constant_int("gather_idx") and not constant_int("seq_len")
    axis = Arg("axis", "int?", False, [None], "fixed")
    assert [v for v, _ in _alternatives(None, None, axis, ("const", None), 3)] == [0, -1]
    groups = Arg("groups", "int?", False, [None], "fixed")
    assert [v for v, _ in _alternatives(None, None, groups, ("const", None), 3)] == [2, 1]


@pytest.mark.slow  # over 0.5 s on an idle core
def test_a_variant_compared_at_a_few_points_meets_every_dim_apart():
    """hunt 40: optimum-quanto's int8 ``qbytes_mm`` refuses rows of a and b that differ; its int8 variant was
    compared at two points with every size 3 (a wrong PASS). A point with every dim apart (the inferred requires
    kept) is now among the points every variant is compared at."""
    from shapecheck.audit.run import run_audit

    run = run_audit(("reach::rows_mm*",), (LIBRARY,), jobs=1)
    [rec] = run.records
    found = {(f["class"], f["expr"]): f for f in rec["findings"]}
    f = found[("fake-accepts", "the fake returns where the eager kernel raises (with a, b as int8)")]
    assert f["counterexample"]["a_0"] != f["counterexample"]["b_0"], f


@pytest.mark.slow
def test_a_variant_the_eager_kernel_dies_on_is_not_compared_and_said_so():
    """hunt 41: amd-quark's ``fake_quantize_to_low_precision_fp`` aborts on int8 and bfloat16 inputs; those variants
    read "eager-rejects" and the op was clean with no word of the crashes."""
    from shapecheck.audit.run import run_audit

    [rec] = run_audit(("reach::dies_on_int8*",), (LIBRARY,), jobs=1).records
    status = {v["args"]: v["status"] for v in rec["variants"]}
    assert status["x as int8"] == "eager-crashed" and status["x as int32"] == "compared", status
    assert any(n.startswith("the eager kernel did not answer with x as int8 (") and "SIGABRT" in n
               for n in rec["notes"]), rec["notes"]


@pytest.mark.slow
def test_a_variant_the_eager_kernel_takes_only_on_zeros_says_so():
    """hunt 41: transformers' grouped_mm fake refuses a 3-D input, which the eager kernel takes only because offsets
    made up as zeros route no row; the first inputs' finding said so, the variants' did not."""
    from shapecheck.audit.run import run_audit

    [rec] = run_audit(("reach::routed_rows*",), (LIBRARY,), jobs=1).records
    [f] = [f for f in rec["findings"] if "Tensor[rank 3" in f["expr"]]
    assert f["class"] == "fake-rejects" and "made up as zeros" in f["message"] and "matrix" in f["message"], f


@pytest.mark.slow
def test_a_string_a_callee_compares_an_argument_with_is_tried_by_the_arguments_name():
    """hunt 41: amd-quark's ``non_scaled_real_quantize`` compares ``quant_dtype == "mx"`` in a callee; the word was
    past the first 8 the kernels hold, and the search never tried it."""
    from shapecheck.audit.run import run_audit

    [rec] = run_audit(("reach::named_mode*",), (LIBRARY,), jobs=1).records
    assert rec["status"] not in ("no-inputs", "not-run") and "mode='zeta'" in rec["example"], rec["example"]


@pytest.mark.slow
def test_a_clean_comparison_made_on_integer_data_of_zeros_alone_says_so():
    """hunt 41: transformers' grouped_mm_fallback_backward was clean, compared only where offsets of zeros route no
    row; with other offsets its eager kernel raises."""
    from shapecheck.audit.run import run_audit

    [rec] = run_audit(("reach::table_rows*",), (LIBRARY,), jobs=1).records
    notes = [n for n in rec["notes"] if n.startswith("the eager kernel returned on integer inputs made up as zeros")]
    assert len(notes) == 1 and "IndexError" in notes[0], rec["notes"]


@pytest.mark.parametrize("error", ["RuntimeError: quantile() q values must be in the range [0, 1]",
                                   "RuntimeError: normal expects all elements of std >= 0.0",
                                   "RuntimeError: invalid Poisson rate, expected rate to be non-negative"])
def test_an_eager_error_about_the_made_up_values_is_no_check_a_fake_lacks(error):
    """hunt 51: nanquantile, normal and poisson refuse the audit's random values; their fakes returning there is no
    finding (they were SC041)."""
    from shapecheck.audit.differential import about_data

    assert about_data(error)


def test_an_eager_error_about_two_tensors_sizes_is_a_check_even_with_a_data_word():
    """hunt 51: put_'s "Expected source and index to have the same number of elements" holds the data word
    "index " and was noted as the made-up data's, where its fake returns: a size check the fake lacks."""
    from shapecheck.audit.differential import about_data

    assert not about_data("RuntimeError: put_(): Expected source and index to have the same number of elements, but "
                          "got source.numel() = 4, index.numel() = 3")
    assert about_data("RuntimeError: index 7 is out of bounds for dimension 0 with size 3")


def test_warps_errors_name_the_dtype_and_the_rank_it_wants():
    """hunt 55: warp refused float coordinates tried as int64 ("Cannot convert Torch type torch.int64 to Warp type
    ... vec3f") and a 2-D array where it wants 1 ("expects an array with 1 dimension(s)"); neither moved an option."""
    args = [Arg("positions", "Tensor", False, [(2, "int64"), (2, "float32"), (1, "int64")], "tensor")]
    assert hint(args, "RuntimeError: Cannot convert Torch type torch.int64 to Warp type <class "
                      "'warp._src.types.vec3f'>", ((2, "int64"),))
    assert args[0].options[0] == (2, "float32")
    assert hint(args, "RuntimeError: Invalid argument positions: expects an array with 1 dimension(s)",
                ((2, "float32"),))
    assert args[0].options[0][0] == 1
