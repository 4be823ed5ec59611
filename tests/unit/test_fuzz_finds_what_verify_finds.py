"""``fuzz op`` finds at least what ``verify op`` finds, on every kernel under tests/kernels (issue 22): fuzz runs a
fake the way torch does (FakeTensorMode with a ShapeEnv, backed sizes at the example, the Python dispatcher as
export has it: ``trace.fake_run``), starts from verify's counterexamples, and counts a guard the run installs
on the dynamic dims as torch.export would. So wherever verify fails a kernel, fuzz fails it too, on a failure
of a rule verify reported for that kernel (a guard verify reports as SC001, fuzz sees installed at the example).

One kind of finding is beyond any run on backed sizes: torch's size symbols are positive, so a branch between
a size of 0 and the others (``if x.numel() == 0``), or a ``guard_or_false`` fallback whose formula is wrong only
at 0 (``sym_max(b, 1)``), shows in no fake run at any example (at 0 the size is a constant, and the kernel takes
the branch that is right there); only verify's unbacked trace, which ranges over 0, sees it. Those kernels are
listed in ``BEYOND_BACKED``, and the test checks that they are the only misses and that each of their findings
has a counterexample or witness with a dim at 0.

Each target is a kernel of tests/kernels with the contract its tests use; the SDPA-MPS kernels run on three
cases (the unit tests' sample).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

import pytest

from tests.conftest import KERNELS, ROOT, SDPA_CONTRACT, SDPA_MPS

pytestmark = pytest.mark.slow

ATEN = ROOT / "contracts" / "aten"
SMALL = ("rank=4,mask=bool,is_causal=false,dtype=float32,enable_gqa=false",
         "rank=3,mask=none,is_causal=false,dtype=float16,enable_gqa=false",
         "rank=5,mask=float,is_causal=true,dtype=bfloat16,enable_gqa=true")


@dataclass(frozen=True)
class Target:
    op: str
    contract: str
    meta: str | None = None
    meta_source: str | None = None
    cases: tuple[str, ...] = ()
    module: str | None = None  # the module under tests/kernels that registers the op

    @property
    def id(self) -> str:
        return (self.meta or self.meta_source or self.op).rpartition("/")[2]


def _functions(name: str) -> list[str]:
    import ast

    tree = ast.parse((KERNELS / name).read_text())
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")
            and not n.decorator_list]


def targets() -> list[Target]:
    k = lambda f, fn: f"{KERNELS / f}:{fn}"  # noqa: E731
    out = [Target(SDPA_MPS, str(SDPA_CONTRACT), meta=k("sdpa_kernels.py", fn), cases=SMALL)
           for fn in _functions("sdpa_kernels.py")]
    out += [Target(SDPA_MPS, str(SDPA_CONTRACT), meta=k("fuzz_mutants.py", fn), cases=SMALL)
            for fn in _functions("fuzz_mutants.py")]
    out.append(Target(SDPA_MPS, str(SDPA_CONTRACT), meta_source=str(KERNELS / "regressed_registrations.py"),
                      cases=SMALL))
    aten = {"cross_broadcast": "linalg_cross", "cross_keeps_self_shape": "linalg_cross",
            "ceil_planted_in_a_later_case": None, "branch_excluding_a_point": None,
            "two_formulas_behind_one_return": None, "conv_forgets_the_padding": "convolution"}
    for fn, op in aten.items():
        contract = str(ATEN / f"{op}.toml") if op else str(KERNELS / "hidden_case.toml")
        out.append(Target(f"aten::{op or 'new_empty'}", contract, meta=k("aten_kernels.py", fn)))
    out += [Target("aten::index_select", str(ATEN / "index_select.toml"), meta=k("index_select_kernels.py", fn))
            for fn in _functions("index_select_kernels.py")]
    out += [Target("sc_outputs::attn", str(KERNELS / "output_kernels.toml"), meta=k("output_kernels.py", fn))
            for fn in _functions("output_kernels.py")]
    out += [Target("aten::avg_pool2d", str(ATEN / "avg_pool2d.toml"), meta=k("pooling_kernels.py", fn))
            for fn in _functions("pooling_kernels.py")]
    out += [Target("sctest::scaled_rows", str(KERNELS / "size_helpers.toml"), meta=k("size_helpers.py", fn))
            for fn in ("scales_round_up", "scales_round_up_wrong")]
    out += [Target("sctest::shuffle_channels", str(KERNELS / "shuffle_channels.toml"), meta=k("size_helpers.py", fn))
            for fn in ("unshuffle_channels", "unshuffle_channels_wrong")]
    out += [Target("sctest::attend_rows", str(KERNELS / "empty_batch.toml"), meta=k("empty_batch.py", fn))
            for fn in ("fallback_right", "fallback_wrong", "plain_branch")]
    out.append(Target("aten::new_empty", str(ROOT / "tests" / "golden" / "examples" / "new_empty.toml"),
                      meta=k("empty_batch.py", "hidden_dead_fallback")))
    out += [Target("screplay::rows", str(KERNELS / "custom_rows.toml"), module="tests.kernels.custom_rows"),
            Target("screplay::rows", str(KERNELS / "custom_rows.toml"), meta=k("custom_rows.py", "candidate"),
                   module="tests.kernels.custom_rows"),
            Target("sc_filter::keep_positive", str(KERNELS / "filter_ops.toml"), module="tests.kernels.filter_ops"),
            Target("sc_filter::keep_positive_fixed", str(KERNELS / "filter_ops_fixed.toml"),
                   module="tests.kernels.filter_ops"),
            Target("sc_filter::keep_positive_short", str(KERNELS / "filter_ops_short.toml"),
                   module="tests.kernels.filter_ops"),
            Target("aten::native_group_norm", str(KERNELS / "native_group_norm.toml"))]
    return out


#: a fuzz failure that shows the finding verify reports under the rule (the rules a fuzz check reports)
SHOWS = {"SC001": {"SC001", "SC022", "SC003", "SC004"}, "SC003": {"SC003", "SC001"}, "SC004": {"SC004", "SC001", "SC007"},
         "SC022": {"SC022", "SC001"}, "SC016": {"SC016", "SC022"}, "SC002": {"SC002", "SC011", "SC015"},
         "SC007": {"SC007"}, "SC017": {"SC017", "SC015"}, "SC018": {"SC018", "SC015"},
         "SC019": {"SC019", "SC015", "SC002"},
         "SC020": {"SC020", "SC015", "SC011"}, "SC021": set()}


BEYOND_BACKED = {"empty_batch.py:fallback_wrong", "empty_batch.py:plain_branch"}


@pytest.mark.parametrize("target", targets(), ids=lambda t: t.id)
def test_fuzz_fails_wherever_verify_fails(target):
    from shapecheck.findings import Verdict
    from shapecheck.kernel import sources
    from shapecheck.kernel.load import load_target
    from shapecheck.prove.verify import Options, verify_contract
    from shapecheck.rules import FAILING
    from shapecheck.runtime.fuzz import FuzzOptions, prepare, run

    if target.module:
        importlib.import_module(target.module)
    contract, kernel = load_target(target.op, target.contract, sources.from_options(target.meta, target.meta_source))
    report = verify_contract(contract, kernel, Options(jobs=1, cases=target.cases))
    failing = {v.code for v in report.violations if v.code in FAILING and not v.suppressed}
    fuzzed = run(prepare(contract, kernel, FuzzOptions(examples=25, seed=0, cases=target.cases)))
    found = {f.code for f in fuzzed.failures}
    if report.verdict is not Verdict.FAIL:
        return
    shown = set().union(*(SHOWS.get(code, {code}) for code in failing))
    if failing <= {"SC021"}:  # a [[rejects]] region lies outside the domain fuzz draws from: ref check's
        return
    if target.id in BEYOND_BACKED:
        zero = [v for v in report.violations if v.code in FAILING and not v.suppressed
                and any(0 in (p or {}).values() for p in (v.counterexample, v.witness))]
        assert zero and not found & shown, (target.id, failing, found)
        return
    assert fuzzed.verdict == "fail", (failing, fuzzed.notes)
    assert found & shown, (failing, found)
