"""`shapecheck contract draft OP`: a contract drafted from the op's schema loads as written, and verify runs on
it; ranks come from a sample call or --rank; dim equalities the kernel needs land in requires."""

import textwrap
import tomllib
from pathlib import Path

import pytest

from shapecheck.audit.schema_draft import draft_contract, plan_arg
from shapecheck.contract.load import load_contract
from shapecheck.contract.spec import ARG_KINDS
from shapecheck.errors import UserError
from shapecheck.kernel.load import installed_kernel
from shapecheck.prove.verify import Options, verify_contract
from tests.conftest import beyond_output_record, invoke


def _load(tmp_path, text):
    path = tmp_path / "draft.toml"
    path.write_text(text)
    return load_contract(path), tomllib.loads(text)


@pytest.mark.slow
@pytest.mark.parametrize("op, shapes, requires, output", [
    ("aten::bmm", ["(A0, A1, A2)", "(B0, B1, B2)"], ["A0 == B0", "A2 == B1"], "(A0, A1, B2)"),
    ("aten::pixel_shuffle", ["(A0, A1, A2)"], ["A0 % 4 == 0"], "(A0 // 4, 2 * A1, 2 * A2)"),
    ("aten::index_select", ["(A0, A1)", "(B0,)"], [], "(B0, A1)"),
])
def test_a_draft_of_a_real_aten_op_loads_and_verify_proves_it(tmp_path, op, shapes, requires, output):
    contract, data = _load(tmp_path, draft_contract(op))
    assert [a["shape"] for a in data["args"] if a["kind"] == "tensor"] == shapes
    assert set(requires) <= set(data.get("domain", {}).get("requires", []))
    (out,) = data["paths"][0]["outputs"]
    assert out["shape"] == output and out["layout"] == "contiguous" and out["dtype"] in ("dtype", "float32")
    report = verify_contract(contract, installed_kernel(op), Options(jobs=1))
    assert report.verdict.value == "pass", [v.message for v in report.violations]


def _broadcast_sides_only(report) -> None:
    """verify's violations of an in-place broadcasting op's draft, as written: only SC002 on a size-1 side (torch's
    in-place fake resizes ``self`` to the broadcast shape there, with a deprecation warning, where the eager kernel
    raises; no SC007, no other shape)."""
    for v in report.violations:
        assert v.code.value == "SC002" and 1 in v.counterexample.values(), (v.code, v.message)


@pytest.mark.slow
def test_a_draft_states_torch_s_broadcasting_as_the_broadcast_relation(tmp_path):
    """addmm's decomposition broadcasts the bias against the product through torch's ``_broadcast_shapes``, which
    under unbacked sizes asserts the sizes equal: the draft demands that equality or a size 1 on either side (it
    used to demand ``A1 == C1``, which eager and the fake refute with a bias of one column); mm's own check of the
    inner sizes stays an equality. The sides where the bias has a size 1 are traced too, and the output is one
    formula that z3 proves equal to each side's: the draft verifies on its own kernel as written."""
    text = draft_contract("aten::addmm")
    contract, data = _load(tmp_path, text)
    requires = data["domain"]["requires"]
    assert "B1 == C0" in requires and "A1 == C1 or A1 == 1 or C1 == 1" in requires, requires
    assert "A0 == B0 or A0 == 1 or B0 == 1" in requires and "A1 == C1" not in requires, requires
    assert [p["outputs"][0]["shape"] for p in data["paths"]] == ["(max(B0, A0), max(C1, A1))"], text
    report = verify_contract(contract, installed_kernel("aten::addmm"), Options(jobs=1))
    assert report.verdict.value == "pass", [v.message for v in report.violations]

