"""One regression test per class of hostile input found by hand (issue 10): each is refused cleanly (exit 2, one
line naming the file and the key) or gets a valid verdict, within seconds and a memory cap; never exit 4, a
hang or a traceback."""

import pytest

from tests.acceptance.hostile.harness import ROOT, judge, run
from tests.acceptance.hostile.inputs import BASES, SENTINEL
from tests.conftest import SDPA_CONTRACT, SDPA_MPS

ROWS, MM = BASES[:2]
ROWS_TEXT = ROWS.file.read_text()
MM_TEXT = MM.file.read_text()
FAST = 10.0  # CPU seconds: a refusal is never slow


def write(tmp_path, text: str | bytes, name: str = "c.toml"):
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def refused(argv: list[str], file, *words: str, seconds: float = FAST) -> str:
    """Run, expect exit 2 naming ``file`` and every word, quickly; the error line."""
    o = run([str(a) for a in argv])
    judge(o, names=str(file))
    assert o.code == 2, o
    assert o.cpu < seconds, o
    for w in words:
        assert w in o.stderr, (w, str(o))
    return o.stderr.strip()


def check(path, *words: str) -> str:
    return refused(["contract", "check", path], path, *words)


def verify(path, base=ROWS) -> list[str]:
    return ["verify", "op", base.op, "--contract", path, *base.kernel, "--jobs", "1"]


