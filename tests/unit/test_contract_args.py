"""The contract language for ops beyond attention (tensor lists, shape arithmetic, int arguments from choices,
ScalarType arguments) and the contract's arguments checked against the op's schema at load time: every
mismatch is a contract error naming the file and key (exit 2 at `contract check` and at `verify`), never
SC007."""

import re
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shapecheck.cli.main import main
from shapecheck.contract.load import load_contract
from shapecheck.errors import ContractError
from shapecheck.logic import expr as E
from shapecheck.prove.verify import Options, verify_op

CAT = """
schema = 1
op = "aten::cat"

[dims]
B = {{ max = 64 }}
L1 = {{ min = 0, max = 4096 }}
L2 = {{ min = 0, max = 4096 }}
L3 = {{ min = 0, max = 4096 }}
D = {{ max = 1024 }}

[choices]
dtype = ["float32", "bfloat16"]

[[args]]
name = "tensors"
kind = "tensors"
length = 3
shapes = ["(B, L1, D)", "(B, L2, D)", "(B, L3, D)"]
dtype = "dtype"

[[args]]
name = "dim"
kind = "int"
value = 1

[[paths]]
id = "cat"
when = "true"
outputs = ["{out}"]
"""

STACK = """
schema = 1
op = "aten::stack"

[dims]
B = { max = 64 }
L = { min = 0, max = 4096 }
D = { max = 1024 }

[choices]
n = [0, 1, 2, 5]

[domain]
exclude = ["n == 0"]   # stack refuses an empty list

[[args]]
name = "tensors"
kind = "tensors"
length = "n"
shape = "(B, L, D)"
dtype = "float32"

[[args]]
name = "dim"
kind = "int"
value = 1

[[paths]]
id = "stack"
when = "true"
outputs = ["(B, n, L, D)"]
"""

SHUFFLE = """
schema = 1
op = "aten::{op}"

[dims]
N = {{ max = 64 }}
C = {{ max = 1024 }}
H = {{ max = 4096 }}
W = {{ max = 4096 }}
{r_dim}

[choices]
dtype = ["float32"]
{r_choice}

[[args]]
name = "self"
kind = "tensor"
shape = "{shape}"
dtype = "dtype"

[[args]]
name = "{factor}"
kind = "int"
value = "r"

[[paths]]
id = "shuffle"
when = "true"
outputs = ["{out}"]
"""


