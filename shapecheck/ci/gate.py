"""The CI gate: a set of contract files (plus a kernel source) -> one ``GateResult`` holding a verify
``Report`` per contract of this shard, with stale and expired suppressions judged."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from ..config import configured_contract_paths, find_pyproject
from ..contract import suppressions
from ..contract.find import discover, normalize_op, shipped_contracts_dir
from ..contract.load import load_contract
from ..contract.model import Contract
from ..errors import TargetError, UnknownOpError, UserError
from ..findings import Finding, Verdict
from ..kernel.sources import INSTALLED, Installed, KernelSource
from ..limits import SHARDS, max_cases
from ..options import VerifyOptions, internal, pick
from ..result.report import Report
from ..result.run import ContractRun, ExpiredSuppression, GateResult
from ..rules import Command, RuleCode, rules_of

GATE_RULES = frozenset(rules_of(Command.VERIFY))  # the rules a gate run reports, so the suppressions it judges


@dataclass(frozen=True)
class GateOptions:
    """The gate's declared options (``shapecheck/options.py``) that reach the run; each contract is verified with
    ``verify_options()``, and cached under that object's key."""

    source: KernelSource = internal(True, INSTALLED)  # --meta-source (keyed by cache/store.py's source parts)
    shard: tuple[int, int] = (1, 1)  # (K, N), 1-based
    explore: bool = False  # verify's --explore: every case in full, with its path map
    max_traces: int = 64
    timeout_ms: int = 10_000
    jobs: int = 1  # verify's --jobs
    cache: bool = False  # answer each contract from the result cache when it holds (cache/store.py); the CLI's default
    imports: tuple[str, ...] = ()  # the --import specs, named in the cache key

    def verify_options(self) -> VerifyOptions:
        """verify's options for each contract: every field of the same name; --explore explores every case in
        full; the case limit in force (a gate run and a verify run with the same contract path, kernel and
        options share an entry)."""
        return pick(VerifyOptions, self, full=self.explore, max_cases=max_cases())


# ---------------------------------------------------------------------------------------------------------
# Which contracts


def contract_files(paths: list[str], cwd: Path) -> list[Path]:
    """The contract files of a gate run, deduplicated and sorted: ``paths`` when given, else the shipped
    ``contracts/`` plus those configured in the nearest ``pyproject.toml``."""
    named: dict[Path, str] = {}  # a root the project file names -> where (its error names the file and key)
    if paths:
        roots = [cwd / p for p in paths]
    else:
        roots = [shipped_contracts_dir()]
        pyproject = find_pyproject(cwd)
        if pyproject is not None:
            configured = configured_contract_paths(pyproject)
            named = {r: f" ({pyproject} [tool.shapecheck] contracts)" for r in configured}
            roots += configured
    for r in roots:
        _resolved(r)  # a symlink loop is named as one
        if not r.exists():
            raise UserError(f"{display(r, cwd)}: no such contract file or directory{named.get(r, '')}")
    files: dict[Path, Path] = {}
    for r in roots:
        found = discover([r])
        if r.is_dir() and not found:
            raise UserError(f"{display(r, cwd)}: no contract (*.toml) under this directory{named.get(r, '')}")
        for f in found:
            files.setdefault(_resolved(f), f)
    return sorted((Path(display(f, cwd)) for f in files.values()), key=str)


def display(path: Path, cwd: Path) -> str:
    """``path`` relative to ``cwd`` when it lies under it, else absolute; named as the user names it (its
    folder resolved, not the file: a symlink to ``/dev/zero`` is named by its own name)."""
    p = path if path.is_absolute() else cwd / path
    p = _resolved(p.parent) / p.name
    try:
        return str(p.relative_to(cwd.resolve()))
    except ValueError:
        return str(p)


def _resolved(path: Path) -> Path:
    """``path`` with its symlinks resolved; a symlink loop (a directory linked to itself) is bad input."""
    try:
        return path.resolve()
    except (RuntimeError, OSError) as err:  # Python 3.11: RuntimeError("Symlink loop from ..."); 3.13: OSError
        raise UserError(f"{path}: cannot be read: a symlink that leads back to itself ({err})") from None


# ---------------------------------------------------------------------------------------------------------
# Sharding