def replaced(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


# ---------------------------------------------------------------------------------------------------------
# Internal errors that were: TOML, key types, expressions, constants, op names, kernel files


@pytest.mark.parametrize("head,where", [
    ("x = " + "[" * 5000 + "]" * 5000, "line 1"),  # tomllib's own recursion gives up
    ("x = " + "{ a = " * 3000 + "1" + " }" * 3000, "line 1"),
    ("[" + ".".join(["a"] * 3000) + "]\nb = 1", "[a.a.a"),  # tables nest without recursion in the parser
    ("x = " + "[" * 40 + "]" * 40, "[x[0][0]"),
])
def test_toml_nested_thousands_deep(warm, tmp_path, head, where):
    check(write(tmp_path, head + "\n" + ROWS_TEXT), "nested deeper than 32", where)


def test_toml_integer_of_thousands_of_digits(warm, tmp_path):
    check(write(tmp_path, replaced(ROWS_TEXT, "max = 100000", "max = " + "9" * 5000)), "int64", "line 8")


@pytest.mark.parametrize("old,new,key,expected", [
    ('runtime_outputs = [{ shape = "(rows, D)", what = "the padded rows" }]', "runtime_outputs = 5",
     "paths.padded.runtime_outputs", "expected an array, found an integer 5"),
    ("max = 100000", 'max = "big"', "dims.N.max", "expected an integer"),
    ("keyword = true", 'keyword = "yes"', "args.flag.keyword", "expected true or false"),
    ('id = "padded"', 'id = "padded"\nera = 2026', "paths[0].era", "expected a string"),
    ('dims = ["N"]', "dims = 5", "suppress[0].dims", "expected an array"),
    ("pad = [8, 16]", "pad = { a = 1 }", "choices.pad", "expected an array"),
    ("pad = [8, 16]", "pad = [8, 1.5]", "choices.pad[1]", "expected an integer, a string or true or false"),
    ("guard_free = true", "guard_free = 1", "meta.guard_free", "expected true or false, found an integer 1"),
    ("default = false", "default = { a = 1 }", "args.flag.default", "expected an integer"),
    ('source = "kernels.py: rows"', "source = [1]", "paths.padded.source", "expected a string"),
    ('reason = "an example of every key"', "reason = 0", "suppress[0].reason", "expected a string"),
    ('what = "the padded rows"', "what = []", "paths.padded.runtime_outputs[0].what", "expected a string"),
    ('requires = ["D % 2 == 0 or mode == \'plain\'", "N >= 1"]', "requires = 3.5", "domain.requires",
     "expected an array"),
    ('doc = "rows"', "doc = 1979-05-27", "dims.N.doc", "expected a string, found a date"),
])
def test_a_key_of_the_wrong_type_names_the_key_and_the_type(warm, tmp_path, old, new, key, expected):
    check(write(tmp_path, replaced(ROWS_TEXT, old, new)), f"[{key}]", expected)


@pytest.mark.parametrize("expr", [
    " + ".join(["N"] * 900),  # a long + chain
    "not " * 400 + "true",  # nested not
    "-" * 1900 + "N > 0",  # nested unary minus
    "(" * 300 + "true" + ")" * 300,  # nested parentheses
    "min(" * 100 + "N" + ", 1)" * 100 + " > 0",
    "N > 0 and " * 300 + "true",  # long, and over the length limit
])
def test_deep_or_long_expressions(warm, tmp_path, expr):
    check(write(tmp_path, replaced(ROWS_TEXT, 'when = "true"', f'when = "{expr}"')), "[paths.padded.when]")


def test_a_deep_let_chain(warm, tmp_path):
    lets = 'l0 = "N"\n' + "".join(f'l{i} = "l{i - 1} + 1"\n' for i in range(1, 40))
    text = replaced(ROWS_TEXT, "[let]\n", "[let]\n" + lets)
    check(write(tmp_path, text), "[let.l32]", "a chain of 33 lets")


def test_lets_that_square_each_other_stop_at_the_constant_limit(warm, tmp_path):
    for seed, key in (("99999999999 * 99999999999", "[let.l6]"), ("N * N", "[let.l7]")):
        lets = f'l0 = "{seed}"\n' + "".join(f'l{i} = "l{i - 1} * l{i - 1}"\n' for i in range(1, 30))
        text = replaced(replaced(ROWS_TEXT, "[let]\n", "[let]\n" + lets), 'when = "true"', 'when = "l29 > 0"')
        check(write(tmp_path, text), key, "4096")


def test_a_product_of_thousands_of_digits(warm, tmp_path):
    big = " * ".join(["9223372036854775807"] * 40)
    lets = f'a = "{big}"\nb = "a * a"\nc = "b * b"\n'
    text = replaced(replaced(ROWS_TEXT, "[let]\n", "[let]\n" + lets), 'when = "true"', 'when = "c > 0"')
    check(write(tmp_path, text), "[let.b]", "2**4096")


def test_a_size_literal_beyond_int64(warm, tmp_path):
    text = replaced(ROWS_TEXT, 'shape = "(N, D)"', f'shape = "({10**100}, D)"')
    check(write(tmp_path, text), "[args.x.shape]", "outside int64")
    for bad in (f"max = {2**63}", f"max = {10**100}"):
        check(write(tmp_path, replaced(ROWS_TEXT, "max = 100000", bad)), "[dims.N.max]", "outside int64")


def test_the_largest_int64_sizes_get_a_verdict(warm, tmp_path):
    for old, new in (("max = 100000", f"max = {2**63 - 1}"),
                     ('shape = "(N, D)"', f'shape = "({2**63 - 1}, D)"')):
        o = run([str(a) for a in verify(write(tmp_path, replaced(ROWS_TEXT, old, new)))], seconds=60)
        judge(o)
        assert o.code in (0, 1, 3), o


@pytest.mark.parametrize("op", ["aten::__init__.__globals__", "aten::__dict__", "aten::mm.__class__",
                                "__class__::mro"])
def test_an_op_name_that_walks_attributes_is_an_unknown_op(warm, tmp_path, op):
    path = write(tmp_path, replaced(MM_TEXT, 'op = "aten::mm"', f'op = "{op}"'))
    for argv in (["verify", "op", op, "--contract", path], ["fuzz", "op", op, "--contract", path, "--examples", "1"],
                 ["gate", path]):
        refused(argv, path, "[op]: unknown op")


@pytest.mark.parametrize("op", ["aten::mm.default.x", "aten::mm\\n", "aten.mm", "aten::", "aten::m m"])
def test_an_op_name_outside_ns_name_overload_is_refused(warm, tmp_path, op):
    check(write(tmp_path, replaced(MM_TEXT, 'op = "aten::mm"', f'op = "{op}"')), "[op]: unknown op")


@pytest.mark.parametrize("op", ["aten::mm.default.x", "aten::", "aten::m m", "aten", "aten::__init__.__globals__.x",
                                "torch.ops.aten", "aten::mm.out.x"])
def test_an_op_argument_outside_ns_name_overload_is_an_unknown_op(warm, op):
    o = run(["verify", "op", op, "--contract", str(MM.file)])
    judge(o)
    assert o.code == 2 and f"unknown op {op!r}" in o.stderr, o


KERNEL_FILES = {
    "not UTF-8": b"def rows(x, pad, flag=False):\n    return x  # \xe9\xff\n",
    "100000 deep": b"x = " + b"-" * 100000 + b"1\n",
    "100000 terms": b"x = " + b"1+" * 100000 + b"1\n",
    "nested brackets": b"x = " + b"[" * 1000 + b"]" * 1000 + b"\n",
    "a null byte": b"x = 1\x00\n",
    "exits": b"import sys\nsys.exit(0)\ndef rows(x, pad, flag=False):\n    return x\n",
}


@pytest.mark.parametrize("name", sorted(KERNEL_FILES))
def test_a_bad_kernel_file_names_the_file(warm, tmp_path, name):
    kernel = write(tmp_path, KERNEL_FILES[name], "kernel.py")
    contract = ROWS.file
    for option in (["--meta", f"{kernel}:rows"], ["--meta-source", kernel]):
        refused(["verify", "op", ROWS.op, "--contract", contract, *option], kernel)


def test_an_oversized_kernel_file_or_a_device_is_refused(warm, tmp_path):
    big = tmp_path / "big.py"
    with open(big, "wb") as f:
        f.truncate((2 << 20) + 1)
    for path, words in ((big, "larger than the limit of 2 MiB"), ("/dev/zero", "not a regular file")):
        for option in (["--meta", f"{path}:rows"], ["--meta-source", path]):
            refused(["verify", "op", ROWS.op, "--contract", ROWS.file, *option], path, words)


def test_a_kernel_that_exits_is_a_kernel_failure_not_a_pass(warm, tmp_path):
    kernel = write(tmp_path, b"import sys\ndef rows(x, pad, flag=False):\n    sys.exit(0)\n", "kernel.py")
    o = run([str(a) for a in ["verify", "op", ROWS.op, "--contract", ROWS.file, "--meta", f"{kernel}:rows",
                              "--jobs", "1"]], seconds=60)
    judge(o)
    assert o.code == 1 and "SC007" in o.stdout and "SystemExit" in o.stdout, o


# ---------------------------------------------------------------------------------------------------------
# Hangs that were


def test_choices_of_a_trillion_cases_are_refused_with_the_product_and_the_choices(warm, tmp_path):
    choices = "".join(f"c{i} = [{', '.join(map(str, range(1000)))}]\n" for i in range(4))
    path = write(tmp_path, replaced(ROWS_TEXT, 'mode = ["plain", "flagged"]\n',
                                    'mode = ["plain", "flagged"]\n' + choices))
    line = check(path, "[choices]", "4000000000000 cases", "c0: 1000 values", "--max-cases")
    assert "over the limit of 4096" in line


def test_binding_work_is_bounded(warm, tmp_path):
    choices = "".join(f"c{i} = [0, 1]\n" for i in range(8))  # x 4 cases of the base: 1024
    every = " + ".join(f"c{i}" for i in range(8))
    paths = "".join(f'\n[[paths]]\nid = "p{i}"\nwhen = "{every} > {i % 8} and N > c0"\noutputs = ["(N + {every}, D)"]\n'
                    for i in range(40))
    text = replaced(ROWS_TEXT, 'mode = ["plain", "flagged"]\n', 'mode = ["plain", "flagged"]\n' + choices) + paths
    path = write(tmp_path, text)
    refused(["contract", "check", path, "--max-cases", "1024"], path, "expression nodes per case", "--max-cases")


def test_a_contract_that_never_ends_is_refused(warm, tmp_path):
    for argv in (["contract", "check", "/dev/zero"], ["verify", "op", ROWS.op, "--contract", "/dev/zero"]):
        refused(argv, "/dev/zero", "not a regular file (a character device)")
    check(write(tmp_path, ROWS_TEXT + "#" * (1 << 20)), "larger than the limit of 1 MiB")


# ---------------------------------------------------------------------------------------------------------
# Accepted when it must not be


@pytest.mark.parametrize("old,new,key", [
    ('when = "true"', "when = \"mode == 'boool'\"", "paths.padded.when"),
    ('exclude = ["pad == 8 and mode == \'flagged\'"]', 'exclude = ["pad == 8 and mode == \'flaged\'"]',
     "domain.exclude[0]"),
    ('"N >= 1"]', "\"N >= 1\", \"mode in ('plain', 'boool')\"]", "domain.requires[2]"),
    ('rows = "(N + P - 1) // P * P"', "rows = \"(N + P - 1) // P * P\"\nbad = \"mode != 'boool'\"", "let.bad"),
    ('{ when = "pad == 8", value = "8" }', '{ when = "pad == 32", value = "8" }', "let.P[0].when"),
])
def test_an_unknown_choice_value_is_a_load_error_naming_the_known_values(warm, tmp_path, old, new, key):
    check(write(tmp_path, replaced(ROWS_TEXT, old, new)), f"[{key}]", "is not a value of the choice",
          "its values:")


def test_dim_ranges_stay_within_int64(warm, tmp_path):
    check(write(tmp_path, replaced(ROWS_TEXT, "max = 100000", f"max = {2**63}")), "[dims.N.max]", "int64")
    o = run(["contract", "check", str(write(tmp_path, replaced(ROWS_TEXT, "max = 100000", f"max = {2**63 - 1}")))])
    judge(o)
    assert o.code == 0, o


def test_nothing_to_check_is_an_error_everywhere(warm, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    for argv in (["contract", "check", empty], ["gate", empty]):
        refused(argv, empty, "no contract")
    refused(["contract", "check", tmp_path / "missing"], tmp_path / "missing", "no such")


# ---------------------------------------------------------------------------------------------------------
# Contract mistakes reported as kernel failures


@pytest.mark.parametrize("old,new,key,words", [
    ('name = "scale"', 'name = "scal"', "args.scal", "has no argument 'scal'"),
    ('name = "dropout_p"', 'name = "dropout_p"\nkeyword = true', "args.is_causal", "argument 4 is 'dropout_p'"),
    ('name = "enable_gqa"\nkind = "bool"\nvalue = "enable_gqa"\nkeyword = true',
     'name = "enable_gqa"\nkind = "bool"\nvalue = "enable_gqa"', "args.enable_gqa", "keyword-only"),
])
def test_arguments_the_schema_does_not_accept_are_contract_errors(warm, tmp_path, old, new, key, words):
    path = write(tmp_path, replaced(SDPA_CONTRACT.read_text(), old, new))
    line = refused(["verify", "op", SDPA_MPS, "--contract", path, "--jobs", "1"], path, f"[{key}]", words)
    assert "SC007" not in line
    refused(["gate", path], path, f"[{key}]")


def test_extra_and_missing_arguments_are_contract_errors(warm, tmp_path):
    extra = write(tmp_path, MM_TEXT + '\n[[args]]\nname = "out"\nkind = "none"\n')
    refused(verify(extra, MM), extra, "[args.out]", "has no argument 'out'")
    missing = write(tmp_path, MM_TEXT.split('[[args]]\nname = "mat2"')[0] + '[[paths]]\nid = "p"\nwhen = "true"\n'
                                                                           'outputs = ["(M, N)"]\n', "m.toml")
    refused(verify(missing, MM), missing, "[args]", "requires the argument 'mat2'")


# ---------------------------------------------------------------------------------------------------------
# --max-cases, on every command; internal errors stay honest


def test_max_cases_on_every_command(warm, tmp_path):
    path = write(tmp_path, MM_TEXT)  # two cases
    for argv in (["contract", "check", path], verify(path, MM), ["gate", path],
                 ["fuzz", "op", MM.op, "--contract", path, "--examples", "1"], ["ref", "check", MM.op, "--contract", path]):
        refused([*argv, "--max-cases", "1"], path, "the choices make 2 cases", "over the limit of 1 cases")
    many = write(tmp_path, replaced(MM_TEXT, 'dtype = ["float32", "bfloat16"]',
                                    'dtype = ["float32", "bfloat16"]\nc = [' + ", ".join(map(str, range(2500))) + "]"),
                 "many.toml")
    check(many, "5000 cases")
    o = run(["contract", "check", str(many), "--max-cases", "5000"])
    judge(o)
    assert o.code == 0 and "5000 cases" in o.stdout, o


def test_an_internal_error_is_exit_4_and_asks_for_a_report(warm, tmp_path, monkeypatch):
    import shapecheck.contract.load

    def broken(*args, **kwargs):
        raise RuntimeError("a broken invariant")

    monkeypatch.setattr(shapecheck.contract.load, "load_contract", broken)
    o = run(["contract", "check", str(ROWS.file)])
    assert o.code == 4 and "please report" in o.stderr and "RuntimeError: a broken invariant" in o.stderr, o
    assert "Traceback" not in o.stderr and len(o.stderr.strip().splitlines()) == 1, o


def test_no_expression_runs_code(warm, tmp_path):
    for expr in (f"__import__('os').system('touch {SENTINEL}')", f"open('{SENTINEL}', 'w') is None"):
        check(write(tmp_path, replaced(ROWS_TEXT, 'when = "true"', f'when = "{expr}"')), "[paths.padded.when]")
    assert not SENTINEL.exists()


def test_the_shipped_contracts_are_far_from_every_limit(warm):
    o = run(["contract", "check", str(ROOT / "contracts"), str(ROOT / "docs" / "examples"), "--max-cases", "200"])
    judge(o)
    expected = len(list((ROOT / "contracts").rglob("*.toml")) + list((ROOT / "docs" / "examples").glob("*.toml")))
    assert o.code == 0 and o.stdout.count("ok: ") == expected >= 9, o


# ---------------------------------------------------------------------------------------------------------
# Found by the fuzzer


@pytest.mark.parametrize("old,new,key", [
    ('requires = ["D % 2 == 0 or mode == \'plain\'", "N >= 1"]', "requires = [1]", "domain.requires[0]"),
    ('exclude = ["pad == 8 and mode == \'flagged\'"]', 'exclude = ["pad"]', "domain.exclude[0]"),
    ('when = "true"', 'when = "N"', "paths.padded.when"),
    ('when = "true"', "when = 7", "paths.padded.when"),
    ('keyword = true\n', 'keyword = true\npresent = "pad"\n', "args.flag.present"),
    ('{ when = "pad == 8", value = "8" }', '{ when = 8, value = "8" }', "let.P[0].when"),
])
def test_a_number_where_a_condition_belongs_is_a_load_error(warm, tmp_path, old, new, key):
    """It reached z3 as a Boolean: exit 4 (``requires = [1]``, SHAPECHECK_HOSTILE_EXAMPLES=5000)."""
    path = write(tmp_path, replaced(ROWS_TEXT, old, new))
    check(path, f"[{key}]", "expected a condition")
    refused(verify(path), path, f"[{key}]", "expected a condition")