@pytest.mark.slow
def test_kinds_choices_and_keyword_only_arguments_follow_the_schema(tmp_path):
    text = draft_contract("aten::avg_pool2d", {"self": 4})
    contract, data = _load(tmp_path, text)
    args = {a["name"]: a for a in data["args"]}
    assert args["self"]["shape"] == "(A0, A1, A2, A3)" and "# rank from --rank" in text
    assert args["kernel_size"] == {"name": "kernel_size", "kind": "ints", "value": [2, 2],
                                   "doc": "schema: int[2] kernel_size"}
    assert args["stride"]["value"] == [] and args["padding"]["value"] == [0, 0]
    assert args["ceil_mode"]["value"] == "ceil_mode" and data["choices"]["ceil_mode"] == [False, True]
    assert args["divisor_override"]["kind"] == "none"
    # every case traced: ceil_mode changes the output, so each side gets a path of its own
    assert [(p["when"], p["outputs"][0]["shape"]) for p in data["paths"]] == [
        ("not ceil_mode", "(A0, A1, A2 // 2, A3 // 2)"), ("ceil_mode", "(A0, A1, (A2 - 1) // 2 + 1, (A3 - 1) // 2 + 1)")]
    # the ceil branch's dead side (z3 proves it empty, torch cannot) is said, and no path is asked for it
    assert "the kernel asks 2 * ((A2 - 1) // 2) < A2" in text and "no [[paths]] for the other side" in text
    assert "the kernel branches on 2 * ((A2 - 1) // 2) >= A2" not in text
    report = verify_contract(contract, installed_kernel("aten::avg_pool2d"), Options(jobs=1))
    # only SC016, where torch cannot decide the ceil branch that z3 proves dead (kernel 2, stride 2, padding 0:
    # torch.export fails there too); no SC002: each case's outputs are its path's
    found = beyond_output_record(report.violations)  # F13's output-record guards aside (torch's, any kernel)
    assert found and {v.code for v in found} == {"SC016"}
    assert all("ceil_mode=true" in v.case for v in found)
    addmm = tomllib.loads(draft_contract("aten::addmm"))
    assert [(a["name"], a.get("keyword", False)) for a in addmm["args"]][-2:] == [("beta", True), ("alpha", True)]


def test_symint_arguments_are_dims_and_a_symint_list_takes_its_rank(tmp_path):
    _, data = _load(tmp_path, draft_contract("aten::new_empty", {"size": 3}))
    args = {a["name"]: a for a in data["args"]}
    assert args["size"]["value"] == ["size0", "size1", "size2"] and args["dtype"]["kind"] == "none"
    assert data["paths"][0]["outputs"][0]["shape"] == "(size0, size1, size2)"
    _, narrow = _load(tmp_path, draft_contract("aten::narrow"))
    assert "start + length <= A0" in narrow["domain"]["requires"]


def test_a_tensor_list_is_written_in_the_tensors_syntax():
    text = draft_contract("aten::cat")
    assert textwrap.dedent('''\
        [[args]]
        name = "tensors"
        kind = "tensors"
        length = "n"                 # a choice
        shapes = ["(A0, B0)", "(A1, B1)"]  # rank from a sample call
        dtype = "dtype"''') in text
    assert tomllib.loads(text)["choices"]["n"] == [2]
    if "tensors" not in ARG_KINDS:  # before tensor lists load, the draft says why it was not traced
        assert "# TODO: the outputs: this shapecheck cannot load `kind = \"tensors\"` yet" in text


def test_no_trace_leaves_the_outputs_unspecified_and_still_loads(tmp_path):
    _, data = _load(tmp_path, draft_contract("aten::bmm", trace=False))
    assert data["paths"][0]["outputs"] == ["unspecified"] and "domain" not in data


@pytest.mark.parametrize("type_text, kind", [("Tensor", "tensor"), ("Tensor?", "tensor"), ("Tensor[]", "tensors"),
                                             ("int", "int"), ("SymInt", "int"), ("int[2]", "ints"),
                                             ("SymInt[]", "ints"), ("float", "float"), ("Scalar", "float"),
                                             ("bool", "bool"), ("str", "str"), ("ScalarType", "dtype"),
                                             ("Layout?", "none")])
def test_each_schema_type_gets_its_kind(type_text, kind):
    a = plan_arg("x", type_text, False, False, None, None)
    assert a.kind == kind
    assert a.symbolic == type_text.startswith("SymInt") and a.optional == (type_text == "Tensor?")


@pytest.mark.parametrize("ranks, message", [({"nope": 2}, "aten::bmm has no argument 'nope'"),
                                            ({"self": 2}, None)])
def test_rank_names_a_schema_argument(ranks, message):
    if message is None:
        assert "(A0, A1)" in draft_contract("aten::bmm", ranks)
        return
    with pytest.raises(UserError, match=message):
        draft_contract("aten::bmm", ranks)


