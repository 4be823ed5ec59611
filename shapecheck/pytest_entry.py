"""``fuzz_test`` and ``fuzz_given``: ``fuzz op`` as Hypothesis tests in a project's own pytest suite.

Collecting them costs nothing but imports: the contract, the kernel, verify's explicit examples and the
strategy are made when the test first draws an example (Hypothesis resolves the deferred strategy before it
times the test body), once per process and target. A failure leads with the finding (its check, rule and
example) and hides shapecheck's own frames. Each test is parametrized by its op, so it reads
``test_x[aten::op]``.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hypothesis import given
from hypothesis import strategies as st

if TYPE_CHECKING:  # the engine loads on first use: collecting costs imports of hypothesis and pytest only
    from .runtime.fuzz import Prepared
    from .search.examples import Example

_PREPARED: dict[str, Prepared] = {}  # per process: one preparation per op and target
_EXPLICIT: dict[str, BaseException | None] = {}  # the first explicit example (from verify) that fails, if any


def _prepare(op: str, kwargs: dict[str, Any]) -> Prepared:
    from .kernel.load import load_target
    from .kernel.sources import from_options
    from .runtime.fuzz import FuzzOptions, prepare, registering_modules, replay_command

    contract = kwargs.pop("contract", None)
    source = kwargs.pop("source", None) or from_options(kwargs.pop("meta", None), kwargs.pop("meta_source", None))
    eras = kwargs.pop("eras", ())
    imports = kwargs.pop("imports", ())
    options = FuzzOptions(eras=(eras,) if isinstance(eras, str) else tuple(eras),
                          imports=(imports,) if isinstance(imports, str) else tuple(imports), **kwargs)
    c, kernel = load_target(op, contract, source)
    base = replay_command(op, contract=contract, source=source, eras=options.eras,
                          imports=options.imports or registering_modules(kernel))
    return prepare(c, kernel, options, lambda text: f"{base} --example {shlex.quote(text)}")


def _resolve(key: str, op: str, kwargs: dict[str, Any], body: Callable[[Example], None]) -> Prepared:
    """The preparation for ``key``, made on first use: verify's counterexamples go through the checks (and
    ``body``) then, and the first call into FakeTensorMode and the runtime is paid outside the timed test."""
    if key not in _PREPARED:
        prep = _prepare(op, dict(kwargs))
        failure = None
        for ex in prep.explicit:
            try:
                prep.checker.check(ex)
                body(ex)
            except Exception as err:  # noqa: BLE001 - the test's own failure, raised again by every call
                failure = err
                break
        if not prep.explicit:
            _warm_up(prep)
        _reset(prep)
        _PREPARED[key], _EXPLICIT[key] = prep, failure
    return _PREPARED[key]


def _warm_up(prep: Prepared) -> None:
    from .runtime.fuzz_report import FuzzFailure
    from .search.strategies import example_at

    for case in prep.contract.cases():
        if prep.checker.applicable(case):
            ex = example_at(case, {d.name: d.min for d in prep.contract.dims})
            if ex is not None:
                try:
                    prep.checker.check(ex)
                except FuzzFailure:
                    pass  # found again, and reported, by the test
            return


def _reset(prep: Prepared) -> None:
    prep.checker.count = 0
    for table in (prep.checker.timings, prep.checker.notes, prep.checker.paths):
        table.clear()


def _check(key: str, example: Example) -> None:
    from .runtime.fuzz_report import FuzzFailure

    __tracebackhide__ = True  # pytest: the failure starts at the finding, not in shapecheck
    failure = _EXPLICIT.get(key)
    if failure is not None:  # the same failure for every drawn example: deterministic, never flaky
        raise failure.with_traceback(None)
    try:
        _PREPARED[key].checker.check(example)
    except FuzzFailure as err:  # the finding, without shapecheck's frames
        raise err.with_traceback(None) from None


def _build(op: str, kwargs: dict[str, Any], body: Callable[..., None], name: str, digest: str) -> Callable[..., None]:
    import pytest

    key = digest
    strategy = st.deferred(lambda: _resolve(key, op, kwargs, body).strategy)

    def test(op: str, example: Example) -> None:
        __tracebackhide__ = True
        _check(key, example)
        body(example)

    test.__name__ = test.__qualname__ = name
    test._hypothesis_internal_add_digest = digest.encode()  # one database key per op and target
    return pytest.mark.parametrize("op", [op], ids=[op])(given(example=strategy)(test))


def fuzz_test(op: str, **kwargs: Any) -> Callable[..., None]:
    """A Hypothesis test for pytest: ``test_my_op = shapecheck.fuzz_test("mylib::op")`` is collected as
    ``test_my_op[mylib::op]``.

    Keyword arguments: ``contract``, ``source`` (or ``meta``, ``meta_source``, as ``verify``), and the
    ``FuzzOptions`` fields except ``examples``/``seed`` (``eras``, ``cases``, ``path``, ``max_elements``,
    ``max_side``, ``verify_examples``, ``from_verify``, ``imports``: what registers the op, for the replay
    commands a failure prints; by default the file of a custom op's fake kernel, ``both_modes``). The number of examples, the seed, the deadline and the
    database come from the Hypothesis settings in force (a profile, or ``@settings`` on the returned test).
    Nothing runs at collection; verify (``verify_examples=True``, the default) runs once, on first use.
    """
    return _build(op, kwargs, lambda example: None, "test_shapes", f"{op}|{sorted(kwargs.items())!r}")


def fuzz_given(op: str, **kwargs: Any) -> Callable[[Callable[[Example], None]], Callable[..., None]]:
    """Decorator form of ``fuzz_test``: the decorated ``fn(example)`` runs after the built-in checks pass, for
    checks of your own (``example.arguments("cpu")`` gives the tensors)."""

    def decorate(fn: Callable[[Example], None]) -> Callable[..., None]:
        built = _build(op, kwargs, fn, fn.__name__, f"{op}|{sorted(kwargs.items())!r}|{fn.__module__}.{fn.__qualname__}")
        built.__doc__, built.__module__ = fn.__doc__, fn.__module__
        return built

    return decorate