def assign_shards(weights: list[tuple[str, int]], n: int) -> dict[str, int]:
    """Each key -> a shard in 1..n: heaviest first onto the least loaded shard (ties: the lowest index).

    The unit is a whole contract, so the per-contract state (a case whose first guard repeats an earlier
    case's, and suppressions, which belong to a contract) is the same as in a full run: the union of the
    shards' results equals one full run's.
    """
    load = [0] * min(n, len(weights))  # shards past the number of keys stay empty: each key fills an empty one first
    out: dict[str, int] = {}
    for key, w in sorted(weights, key=lambda kw: (-kw[1], kw[0])):
        i = min(range(len(load)), key=lambda j: (load[j], j))
        load[i] += max(w, 1)
        out[key] = i + 1
    return out


# ---------------------------------------------------------------------------------------------------------
# The run


def run_gate(paths: list[str], options: GateOptions = GateOptions(), *, cwd: Path | None = None,
             progress: Callable[[int, int, str], None] | None = None) -> GateResult:
    """Verify every contract of the shard. A malformed contract or a missing file anywhere in the set raises a
    ``UserError`` before anything is verified; a contract whose op is unknown or whose kernel cannot be loaded
    (an import that failed, a schema mismatch) is reported as that contract's error, and the others run."""
    start = time.perf_counter()
    cwd = Path.cwd() if cwd is None else cwd
    k, n = options.shard
    if not 1 <= k <= n <= SHARDS:
        raise UserError(f"--shard {k}/{n}: expected K/N with 1 <= K <= N <= {SHARDS}")
    files = contract_files(paths, cwd)
    # reports name each file as the user sees it (relative to cwd when under it)
    contracts = [replace(load_contract(cwd / f), file=str(f)) for f in files]
    weights = {c.file: sum(1 for _ in c.cases()) for c in contracts}
    shard_of = assign_shards(list(weights.items()), n)
    options.source.validate()  # a bad kernel file is bad input for the whole run
    mine = [c for c in contracts if shard_of[c.file] == k]
    total = sum(weights[c.file] for c in mine)
    done = 0
    runs: list[ContractRun] = []
    torch_version = None
    for c in mine:
        cached = _from_cache(c, options, cwd)
        if cached is not None:  # answered without loading the kernel (nor torch, nor z3)
            runs.append(_judged(c, *cached))
            done += weights[c.file]
            continue
        from .._torch import core as C
        from ..prove.verify import verify_contract

        torch_version = C.TORCH_VERSION
        try:
            kernel, note = _kernel_or_error(c, options.source)
        except Exception as err:  # noqa: BLE001 - a bug of shapecheck's on this contract: the others still run
            from ..prove.verify import internal_error

            runs.append(_judged(c, Report(c.op, c.file, "-", Verdict.ERROR, violations=(internal_error("*", err),),
                                          torch_version=C.TORCH_VERSION), ""))
            continue
        if kernel is None:  # bad input for this contract alone: reported, the others still run
            report = Report(c.op, c.file, "-", Verdict.INCONCLUSIVE, torch_version=C.TORCH_VERSION, error=note)
            runs.append(ContractRun(c.info, report, error=note))
            continue

        def on_case(case_id: str, op: str = c.op) -> None:
            nonlocal done
            done += 1
            if progress is not None:
                progress(done, total, f"{op} {case_id}")

        report = verify_contract(c, kernel, options.verify_options(), on_case, isolate=True)
        if options.cache:
            from ..cache import store as R

            key = R.verify_key(c.op, c.file, options.source, options.imports, options.verify_options().key(), cwd=cwd,
                               installed_fallback=True)
            if key is not None:
                R.verify_store(key, c, kernel, report)
        runs.append(_judged(c, report, note))
    if torch_version is None:  # every contract from the cache: the version they were checked with
        torch_version = runs[0].report.torch_version if runs else _torch_version()
    return GateResult(runs, len(contracts), (k, n), time.perf_counter() - start, torch_version,
                      options.source)