def write(tmp_path, text, name="c.toml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def shuffle(tmp_path, *, unshuffle=False, r_dim="", r_choice="r = [1, 2, 3]", out=None, shape=None):
    op, factor = ("pixel_unshuffle", "downscale_factor") if unshuffle else ("pixel_shuffle", "upscale_factor")
    shape = shape or ("(N, C, H * r, W * r)" if unshuffle else "(N, C * r * r, H, W)")
    out = out or ("(N, C * r * r, H, W)" if unshuffle else "(N, C, H * r, W * r)")
    return write(tmp_path, SHUFFLE.format(op=op, factor=factor, r_dim=r_dim, r_choice=r_choice, shape=shape,
                                          out=out))


def cli(argv, capsys):
    """Exit code and stderr lines of an in-process CLI run."""
    try:
        main([str(a) for a in argv])
        code = 0
    except SystemExit as exit_:
        code = exit_.code
    return code, capsys.readouterr().err.strip().splitlines()


def refused(path, op, capsys) -> str:
    """The one-line contract error, the same at `contract check` and at `verify` (exit 2 from both)."""
    lines = []
    for argv in (["contract", "check", path], ["verify", "op", op, "--contract", path]):
        code, err = cli(argv, capsys)
        assert code == 2 and len(err) == 1 and "SC007" not in err[0], (argv, code, err)
        lines.append(err[0])
    assert lines[0] == lines[1]
    return lines[0].removeprefix("shapecheck: error: ")


# ---------------------------------------------------------------------------------------------------------
# Tensor lists


@pytest.mark.slow
def test_cat_with_per_element_dynamic_sizes_is_proved(tmp_path):
    path = write(tmp_path, CAT.format(out="(B, L1 + L2 + L3, D)"))
    r = verify_op("aten::cat", contract=str(path))
    assert r.verdict.name == "PASS" and r.exit_code == 0
    assert [{p.path: p.status for p in c.paths} for c in r.cases] == [{"cat": "proved"}] * 2


def test_cat_with_a_wrong_output_is_refuted_at_a_point_of_the_element_dims(tmp_path):
    path = write(tmp_path, CAT.format(out="(B, L1 + L2, D)"))
    r = verify_op("aten::cat", contract=str(path))
    assert r.exit_code == 1
    v = r.violations[0]
    assert v.code == "SC002" and set(v.counterexample) == {"B", "L1", "L2", "L3", "D"}
    assert v.counterexample["L3"] != 0  # the only way the two shapes differ


@pytest.mark.slow
def test_stack_takes_its_length_from_a_choice(tmp_path):
    r = verify_op("aten::stack", contract=str(write(tmp_path, STACK)))
    assert r.exit_code == 0 and [c.case for c in r.cases] == ["n=1", "n=2", "n=5"]


@pytest.mark.slow
def test_torch_export_takes_a_tensor_list_and_agrees(tmp_path):
    path = write(tmp_path, CAT.format(out="(B, L1 + L2 + L3, D)"))
    r = verify_op("aten::cat", contract=str(path), options=Options(confirm_export=True, export_sample=1))
    checked = [c.export for c in r.cases if c.export is not None]  # the sample covers every choice value
    assert checked and all(x.ran and x.succeeded and x.agrees for x in checked), checked


def test_concrete_arguments_of_a_tensor_list_follow_each_element_shape(tmp_path):
    import torch

    from shapecheck.trace.arguments import make_arguments

    c = load_contract(write(tmp_path, CAT.format(out="(B, L1 + L2 + L3, D)")))
    case = next(c.cases())
    args = make_arguments(case, {"B": 2, "L1": 0, "L2": 3, "L3": 1, "D": 5})
    assert [tuple(t.shape) for t in args["tensors"]] == [(2, 0, 5), (2, 3, 5), (2, 1, 5)]
    assert all(t.dtype == torch.float32 for t in args["tensors"]) and args["dim"] == 1
    from shapecheck.search.examples import Example

    ex = Example(case, (("B", 2), ("L1", 0), ("L2", 3), ("L3", 1), ("D", 5)), 0)
    assert ex.shape("tensors[1]") == (2, 3, 5) and ex.shape("tensors") is None


def test_drawn_examples_of_a_tensor_list_meet_the_contract_on_the_real_op(tmp_path):
    import torch

    from shapecheck.search.strategies import inputs

    c = load_contract(write(tmp_path, CAT.format(out="(B, L1 + L2 + L3, D)")))
    out = c.paths[0].outputs[0]

    @settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(inputs(c, max_elements=4096))
    def check(drawn):
        got = torch.cat(drawn.arguments["tensors"], dim=drawn.arguments["dim"])
        assert tuple(got.shape) == E.evaluate(out, drawn.example.values)

    check()


@pytest.mark.parametrize("field, message", [
    ('length = 3\nshapes = ["(B, L1, D)", "(B, L2, D)"]',
     "[args.tensors.shapes]: 2 shapes for a list of length 3: give one shape per element (or 'shape' for all of "
     "them) (case dtype=float32)"),
    ('length = "B"\nshape = "(B, L1, D)"',
     "[args.tensors.length]: expected a non-negative integer fixed by the choices, found B (case dtype=float32)"),
    ('length = 2000\nshape = "(B, L1, D)"',
     "[args.tensors.length]: a list of 2000 tensors, over the limit of 1024 (case dtype=float32)"),
    ('shape = "(B, L1, D)"',
     "[args.tensors]: a tensors argument needs 'length', 'dtype' and one of 'shapes' (one per element) or 'shape' "
     "(every element)"),
    ('length = 1\nshape = "(B, L1, D)"\nshapes = ["(B, L1, D)"]',
     "[args.tensors]: a tensors argument needs 'length', 'dtype' and one of 'shapes' (one per element) or 'shape' "
     "(every element)"),
    ('length = 1\nshape = "(B, L1, D)"\nvalue = 3',
     "[args.tensors.value]: a tensors argument takes no 'value' (its keys: default, doc, dtype, keyword, length, "
     "present, shape, shapes)"),
])
def test_tensor_list_mistakes_are_load_errors_naming_the_key(tmp_path, field, message):
    text = CAT.format(out="(B, L1, D)").replace(
        'length = 3\nshapes = ["(B, L1, D)", "(B, L2, D)", "(B, L3, D)"]', field)
    with pytest.raises(ContractError) as info:
        load_contract(write(tmp_path, text))
    assert str(info.value) == f"{tmp_path / 'c.toml'}: {message}"


# ---------------------------------------------------------------------------------------------------------
# Arithmetic in input shapes, int arguments from choices


@pytest.mark.slow
@pytest.mark.parametrize("unshuffle", [False, True])
def test_pixel_shuffle_and_unshuffle_with_shape_arithmetic_and_r_a_choice(tmp_path, unshuffle):
    r = verify_op("aten::pixel_unshuffle" if unshuffle else "aten::pixel_shuffle",
                  contract=str(shuffle(tmp_path, unshuffle=unshuffle)))
    assert r.exit_code == 0 and len(r.cases) == 3
    assert all(p.status == "proved" for c in r.cases for p in c.paths)


def test_a_wrong_output_under_shape_arithmetic_names_the_free_dims(tmp_path):
    r = verify_op("aten::pixel_shuffle", contract=str(shuffle(tmp_path, out="(N, C, H * r, W)")))
    assert r.exit_code == 1
    bad = [v for v in r.violations if v.code == "SC002"]
    assert {v.case for v in bad} == {"dtype=float32,r=2", "dtype=float32,r=3"}  # r = 1 agrees
    assert all(set(v.counterexample) == {"N", "C", "H", "W"} for v in bad)  # never a composite size


META = '''
def unfold_factor(self, size):
    n, c, r, r2, h, w = size
    if r == 1:  # a shortcut for r = 1
        return self.new_empty((n, c, 1, 1, h, w))
    return self.new_empty((n, c, r, r2, h, w))


def unfold_factor_fixed(self, size):
    return self.new_empty(size)
'''

VIEW = """
schema = 1
op = "aten::view"

[dims]
N = { max = 64 }
C = { max = 512 }
r = { max = 8 }
H = { max = 1024 }
W = { max = 1024 }

[[args]]
name = "self"
kind = "tensor"
shape = "(N, C * r * r, H, W)"
dtype = "float32"

[[args]]
name = "size"
kind = "ints"        # SymInt[]: a dim may give it
value = "(N, C, r, r, H, W)"

[[paths]]
id = "view"
when = "true"
outputs = ["(N, C, r, r, H, W)"]
"""


@pytest.mark.slow
def test_a_dynamic_r_inside_an_input_shape_under_meta(tmp_path):
    (tmp_path / "kernels.py").write_text(META)
    path = write(tmp_path, VIEW)
    r = verify_op("aten::view", contract=str(path), meta=f"{tmp_path / 'kernels.py'}:unfold_factor")
    assert r.exit_code == 1
    (v,) = r.violations
    assert v.code == "SC001" and v.expr == "r == 1" and v.location.line == 4
    assert v.counterexample == {"N": 1, "C": 1, "r": 2, "H": 1, "W": 1}
    fixed = verify_op("aten::view", contract=str(path), meta=f"{tmp_path / 'kernels.py'}:unfold_factor_fixed")
    assert fixed.exit_code == 0


@pytest.mark.slow  # over 0.5 s on an idle core
def test_a_size_that_can_be_negative_on_the_domain_is_a_contract_error(tmp_path, capsys):
    path = shuffle(tmp_path, shape="(N, C * r * r, H - 8, W)", out="(N, C, (H - 8) * r, W * r)")
    assert refused(path, "aten::pixel_shuffle", capsys) == (
        f"{path}: [args.self.shape]: the size H - 8 is -7 at H=1 (case dtype=float32,r=1): a size must stay "
        "within [0, 2**63-1] wherever the domain holds; add a [domain] requires or narrow the dims' ranges")
    # H >= 10, not 9: at H = 9 the size H - 8 is 1, which torch.export's record of the output guards against
    # (SC022, docs/findings.md F13), a finding of its own
    fixed = path.read_text().replace("[choices]", '[domain]\nrequires = ["H >= 10"]\n\n[choices]')
    path.write_text(fixed)
    assert verify_op("aten::pixel_shuffle", contract=str(path)).exit_code == 0


@pytest.mark.parametrize("shape, message", [
    ("(N, C > 1, H, W)", "expected a number, found C > 1"),
    ("(N, C * r * r, H, -1)", "a size cannot be negative, found -1 in (N, C, H, -1)"),
    ("N * C", "expected a shape, found N * C"),
])
def test_a_shape_item_that_is_not_a_size_is_a_load_error(tmp_path, shape, message):
    with pytest.raises(ContractError) as info:
        load_contract(shuffle(tmp_path, shape=shape))
    assert str(info.value).endswith(f"[args.self.shape]: {message} (case dtype=float32,r=1)")


# ---------------------------------------------------------------------------------------------------------
# The schema check


def test_an_int_argument_given_by_a_dim_is_refused_when_the_schema_says_int(tmp_path, capsys):
    path = shuffle(tmp_path, r_dim="r = { max = 8 }", r_choice="")
    assert refused(path, "aten::pixel_shuffle", capsys) == (
        f"{path}: [args.upscale_factor.kind]: the schema says int (not SymInt): use a choice, not a dim (r is a dim)")


def test_a_static_dim_for_an_int_argument_points_to_choices(tmp_path, capsys):
    path = shuffle(tmp_path, r_dim="r = { min = 1, max = 8, dynamic = false }", r_choice="")
    assert refused(path, "aten::pixel_shuffle", capsys).endswith(
        "use a choice, not a dim (r is a dim); r has dynamic = false, which keeps it a symbolic size: declare it "
        "under [choices] (r = [1, 2, 3, 4, ..., 8]) to enumerate its values")


def test_separate_tensors_for_a_tensor_list_are_refused_by_name(tmp_path, capsys):
    text = CAT.format(out="(B, L1 + L2, D)").replace(
        'name = "tensors"\nkind = "tensors"\nlength = 3\nshapes = ["(B, L1, D)", "(B, L2, D)", "(B, L3, D)"]',
        'name = "a"\nkind = "tensor"\nshape = "(B, L1, D)"\ndtype = "dtype"\n\n[[args]]\nname = "b"\n'
        'kind = "tensor"\nshape = "(B, L2, D)"')
    path = write(tmp_path, text)
    message = refused(path, "aten::cat", capsys)
    assert message.startswith(f"{path}: [args.a]: aten::cat in torch ") and message.endswith(
        "has no argument 'a' (its arguments: tensors, dim)")


@pytest.mark.parametrize("old, new, message", [
    ('name = "dim"\nkind = "int"\nvalue = 1', 'name = "dim"\nkind = "float"\nvalue = 1.0',
     '[args.dim.kind]: the schema says int, not a float argument: use kind = "int"'),
    ('kind = "tensors"\nlength = 3\nshapes = ["(B, L1, D)", "(B, L2, D)", "(B, L3, D)"]',
     'kind = "tensor"\nshape = "(B, L1, D)"',
     '[args.tensors.kind]: the schema says Tensor[], not a tensor argument: use kind = "tensors"'),
    ('name = "dim"\nkind = "int"\nvalue = 1', 'name = "dim"\nkind = "int"\nvalue = 1\ndefault = 1',
     "[args.dim.default]: the schema's default is 0, not 1"),
    ('name = "dim"\nkind = "int"\nvalue = 1', 'name = "dim"\nkind = "none"',
     "[args.dim.kind]: the schema says int, which cannot be None; give its kind (int)"),
    ('name = "tensors"\nkind = "tensors"', 'name = "tensors"\nkind = "tensors"\npresent = "dtype == \'float32\'"',
     "[args.tensors.present]: the schema says Tensor[] (not Tensor[]?): the argument cannot be absent, but it "
     "is in case dtype=bfloat16"),
])
def test_schema_mismatches_name_the_key(tmp_path, capsys, old, new, message):
    text = CAT.format(out="(B, L1 + L2 + L3, D)")
    assert old in text
    path = write(tmp_path, text.replace(old, new, 1))
    assert refused(path, "aten::cat", capsys) == f"{path}: {message}"


NEW_ZEROS = """
schema = 1
op = "aten::new_zeros"

[dims]
N = {{ max = 64 }}
M = {{ max = 64 }}

[choices]
dtype = ["float32", "int64"]

[[args]]
name = "self"
kind = "tensor"
shape = "(N,)"
dtype = "float32"
present = {present}

[[args]]
name = "size"
kind = "ints"
value = "(N, M)"

[[args]]
name = "dtype"
kind = "{kind}"
value = "dtype"
keyword = true

[[paths]]
id = "zeros"
when = "true"
outputs = ["(N, M)"]
"""


def test_a_scalar_type_argument_takes_a_dtype_from_a_choice(tmp_path, capsys):
    r = verify_op("aten::new_zeros", contract=str(write(tmp_path, NEW_ZEROS.format(kind="dtype", present="true"))))
    assert r.exit_code == 0 and len(r.cases) == 2
    path = write(tmp_path, NEW_ZEROS.format(kind="str", present="true"), "str.toml")
    assert refused(path, "aten::new_zeros", capsys) == (
        f'{path}: [args.dtype.kind]: the schema says ScalarType?, not a str argument: use kind = "dtype"')


def test_a_schema_type_the_language_has_no_kind_for(tmp_path, capsys):
    extra = '\n[[args]]\nname = "device"\nkind = "str"\nvalue = "\'cpu\'"\nkeyword = true\n'
    path = write(tmp_path, NEW_ZEROS.format(kind="dtype", present="true") + extra)
    assert refused(path, "aten::new_zeros", capsys) == (
        f'{path}: [args.device.kind]: the schema says Device?, not a str argument: the contract language has no '
        'kind for it; kind = "none" passes None')


def test_only_an_optional_tensor_may_be_absent(tmp_path, capsys):
    path = write(tmp_path, NEW_ZEROS.format(kind="dtype", present="\"dtype == 'int64'\""))
    assert refused(path, "aten::new_zeros", capsys) == (
        f"{path}: [args.self.present]: the schema says Tensor (not Tensor?): the argument cannot be absent, but "
        "it is in case dtype=float32")


def test_the_shipped_contracts_fit_their_schemas(capsys):
    from tests.conftest import ROOT

    code, err = cli(["contract", "check", ROOT / "contracts"], capsys)
    assert code in (0, None) and err == []


TILE_LIB = '''
import torch

torch.library.define("sc_lang::tile", "(Tensor x, int factor, Tensor? bias=None) -> Tensor")


@torch.library.register_fake("sc_lang::tile")
def tile_fake(x, factor, bias=None):
    return x.new_empty((x.shape[0] * factor, x.shape[1]))
'''

TILE = """
schema = 1
op = "sc_lang::tile"

[dims]
N = {{ max = 1000 }}
D = {{ max = 1000 }}
{k_dim}

[choices]
bias = [false, true]
{k_choice}

[[args]]
name = "x"
kind = "tensor"
shape = "(N, D)"
dtype = "float32"

[[args]]
name = "factor"
kind = "int"
value = "k"

[[args]]
name = "bias"
kind = "tensor"
present = "bias"
shape = "(D,)"
dtype = "float32"

[[paths]]
id = "tiled"
when = "true"
outputs = ["(N * k, D)"]
"""


@pytest.mark.slow
def test_a_custom_op_is_checked_against_its_schema_once_imported(tmp_path, capsys):
    lib = tmp_path / "sc_lang_tile.py"
    lib.write_text(TILE_LIB)
    dim = write(tmp_path, TILE.format(k_dim="k = { max = 8 }", k_choice=""), "dim.toml")
    try:  # not imported yet: a note, not a silent ok
        main(["contract", "check", str(dim)])
    except SystemExit as exit_:
        assert exit_.code in (0, None)
    out = capsys.readouterr().out
    assert f"note: {dim}: sc_lang::tile is not registered in this process" in out
    code, err = cli(["contract", "check", dim, "--import", lib], capsys)
    assert code == 2 and err == [f"shapecheck: error: {dim}: [args.factor.kind]: the schema says int (not SymInt): "
                                 "use a choice, not a dim (k is a dim)"]
    choice = write(tmp_path, TILE.format(k_dim="", k_choice="k = [1, 3]"), "choice.toml")
    code, err = cli(["verify", "op", "sc_lang::tile", "--contract", choice, "--import", lib, "-j", "1"], capsys)
    assert code in (0, None) and err == []


SIZE_CONTRACT = """
schema = 1
op = "mylib::sized"

[dims]
A = {{ min = {a_lo}, max = {a_hi} }}
B = {{ min = {b_lo}, max = {b_hi} }}

[domain]
requires = ["{requires}"]

[[args]]
name = "x"
kind = "tensor"
shape = "(A, {size})"
dtype = "float32"

[[paths]]
id = "any"
when = "true"
outputs = ["unspecified"]
"""

SIZES = ["A - {c}", "A * B - {c}", "A - B + {c}", "(A + {c}) // 3 - B", "B * B - A * {c}", "A % 4 - {c}"]


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(template=st.sampled_from(SIZES), c=st.integers(0, 6), a=st.tuples(st.integers(0, 5), st.integers(0, 5)),
       b=st.tuples(st.integers(0, 5), st.integers(0, 5)), requires=st.sampled_from(["true", "A >= B", "A + B >= 4"]))
def test_a_composite_size_is_accepted_exactly_when_it_is_a_size_on_the_whole_domain(template, c, a, b, requires):
    import tempfile
    from pathlib import Path

    size = template.format(c=c)
    (a_lo, a_hi), (b_lo, b_hi) = sorted(a), sorted(b)
    points = [{"A": x, "B": y} for x in range(a_lo, a_hi + 1) for y in range(b_lo, b_hi + 1)
              if E.evaluate(E.parse(requires), {"A": x, "B": y}) is True]
    node = E.parse(size)
    negative = [p for p in points if E.evaluate(node, p) < 0]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.toml"
        path.write_text(SIZE_CONTRACT.format(a_lo=a_lo, a_hi=a_hi, b_lo=b_lo, b_hi=b_hi, requires=requires,
                                             size=size))
        try:
            load_contract(path)
        except ContractError as err:
            if not points:
                return  # an empty domain is refused for its own reason
            assert negative, str(err)
            assert "[args.x.shape]: the size" in str(err)
            shown = {k: int(v) for k, v in re.findall(r"(\w+)=(-?\d+)", str(err).split(" at ")[1].split(":")[0])}
            assert shown and set(shown) <= {"A", "B"}
            point = min(negative, key=lambda p: (p["A"], p["B"]))  # the least model, dims in declared order
            assert all(point[k] == v for k, v in shown.items()), (str(err), point)
        else:
            assert not negative, (size, negative[0])


def test_a_size_that_divides_by_zero_on_the_domain_is_a_contract_error(tmp_path, capsys):
    path = shuffle(tmp_path, shape="(N, C * r * r, H // (W - 1), W)", out="(N, C, H // (W - 1) * r, W * r)")
    assert refused(path, "aten::pixel_shuffle", capsys) == (
        f"{path}: [args.self.shape]: the size H // (W - 1) divides by zero at H=1, W=1 (case dtype=float32,r=1): "
        "add a [domain] requires or narrow the dims' ranges")


POOL = """
schema = 1
op = "aten::avg_pool2d"

[dims]
N = {{ max = 8 }}
C = {{ max = 8 }}
H = {{ min = 4, max = 64 }}
W = {{ min = 4, max = 64 }}

[[args]]
name = "self"
kind = "tensor"
shape = "(N, C, H, W)"
dtype = "float32"

[[args]]
name = "kernel_size"
kind = "ints"
value = {kernel}

[[args]]
name = "stride"
kind = "ints"
value = []

[[paths]]
id = "pool"
when = "true"
outputs = ["(N, C, H // 2, W // 2)"]
"""


@pytest.mark.slow
def test_a_fixed_size_int_list_takes_its_size_or_one_value(tmp_path, capsys):
    for kernel in ("[2]", "[2, 2]"):  # one value is repeated; stride = [] is the schema's default
        path = write(tmp_path, POOL.format(kernel=kernel), "ok.toml")
        assert verify_op("aten::avg_pool2d", contract=str(path)).exit_code == 0
    path = write(tmp_path, POOL.format(kernel="[2, 2, 2]"))
    assert refused(path, "aten::avg_pool2d", capsys) == (
        f"{path}: [args.kernel_size.value]: the schema says int[2]: 2 values (or 1, repeated), found 3")


AMAX = """schema = 1
op = "aten::amax"

[dims]
A = { min = 1, max = 64 }
B = { min = 1, max = 64 }
C = { min = 1, max = 64 }

[[args]]
name = "self"
kind = "tensor"
shape = "(A, B, C)"
dtype = "float32"

[[args]]
name = "dim"
kind = "ints"
value = [0, 2]

[[args]]
name = "keepdim"
kind = "bool"
value = true

[[paths]]
id = "reduce"
when = "true"
outputs = ["(1, B, 1)"]
"""


def test_an_int_1_list_takes_any_length(tmp_path):
    """``int[1] dim`` is a list a single int may stand for, not a list of one: a hunt's ``amax`` over dims
    [0, 2] was refused (exit 2) though eager and FakeTensorMode take it."""
    path = write(tmp_path, AMAX, "amax.toml")
    assert verify_op("aten::amax", contract=str(path)).exit_code == 0
