"""The reports of ``fuzz op`` and ``ref check`` as a ``result.run.RunResult``: each failure or runtime finding
becomes a ``Finding`` of its rule, so every renderer (text, json, github, sarif, junit) takes every command.
Their own text and JSON stay theirs (``RunResult.native``). Torch-free."""

from __future__ import annotations

from typing import Any

from ..contract.model import Contract
from ..findings import Finding, PathId, Verdict
from ..kernel.sources import INSTALLED, KernelSource
from .report import CaseResult, Report
from .run import ContractRun, RunResult


def _point(values: dict[str, Any]) -> dict[str, int]:
    return {k: int(v) for k, v in values.items()}


def _cases(violations: list[Finding], everything: str) -> list[CaseResult]:
    """One case result per case with findings (fail unless every finding is suppressed); one passing entry
    named ``everything`` when there is none."""
    by_case: dict[str, list[Finding]] = {}
    for v in violations:
        by_case.setdefault(v.case, []).append(v)
    if not by_case:
        return [CaseResult(everything, Verdict.PASS)]
    return [CaseResult(case, Verdict.PASS if all(v.suppressed for v in vs) else Verdict.FAIL)
            for case, vs in by_case.items()]


def _run(contract: Contract, report: Report, seconds: float, torch: str, source: KernelSource, command: str,
         native: Any) -> RunResult:
    return RunResult([ContractRun(contract.info, report)], 1, (1, 1), seconds, torch, source, command=command,
                     native=native)


def _fuzz_paths(f: Any) -> list[PathId]:
    return list(dict.fromkeys(PathId(p, era) for era, ps in f.paths.items() for p in ps))


def _fuzz_path(f: Any) -> PathId | None:
    """The contract path a fuzz failure's example fell in, when it fell in one (else None: see _other_paths)."""
    found = _fuzz_paths(f)
    return found[0] if len(found) == 1 else None


def _other_paths(f: Any) -> str:
    found = _fuzz_paths(f)
    return f" (paths: {', '.join(map(str, found))})" if len(found) > 1 else ""


def fuzz_result(contract: Contract, fuzz: Any, source: KernelSource = INSTALLED) -> RunResult:
    """A ``runtime.fuzz_report.FuzzReport`` as a run result: each shrunk failure is a finding of its rule."""
    violations = [Finding(code=f.code, case=f.case, path=_fuzz_path(f), expr=f"{f.check}: expected {f.expected}, got {f.got}",
                          counterexample=_point(f.dims), message=f"{f.message} (example {f.example}; replay: {f.replay or '-'})"
                          + _other_paths(f))
                  for f in fuzz.failures]
    report = Report(fuzz.op, fuzz.contract, fuzz.kernel, fuzz.verdict, tuple(_cases(violations, "generated examples")),
                    tuple(violations), fuzz.seconds, fuzz.torch)
    return _run(contract, report, fuzz.seconds, fuzz.torch, source, "fuzz", fuzz)


def ref_result(contract: Contract, ref: Any, torch: str) -> RunResult:
    """A ``runtime.refcheck.RefReport`` as a run result: each runtime finding (suppressed ones included) is a finding
    of its rule on its contract path."""
    found = ref.findings + ref.suppressed
    violations = [Finding(code=f.code, case=f.case, path=PathId(f.path, f.era), expr=f"{f.code} on {f.path}@{f.era}",
                            counterexample=_point(f.sizes), message=f.message, suppressed=f.suppressed)
                  for f in found]
    report = Report(ref.op, ref.contract, "runtime reference", ref.verdict, tuple(_cases(violations, "sampled inputs")),
                    tuple(violations), ref.seconds, torch)
    return _run(contract, report, ref.seconds, torch, INSTALLED, "ref check", ref)