def _from_cache(contract: Contract, options: GateOptions, cwd: Path) -> tuple | None:
    """(report, kernel note) from the result cache, or None (off, not cacheable, a miss)."""
    if not options.cache:
        return None
    from ..cache import store as R

    if not R.enabled():
        return None
    key = R.verify_key(contract.op, contract.file, options.source, options.imports, options.verify_options().key(),
                       cwd=cwd, installed_fallback=True)
    hit = R.verify_lookup(key) if key is not None else None
    if hit is None:
        return None
    report = replace(hit.value[1], cache=hit.note())
    # the key says whether the source registers the op (resolve_kernel's note, without parsing the file again)
    fallback = key["source"] == R.INSTALLED_PARTS and type(options.source) is not Installed
    return report, fallback_note(options.source, key["op"]) if fallback else ""


def fallback_note(source: KernelSource, op: str) -> str:
    """What a gate says of an op its kernel source leaves alone (the installed torch's kernel is checked)."""
    return f"{source} registers no meta kernel for {op}: checked the installed torch's"


def _judged(contract: Contract, report: Report, note: str) -> ContractRun:
    """A contract's run with its suppressions judged and the gate's fields in its report."""
    run = ContractRun(contract.info, report, note, judged=True)
    judge_suppressions(run)
    return run


def _torch_version() -> str:
    from ..cache.key import distribution_version

    return distribution_version("torch")


def _kernel_or_error(contract: Contract, source: KernelSource) -> tuple:
    """(kernel, note), or (None, the error) when the contract's op or kernel cannot be had."""
    try:
        return resolve_kernel(contract, source)
    except UserError as err:
        return None, str(err)


def resolve_kernel(contract: Contract, source: KernelSource):
    """(kernel, note): the source's kernel for the contract's op, else the installed torch's kernel (noted); the
    contract's arguments checked against the op's schema."""
    from ..kernel.load import check_arguments, load_kernel

    op = normalize_op(contract.op)
    try:
        if source.provides(op):
            kernel, note = load_kernel(source, op), ""
        else:
            kernel = load_kernel(INSTALLED, op)
            note = fallback_note(source, op)
    except UnknownOpError as err:
        raise UnknownOpError(f"{contract.file}: [op]: {err}") from None
    except TargetError as err:
        raise TargetError(f"{contract.file}: {err}") from None
    check_arguments(contract, kernel)
    return kernel, note


def judge_suppressions(run: ContractRun) -> None:
    """A suppression in force that matches no violation of the run is stale (SC008, fails the gate); one
    past its date suppresses nothing and is reported with the violations it would have covered.

    Only suppressions of the rules verify reports are judged: one of a rule another command reports (the
    runtime checks SC010-SC014 of ``shapecheck ref``) cannot be matched by a gate run.
    """
    for s, loc in zip(run.contract.suppressions, run.suppress_locs):
        if s.rule not in GATE_RULES:
            continue
        matched = sum(1 for v in run.report.violations if suppressions.matches(s, v))
        if suppressions.expired(s):
            run.expired.append(ExpiredSuppression(s.rule, s.reason, s.expires, loc, matched))
        elif matched == 0 and not _undecided(s, run.report):
            what = ", ".join(f"{k}={v!r}" for k, v in (("case", s.case), ("path", s.path)) if v)
            dims = f" on {', '.join(s.dims)}" if s.dims else ""
            run.stale.append(Finding(
                code=RuleCode.STALE_SUPPRESSION, case="", expr=f"suppress[{s.index}]: {s.rule}{dims}" + (f" ({what})" if what else ""),
                dims=s.dims, location=loc, counterexample={},
                message=f"the suppression of {s.rule}{dims} ({s.reason}) matches no violation: the finding it "
                f"accepted is gone; delete the [[suppress]] table"))


def _undecided(s, report) -> bool:
    """Whether a case the suppression covers is inconclusive, stopped on an internal error or was skipped (not
    run: a kernel that takes none of its arguments, hunt 57): the finding it accepts may still be there, so the
    suppression is not stale."""
    from ..prove.verify import DISPATCHER_ONLY, EMPTY_DOMAIN

    return any((c.verdict in (Verdict.INCONCLUSIVE, Verdict.ERROR) or c.skipped not in ("", EMPTY_DOMAIN, DISPATCHER_ONLY))
               and (not s.case or s.case in c.case) for c in report.cases)