@pytest.mark.parametrize("args, expected", [
    (["aten::no_such_op"], "unknown op 'aten::no_such_op'"),
    (["aten::pixel_shuffle", "--rank", "upscale_factor=2"], "--rank upscale_factor=2: the schema says upscale_factor is int, which has no rank"),
    (["aten::bmm", "--rank", "self"], "'self': expected ARG=N"),
    # the last value won silently (hunt 26)
    (["aten::bmm", "--rank", "self=2", "--rank", "self=3"], "--rank self: given more than once (self=2, self=3)"),
    # no tensor and no SymInt argument: no size is symbolic, and a contract needs [dims] (was exit 4)
    (["aten::tril_indices"], "aten::tril_indices: nothing to draft: it takes no tensor and no SymInt argument"),
    # a 0-d tensor has no size either: the message names it rather than saying there is no tensor
    (["aten::linspace.Scalar_Tensor"], "nothing to draft: its only tensor argument (end) is 0-d in the draft's "
                                       "sample call"),
])
def test_draft_errors_are_one_line_exit_2(args, expected):
    res = invoke("contract", "draft", *args)
    assert res.returncode == 2 and expected in res.stderr and "Traceback" not in res.stderr, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_a_draft_takes_the_sample_the_search_finds_and_a_check_becomes_a_requires(tmp_path):
    """grid_sampler_2d takes 4-D tensors only, and a grid whose last dim is 2: no call at equal sizes of 8 runs.
    The ranks come from the search's sample (with no stale rank TODO), and the branch the sample sizes took into
    the kernel's own check (``grid last dimension must be 2``) becomes a requires of the other side."""
    text = draft_contract("aten::grid_sampler_2d")
    contract, data = _load(tmp_path, text)
    assert [a["shape"] for a in data["args"] if a["kind"] == "tensor"] == ["(A0, A1, A2, A3)", "(B0, B1, B2, B3)"]
    assert "the rank: no sample call ran" not in text
    assert "B3 == 2" in data["domain"]["requires"]
    assert data["paths"][0]["outputs"][0]["shape"] == "(A0, A1, B1, B2)"


@pytest.mark.slow
def test_a_data_dependent_size_takes_the_bounds_the_fake_asserts_in_the_dims(tmp_path):
    """bincount's fake asserts ``minlength <= n`` and a filter's ``n <= x.shape[0]``: the draft's ``sizes`` range
    says so (with the fake's own range), so that verify passes the draft instead of reporting SC020 for
    ``n = 1 < minlength``, a range the draft made up."""
    import tests.kernels.filter_ops  # noqa: F401 - registers the ops

    for op, key, want in (("aten::bincount", "min", "max(1, minlength)"),
                          ("sc_filter::keep_positive_fixed", "max", "min(2147483647, A0)")):
        contract, data = _load(tmp_path, draft_contract(op))
        out = data["paths"][0]["outputs"][0]
        assert out["sizes"]["n"][key] == want, out
        report = verify_contract(contract, installed_kernel(op), Options(jobs=1))
        assert report.verdict.value == "pass", [v.message for v in report.violations]


@pytest.mark.slow
def test_a_dim_list_takes_distinct_dims_and_a_layout_is_read_where_every_dim_is_over_1(tmp_path):
    """flip and _fft_r2c refuse a repeated dim ([0, 0] ran nowhere); slice's output is contiguous only where its
    first dim is 1, which the one sample point (the step past A0) happened to be: the draft says its strides."""
    for op in ("aten::flip", "aten::_fft_r2c"):
        contract, data = _load(tmp_path, draft_contract(op))
        assert next(a for a in data["args"] if a["name"] in ("dim", "dims"))["value"] == [0, 1]
        assert all(o != "unspecified" for p in data["paths"] for o in p["outputs"]), data["paths"]
        report = verify_contract(contract, installed_kernel(op), Options(jobs=1))
        assert report.verdict.value == "pass", [v.message for v in report.violations]
    contract, data = _load(tmp_path, draft_contract("aten::slice.Tensor"))
    (out,) = data["paths"][0]["outputs"]
    assert "layout" not in out and out["strides"] == "(A1 * step, 1)", out  # A1 >= 1: no max(1, A1)
    report = verify_contract(contract, installed_kernel("aten::slice.Tensor"), Options(jobs=1))
    # the draft's shape and strides hold; torch.export's record of the output keeps a guard against an output of one
    # row, and its program refuses A0 = 2, step = 2 (checked with a strict export, hunt 42's constant_pad_nd alike)
    assert {(v.code.value, v.expr) for v in report.violations} == {("SC022", "(step + A0 - 1) // step != 1")}, \
        [v.message for v in report.violations]


