import pytest

from shapecheck.contract.find import normalize_op
from shapecheck.contract.load import load_contract
from shapecheck.errors import ContractError
from tests.conftest import SDPA_CONTRACT, invoke

GOOD = SDPA_CONTRACT.read_text()


def test_shipped_contract_shape(sdpa_contract):
    c = sdpa_contract
    assert c.dim_names == ("B", "H", "Hk", "L", "S", "E", "Ev")
    assert all(d.dynamic and d.min == 1 and d.max >= 2**31 - 1 for d in c.dims)
    cases = list(c.cases())
    assert {x.values["rank"] for x in cases} == {3, 4, 5}
    assert {x.values["mask"] for x in cases} == {"none", "bool", "float"}
    assert {x.values["is_causal"] for x in cases} == {False, True}
    assert {x.values["dtype"] for x in cases} == {"float32", "float16", "bfloat16"}
    ids = {(p.era, p.id) for p in c.paths}
    assert {("2026-03", "general"), ("2026-03", "vector-1pass"), ("2026-03", "vector-2pass")} <= ids
    assert {("current", "prefill"), ("current", "mpp"), ("current", "general-chunked"),
            ("current", "vector-1pass")} <= ids
    for case in cases:
        q = case.arg("query").shape
        for p in case.paths:
            assert p.outputs[0].items == q.items[:-1] + (p.outputs[0].items[-1],)
            assert str(p.outputs[0].items[-1]) == "Ev" and p.outputs[1] is None


def test_op_names_normalise():
    assert normalize_op("aten._x") == normalize_op("aten::_x") == normalize_op("torch.ops.aten._x.default")


BROKEN = [
    ("schema = 1", "schema = 7", "schema"),
    ('B = { min = 1, doc', 'B = { min = 5, max = 2, doc', "dims.B"),
    ('when = "not fast_2603"', 'when = "not fast_2603 or eval(L)"', "paths.general.when"),
    ('when = "not fast_2603"', 'when = "not fast_2603 and Q > 1"', "paths.general.when"),
    ('when = "not fast_2603"', 'when = "L ** 2 > 3"', "paths.general.when"),
    ('shape = "query.shape[:-3] + (Hk, S, E)"', 'shape = "query.shape[:-3] + (Hk, S, 1.5)"', "args.key.shape"),
    ('kind = "tensor"\ndtype = "dtype"', 'kind = "tensor"\ndtype = "float99"', "args.query.dtype"),
    ('id = "general"\nera = "2026-03"', 'id = "general"\nera = "2026-03"\nsauce = "x"', "paths[0].sauce"),
    ('rank = [3, 4, 5]', 'rank = []', "choices.rank"),
    ('requires = ["H % Hk == 0"', 'requires = ["H % Hk == \'x\'"', "domain.requires[0]"),
    ('[meta]\nguard_free = true', '[meta]\nguard_free = "yes"', "meta.guard_free"),
]


@pytest.mark.parametrize("old,new,key", BROKEN)
def test_malformed_contracts_name_file_and_key(tmp_path, old, new, key):
    assert old in GOOD
    path = tmp_path / "bad.toml"
    path.write_text(GOOD.replace(old, new, 1))
    with pytest.raises(ContractError) as info:
        load_contract(path)
    assert str(path) in str(info.value)
    assert f"[{key}" in str(info.value)


def test_not_toml(tmp_path):
    path = tmp_path / "x.toml"
    path.write_text("schema = [\n")
    with pytest.raises(ContractError, match="not valid TOML"):
        load_contract(path)


def test_cli_malformed_contract_exits_2_with_one_line(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(GOOD.replace('when = "not fast_2603"', 'when = "__import__(1)"', 1))
    res = invoke("verify", "op", "aten._scaled_dot_product_attention_math_for_mps", "--contract", path)
    assert res.returncode == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and "paths.general.when" in lines[0]
    assert "Traceback" not in res.stderr and res.stdout == ""


@pytest.mark.parametrize("old,new,key", [
    ('when = "not fast_2603"', "when = \"not fast_2603 and mask == 'boool'\"", "paths.general.when"),
    ('requires = ["H % Hk == 0"', "requires = [\"rank != 6\", \"H % Hk == 0\"", "domain.requires[0]"),
    ('fast_2603 = "vec_2603 and not is_causal"', "fast_2603 = \"vec_2603 and dtype != 'float99'\"", "let.fast_2603"),
])
def test_unknown_choice_values_are_load_errors_listing_the_known_values(tmp_path, old, new, key):
    path = tmp_path / "bad.toml"
    path.write_text(GOOD.replace(old, new, 1))
    with pytest.raises(ContractError) as info:
        load_contract(path)
    assert f"[{key}]" in str(info.value) and "is not a value of the choice" in str(info.value)


@pytest.mark.slow
def test_the_case_limit_is_an_argument_and_names_the_choices(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text(GOOD)
    assert len(list(load_contract(path, max_cases=108).cases())) == 108
    with pytest.raises(ContractError, match=r"\[choices\]: the choices make 108 cases \(rank: 3 values"):
        load_contract(path, max_cases=107)


def test_op_names_are_ns_name_overload():
    assert normalize_op("aten::mm.out") == "aten::mm.out" and normalize_op("aten.mm.default") == "aten::mm"
    for bad in ("aten::mm.default.x", "aten", "aten::", "aten::m m", "torch.ops.aten"):
        with pytest.raises(ValueError):
            normalize_op(bad)
