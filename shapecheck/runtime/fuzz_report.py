"""What a fuzz run reports: the failure kinds (``CHECKS``), one ``Failure`` per shrunk failing example, the
``FuzzReport``, and the ``FuzzFailure`` exceptions a check raises (one subclass per kind, so that Hypothesis
shrinks and reports each kind separately).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..findings import Finding, PathId, Verdict
from ..rules import RuleCode

CHECKS = ("kernel-error", "meta-shape", "fake-shape", "guard", "runtime", "values")
"""Failure kinds: the meta kernel raised on a valid input; its shapes on meta tensors / under FakeTensorMode
differ from the contract (or from each other); the runtime disagrees with the contract or the meta kernel
(another path, a rejected input, another output 0); the runtime's values differ from the math.

Every failure carries a rule code (``rules.RULES``). A failure of the runtime reference has the code ``ref
check`` gives the same defect: "runtime" is SC010 (dispatch), SC014 (rejects), SC011 (output 0's shape
against a contract path) or SC015 (the meta kernel against the runtime where the contract states nothing:
dtype, density, a shape no path covers); "values" is SC012. The meta kernel's own checks are verify's rules:
"kernel-error" SC007, "meta-shape" and "fake-shape" SC002, "guard" SC001 (SC003, SC004 or SC022 where the
guard is a value, an assert or torch's helper's) (``CHECK_RULES``).

The kernel runs as torch runs fakes: under FakeTensorMode with a ShapeEnv, backed sizes at the example
(``trace.fake_run``). "meta-shape" is the kernel torch.export runs (the Python dispatcher on), "fake-shape"
plain FakeTensorMode's where it runs another kernel (upsample_nearest2d's meta registration)."""

CHECK_RULES = {"kernel-error": RuleCode.KERNEL_ERROR, "meta-shape": RuleCode.OUTPUT_SHAPE_MISMATCH,
               "fake-shape": RuleCode.OUTPUT_SHAPE_MISMATCH, "guard": RuleCode.GUARD_ON_DYNAMIC_DIM,
               "runtime": RuleCode.META_RUNTIME_MISMATCH, "values": RuleCode.RUNTIME_VALUES}
"""The rule of a failure whose check does not name a more precise one."""


@dataclass(frozen=True)
class Failure:
    check: str  # one of CHECKS
    example: str  # Example.text(): case;dims;seed=N
    case: str
    dims: dict[str, int]
    seed: int
    paths: dict[str, list[str]]  # era -> contract paths whose ``when`` holds at the example
    runtime_paths: dict[str, str]  # era -> the path the runtime reference took
    expected: str
    got: str
    message: str
    replay: str = ""  # a command that replays this example alone
    code: str = ""  # the rule (rules.RULES); runtime findings have the code `ref check` gives them

    def as_finding(self) -> Finding:
        """This failure as a finding of its rule: on its contract path when the example fell in exactly one
        (else the paths are listed in the message)."""
        paths = list(dict.fromkeys(PathId(p, era) for era, ps in self.paths.items() for p in ps))
        also = f" (paths: {', '.join(map(str, paths))})" if len(paths) > 1 else ""
        return Finding(code=RuleCode(self.code), case=self.case, path=paths[0] if len(paths) == 1 else None,
                       expr=f"{self.check}: expected {self.expected}, got {self.got}",
                       counterexample={k: int(v) for k, v in self.dims.items()},
                       message=f"{self.message} (example {self.example}; replay: {self.replay or '-'}){also}")


@dataclass(frozen=True)
class FuzzReport:
    op: str
    contract: str
    kernel: str
    verdict: Verdict  # pass | fail
    seed: int
    examples: int  # examples run (explicit, generated and shrinking)
    explicit: int  # examples taken from verify counterexamples
    seconds: float
    timings: dict[str, float]  # generation, tensors, meta, metal_ref, math, other
    failures: tuple[Failure, ...]
    notes: dict[str, int]  # things seen that are not failures, with counts
    paths: dict[str, int]  # contract paths (id@era) the examples fell in, with counts
    reference: str  # what checks 2 and 3 ran against, or why they were skipped
    verify: str = ""  # the verify verdict that supplied explicit examples, if any
    replay: str = ""  # a command that replays the whole run
    torch: str = field(kw_only=True)  # the torch version the run used

    @property
    def examples_per_second(self) -> float:
        return self.examples / self.seconds if self.seconds > 0 else 0.0

    @property
    def exit_code(self) -> int:
        return self.verdict.exit_code

    def as_findings(self) -> tuple[Finding, ...]:
        """Each shrunk failure as a finding of its rule, at its example (for SARIF, JUnit and GitHub output)."""
        return tuple(f.as_finding() for f in self.failures)

    def to_json(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        out["failures"] = [dict(f.__dict__) for f in self.failures]
        out["examples_per_second"] = round(self.examples_per_second, 2)
        return out


class FuzzFailure(AssertionError):
    """A check failed on an example; ``failure`` holds the data. One subclass per check, so that Hypothesis
    shrinks and reports each kind of failure separately."""

    def __init__(self, failure: Failure):
        self.failure = failure
        code = f" ({failure.code})" if failure.code else ""
        super().__init__(f"{failure.check}{code}: {failure.message}\n  example: {failure.example}"
                         + (f"\n  replay:  {failure.replay}" if failure.replay else ""))


class KernelErrorFailure(FuzzFailure):
    pass


class MetaShapeFailure(FuzzFailure):
    pass


class FakeShapeFailure(FuzzFailure):
    pass


class GuardFailure(FuzzFailure):
    pass


class RuntimeFailure(FuzzFailure):
    pass


class ValueFailure(FuzzFailure):
    pass


FAILURE_TYPES = {"kernel-error": KernelErrorFailure, "meta-shape": MetaShapeFailure,
                  "fake-shape": FakeShapeFailure, "guard": GuardFailure, "runtime": RuntimeFailure,
                  "values": ValueFailure}
