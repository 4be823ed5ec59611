"""What a fuzz run reports: the failure kinds (``CHECKS``), one ``Failure`` per shrunk failing example, the
``FuzzReport``, and the ``FuzzFailure`` exceptions a check raises (one subclass per kind, so that Hypothesis
shrinks and reports each kind separately).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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
(``runtime.fake_run``). "meta-shape" is the kernel torch.export runs (the Python dispatcher on), "fake-shape"
plain FakeTensorMode's where it runs another kernel (upsample_nearest2d's meta registration)."""

CHECK_RULES = {"kernel-error": "SC007", "meta-shape": "SC002", "fake-shape": "SC002", "guard": "SC001", "runtime": "SC015",
               "values": "SC012"}
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


@dataclass(frozen=True)
class FuzzReport:
    op: str
    contract: str
    kernel: str
    verdict: str  # pass | fail
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
        return 1 if self.failures else 0

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