@pytest.mark.slow
def test_a_guard_or_false_whose_other_side_raises_becomes_a_requires(tmp_path):
    """select's fake asks ``guard_or_false(index >= size)`` and raises IndexError on the other side: the draft
    demands ``index < A0`` (verify passes it), where it used to leave the domain open (SC001 and SC007)."""
    contract, data = _load(tmp_path, draft_contract("aten::select.int"))
    assert "index < A0" in data["domain"]["requires"], data.get("domain")
    report = verify_contract(contract, installed_kernel("aten::select.int"), Options(jobs=1))
    assert report.verdict.value == "pass", [v.message for v in report.violations]


@pytest.mark.slow
def test_a_guard_or_false_whose_other_side_returns_other_outputs_is_a_path_of_its_own(tmp_path):
    """squeeze's decomposition asks ``guard_or_false(A0 == 1)`` and returns (A0, A1) on the side torch assumed;
    where A0 == 1 it returns (A1,). The draft traces both sides and gives each its own path (it used to give only
    the first, with a TODO, and verify then failed the draft with SC002 at A0 = 1): it verifies as written."""
    text = draft_contract("aten::squeeze.dim")
    contract, data = _load(tmp_path, text)
    assert [(p["when"], p["outputs"][0]["shape"]) for p in data["paths"]] == [("A0 != 1", "(A0, A1)"),
                                                                               ("A0 == 1", "(A1,)")], text
    report = verify_contract(contract, installed_kernel("aten::squeeze.dim"), Options(jobs=1))
    assert report.verdict.value == "pass", [v.message for v in report.violations]

@pytest.mark.parametrize("type_text, kind", [("str?", "none"), ("int?", "none"), ("ScalarType?", "none"),
                                             ("float?", "none"), ("SymInt[]?", "ints"), ("float[]?", "floats")])
def test_an_optional_scalar_with_no_default_is_absent_and_an_optional_list_is_given(type_text, kind):
    """div_.Tensor_mode's ``str? rounding_mode`` has no default: an empty string is no valid mode (SC007 on
    every draft of it), None is. An optional list is given, and absent once the eager kernel's sample has it so."""
    assert plan_arg("x", type_text, True, False, None, None).kind == kind


@pytest.mark.slow
@pytest.mark.parametrize("op, absent, given", [
    ("aten::div_.Tensor_mode", "rounding_mode", None),
    ("aten::upsample_nearest1d.vec", "output_size", ("scale_factors", [1.0])),
])
def test_a_draft_passes_what_its_eager_sample_passes(tmp_path, op, absent, given):
    """An optional argument the eager kernel's sample leaves out is absent in the draft, and a float list takes
    the sample's length (one scale per spatial dim): the drafts verify (before: SC007 on an empty rounding mode,
    and on both of output_size and scale_factors given), div_ but for the size-1 sides of its broadcasting."""
    contract, data = _load(tmp_path, draft_contract(op))
    args = {a["name"]: a for a in data["args"]}
    assert args[absent]["kind"] == "none"
    if given:
        assert args[given[0]]["value"] == given[1]
    report = verify_contract(contract, installed_kernel(op), Options(jobs=1))
    if op == "aten::div_.Tensor_mode":
        _broadcast_sides_only(report)
    else:
        assert report.verdict.value == "pass", [v.message for v in report.violations]


def test_an_integer_tensor_is_drawn_as_zeros_so_the_runtime_checks_take_valid_indices(tmp_path):
    """``fuzz op`` draws an integer tensor's values in [-8, 9) unless the contract says otherwise: on a draft of
    ``aten::_embedding_bag`` the eager kernel refused offsets starting at -8 (SC014 on a correct op). A draft now
    gives every integer tensor ``low = 0, high = 1`` with a TODO; float tensors keep their random values."""
    text = draft_contract("aten::index_select", {"self": 2}, trace=False)
    _, data = _load(tmp_path, text)
    args = {a["name"]: a for a in data["args"]}
    assert (args["index"]["low"], args["index"]["high"]) == (0, 1), args["index"]
    assert "low" not in args["self"] and "high" not in args["self"]
    assert "# TODO: the values the op accepts (low <= v < high)" in text


