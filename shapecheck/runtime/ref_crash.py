"""``ref check`` with a kernel that crashes its process: the op's eager kernel (a custom op's C++ on an odd size)
or its meta kernel may die of a signal (SIGSEGV) on an input instead of raising. The run goes to a supervised
child (``trace.isolate``) that names each input before it runs it and reports what it found there. When the
child dies, that input gets a finding of its own (SC014 where the runtime crashed, SC015 where the meta kernel
did), and a new child runs the inputs not done yet: the inputs are drawn from the seed, so the new child meets
the same ones. Every other input reports as it would have.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..rules import RuleCode
from ..trace import isolate
from ..trace.isolate import Died, can_isolate, load_crash, supervised
from .ref_findings import RefFinding

#: an input of the run: (era, path id, index of the input on that path)
Key = tuple[str, str, int]
#: what an input gave: its findings, whether it counts as an input that ran, and a note for its path
Outcome = tuple[list[RefFinding], bool, str]


@dataclass
class RefResume:
    """The inputs done by children that crashed (the one each crashed on included), by ``Key``."""

    done: dict[Key, Outcome] = field(default_factory=dict)


def at_point(resume: RefResume | None, key: Key, case: str, sizes: dict[str, int],
             compute: Callable[[], Outcome]) -> Outcome:
    """``compute()`` for one input, told to the supervising process before and after; what an earlier child
    found there instead, where it got that far."""
    if resume is not None and key in resume.done:
        return resume.done[key]
    isolate.note(("point", key, case, dict(sizes)))
    out = compute()
    isolate.note(("point-done", key, out))
    return out


def crash_safe_ref(run: Callable[[RefResume], Any], fork: bool = True) -> Any:
    """``run(resume)`` in a supervised child where the platform allows (and ``fork``: not where CUDA, which a
    forked child cannot use, is initialized here), again after each crash with the inputs done so far: its
    report. A crash outside any input is ``isolate.load_crash``'s error."""
    if not (fork and can_isolate()):
        return run(RefResume())
    resume, start, crashes = RefResume(), time.perf_counter(), 0
    while True:
        seen: dict[str, Any] = {}

        def message(m: tuple, seen: dict[str, Any] = seen) -> None:
            if m[0] == "point":
                seen["at"] = m
            elif m[0] == "point-done":
                resume.done[m[1]] = m[2]
                seen.pop("at", None)

        out = supervised(lambda send: run(resume), message)
        if not isinstance(out, Died):
            if crashes and hasattr(out, "seconds"):
                out.seconds = time.perf_counter() - start  # the children's, not the last one's
            return out
        at = seen.get("at")
        if at is None:
            raise load_crash(out)
        crashes += 1
        _, key, case, sizes = at
        resume.done[key] = crashed(key, case, sizes, out)


def crashed(key: Key, case: str, sizes: dict[str, int], died: Died) -> Outcome:
    """What an input the process died on gives: SC015 where the meta kernel was running; SC014 where the runtime's
    kernel was, on a contract path (it neither ran the input nor raised); on a ``[[rejects]]`` region, where the
    contract says the runtime refuses the input, a note (it did refuse it, by crashing)."""
    era, path, _ = key
    name = died.name()
    where = f"{', '.join(f'{k}={v}' for k, v in sizes.items())}" + (f" in case {case}" if case else "")
    if any(fn == "meta_outputs" for _, _, fn in died.frames()):
        return [RefFinding(RuleCode.META_RUNTIME_MISMATCH, era, path, case, sizes,
                           f"the meta kernel crashed the process ({name}) on this input: the meta kernel, or torch's "
                           "C++ under it, cannot run it, and neither can torch.export (the other inputs ran in a "
                           "new process)")], True, ""
    if path.startswith("rejects."):
        return [], True, f"the runtime crashed the process ({name}) at {where} instead of raising"
    return [RefFinding(RuleCode.RUNTIME_REJECTS, era, path, case, sizes,
                       f"the runtime crashed the process ({name}) on this input instead of running it or raising: "
                       "the op's kernel, or torch's C++ under it (the other inputs ran in a new process)")], True, ""
