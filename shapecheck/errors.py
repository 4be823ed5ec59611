"""The one exception hierarchy of shapecheck, split by who has to act.

Violations found in a kernel are data (see ``report``), never exceptions; an exception means the
analysis itself could not run.
"""

from __future__ import annotations


class ShapecheckError(Exception):
    """Root of every error shapecheck raises on purpose."""

    exit_code = 4

    def __reduce__(self) -> str | tuple:
        # this module's errors name the package as their module, where most are no attribute: pickle (a supervised
        # child's error, trace/isolate.py) rebuilds them by name from here
        cls = type(self)
        if _BY_NAME.get(cls.__name__) is cls:
            return _rebuilt, (cls.__name__, self.args, dict(self.__dict__))
        return super().__reduce__()


class UserError(ShapecheckError):
    """Bad input: a contract, an op name, a kernel file. The user fixes it; exit code 2."""

    exit_code = 2


class ContractError(UserError):
    """A contract file is malformed. ``where`` names the file and the TOML key."""

    def __init__(self, where: str, message: str):
        self.where = where
        self.message = message
        super().__init__(f"{where}: {message}")


class ExprError(UserError):
    """A contract expression does not parse or uses something outside the language."""

    def __init__(self, text: str, message: str):
        self.text = text
        self.message = message
        super().__init__(f"{message} in {text!r}")


class TargetError(UserError):
    """The kernel under test cannot be found or loaded: unknown op, missing meta kernel, bad file."""


class UnknownOpError(TargetError):
    """An op name torch does not resolve to an operator (or that is not an op name at all)."""


class NotDispatchedOpError(UnknownOpError):
    """An operator torch knows only in TorchScript (``prim::abs``): no import would make it one FakeTensorMode runs."""


class UnsupportedTorchError(UserError):
    """The installed torch lacks an internal API shapecheck needs."""


class InternalError(ShapecheckError):
    """A broken invariant inside shapecheck: a bug. Exit code 4."""

    exit_code = 4


for _cls in (ShapecheckError, UserError, ContractError, ExprError, TargetError, UnknownOpError,
             UnsupportedTorchError, InternalError):
    _cls.__module__ = "shapecheck"

_BY_NAME: dict[str, type[ShapecheckError]] = {}
_BY_NAME.update((c.__name__, c) for c in (ShapecheckError, UserError, ContractError, ExprError, TargetError,
                                          UnknownOpError, UnsupportedTorchError, InternalError))


def _rebuilt(name: str, args: tuple, state: dict) -> ShapecheckError:
    """One of this module's errors, as pickled by ``ShapecheckError.__reduce__``."""
    err = _BY_NAME[name].__new__(_BY_NAME[name])
    err.args = args
    err.__dict__.update(state)
    return err


# -- the user's Ctrl-C, told apart from a kernel's own ``raise KeyboardInterrupt`` ------------------------
_WATCH = {"installed": False, "stopped": False}


def _on_sigint(signum: int, frame: object) -> None:
    import signal

    _WATCH["stopped"] = True
    signal.default_int_handler(signum, frame)  # raises KeyboardInterrupt, as Python's own handler does


def watch_interrupts() -> None:
    """Installed by the command line: SIGINT, the user's Ctrl-C, is noted before it raises KeyboardInterrupt, so
    that one a kernel raises itself is the kernel's failure (SC007), as any other BaseException it raises."""
    import signal

    try:
        handler = signal.getsignal(signal.SIGINT)
        if handler is signal.default_int_handler:
            signal.signal(signal.SIGINT, _on_sigint)
            _WATCH["installed"] = True
        elif handler in (signal.SIG_IGN, signal.SIG_DFL):
            # Ctrl-C raises no KeyboardInterrupt here (ignored, as in a shell's background job or under nohup,
            # or fatal): every one is a kernel's own
            _WATCH["installed"] = True
    except (ValueError, OSError):  # not the main thread: Ctrl-C is told apart from nothing
        pass


def user_stopped(exc: BaseException) -> bool:
    """Whether ``exc`` is the user stopping the run: a KeyboardInterrupt after SIGINT came (or any one, where
    ``watch_interrupts`` is not installed: a library caller's Ctrl-C is never taken for a kernel's failure)."""
    return isinstance(exc, KeyboardInterrupt) and (_WATCH["stopped"] or not _WATCH["installed"])


def said(exc: BaseException) -> str:
    """``str(exc)``, for an exception a kernel (or a file it imports) raised: one whose ``__str__`` itself raises
    is shown by its class, never taken for a failure of shapecheck."""
    try:
        return str(exc)
    except BaseException as inner:  # noqa: BLE001 - the kernel's own exception class misbehaves
        return f"<its message cannot be shown: str() raised {type(inner).__name__}>"