@pytest.mark.slow
def test_an_optional_tensor_the_accepted_sample_leaves_out_is_marked_a_guess(tmp_path):
    """bincount's eager kernel rejects the fake's sample (a 2-D weights); the search finds a call it accepts only
    without weights. The draft keeps the fake's rank for weights but says it is a guess (it was labelled "rank
    from a sample call", and eager rejects every such input), without marking the presence choice a TODO."""
    text = draft_contract("aten::bincount")
    _, data = _load(tmp_path, text)
    weights = next(a for a in data["args"] if a["name"] == "weights")
    assert weights["present"] == "has_weights"
    assert "accepted a call without weights (None)" in text and "shapecheck ref check" in text
    line = next(line for line in text.splitlines() if line.startswith("has_weights ="))
    assert "TODO" not in line


@pytest.mark.slow
def test_a_broadcast_the_sample_sizes_hide_is_not_copied_as_a_formula():
    """polar's fake returns its first operand's shape at the sample (all sizes equal), where the eager kernel
    broadcasts (abs (1, 1) with angle (1, 2) gives (1, 2)): drawn points of the path show it, so the formula is
    not copied and a TODO says what the eager kernel gave. Before, only the sample sizes were compared."""
    text = draft_contract("aten::polar")
    assert "the formula (A0, A1)" not in text and 'shape = "(A0, A1)", dtype = "complex64"' not in text
    # the first operand's shape is never copied: either no formula and a TODO with what the eager kernel gave, or,
    # since torch's cached answers are seen (hunt 53) and the trace explores the broadcast, the broadcast itself
    assert ('outputs = ["unspecified"]' in text and "# TODO: the eager kernel gives" in text) or \
        "(max(A0, B0), max(A1, B1))" in text, text
    load_contract_text(text)


@pytest.mark.slow
def test_paths_no_case_can_take_and_requires_the_others_imply_are_left_out():
    """glu: the trace's sides of `A1 // 2 <= A1` and `2 * (A1 // 2) > A1` are empty for every size, and the
    requires guarding them are implied by `A1 % 2 == 0`: one path and one requires remain (there were 6 and 15)."""
    text = draft_contract("aten::glu")
    doc = tomllib.loads(text)
    assert doc["domain"]["requires"] == ["A1 % 2 == 0"]
    assert [p["id"] for p in doc["paths"]] == ["sample"] and doc["paths"][0]["outputs"][0]["shape"] == "(A0, A1 // 2)"


def test_of_two_requires_that_say_the_same_the_shorter_and_earlier_stays():
    """hunt 39: channel_shuffle's own ``torch._check(c % groups == 0)`` and its reshape's numel check say the same;
    the draft kept the reshape's ``A0 * A1 == A0 * groups * (A1 // groups)``."""
    from types import SimpleNamespace

    from shapecheck.audit.draft_eager import prune_requires
    from shapecheck.audit.draft_outputs import Traced

    contract = SimpleNamespace(dims=[SimpleNamespace(name=n, min=1, max=64) for n in ("A0", "A1", "groups")])
    traced = Traced(requires=[("A1 % groups == 0", "the kernel asserts this at k.py:14"),
                              ("A0 * A1 == A0 * groups * (A1 // groups)", "the kernel needs these equal at k.py:28")])
    assert prune_requires(contract, traced)
    assert traced.requires == [("A1 % groups == 0", "the kernel asserts this at k.py:14")]


@pytest.mark.slow
def test_a_point_of_the_domain_the_eager_kernel_refuses_is_a_todo():
    """addmm's decomposition broadcasts self with the product; the eager kernel only expands self to it, so
    self (2, 1) with a (1, 1) product is refused inside the fake's domain: a TODO says so (the requires the fake
    does not ask for). mm, where fake and eager agree, gets none."""
    assert "# TODO: the eager kernel refuses A0=2" in draft_contract("aten::addmm")
    assert "the eager kernel refuses" not in draft_contract("aten::mm")
    # a choice value the CPU kernel lacks: _softmax's half_to_float on a float32 input
    softmax = draft_contract("aten::_softmax")
    assert "# TODO: the eager kernel refuses the call of 1 of 2 cases at their least sizes" in softmax
    assert "half_to_float=true" in softmax.split("the eager kernel refuses the call of")[1].split("\n")[0]


def test_an_op_that_returns_nothing_is_refused_in_one_line():
    res = invoke("contract", "draft", "aten::_foreach_zero_")
    assert res.returncode == 2 and "returns nothing" in res.stderr and "Traceback" not in res.stderr


def load_contract_text(text: str):
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "draft.toml"
        path.write_text(text)
        return load_contract(path)
