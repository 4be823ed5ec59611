"""How reports name files: relative to the repository root where a file lies under it (the nearest parent of
the current directory holding ``.git``, else the nearest holding ``pyproject.toml``, else the current directory), else relative to the ``site-packages``
folder it was installed in (``torch/_meta_registrations.py``), else absolute. Machine formats say which base
a relative path has (``SRCROOT`` or ``SITE_PACKAGES``). Text for people names a file relative to the current
directory where it lies under it (``relpath``)."""

from __future__ import annotations

import functools
import sysconfig
from pathlib import Path

SRCROOT, SITE_PACKAGES = "SRCROOT", "SITE_PACKAGES"


def repo_root(cwd: Path | None = None) -> Path:
    """The repository root of ``cwd`` (default: the current directory, read on every call: a process that
    changes directory, a test runner, gets the root of where it is now)."""
    return _root_of((cwd or Path.cwd()).resolve())


@functools.cache
def _root_of(start: Path) -> Path:
    """The nearest parent holding ``.git``; outside a repository, the nearest holding ``pyproject.toml`` (the
    project's root, where its ``[tool.shapecheck]`` lives): a baseline's paths must not depend on the directory
    it is applied from (hunt 52); else ``start``."""
    for marker in (".git", "pyproject.toml"):
        found = next((d for d in (start, *start.parents) if (d / marker).exists()), None)
        if found is not None:
            return found
    return start


@functools.cache
def site_packages() -> Path:
    """The running interpreter's site-packages (where torch and an installed shapecheck live)."""
    return Path(sysconfig.get_paths()["purelib"]).resolve()


def locate(file: str, cwd: Path | None = None) -> tuple[str, str | None]:
    """(path, base): the file relative to the repository root or site-packages, with that base's name; the
    absolute path and None when it lies under neither."""
    p = Path(file)
    try:
        p = p.resolve()
    except OSError:
        return file, None
    # the deeper base first: a virtual environment inside the repository still gives torch/...
    bases = sorted(((SRCROOT, repo_root(cwd)), (SITE_PACKAGES, site_packages())), key=lambda b: -len(b[1].parts))
    for base_name, base in bases:
        if p.is_relative_to(base):
            return p.relative_to(base).as_posix(), base_name
    return str(p), None


def base_uris(cwd: Path | None = None) -> dict[str, dict[str, str]]:
    """SARIF ``originalUriBaseIds``: each base as a directory URI."""
    return {SRCROOT: {"uri": repo_root(cwd).as_uri() + "/"}, SITE_PACKAGES: {"uri": site_packages().as_uri() + "/"}}


def relpath(file: str, cwd: Path | None = None) -> str:
    """``file`` for people: an installed file (torch's, a package's) relative to its ``site-packages``
    (``torch/_meta_registrations.py``, wherever the environment lives), else relative to ``cwd`` (default: the
    current directory) when it lies under it, else as given. Machine formats keep the paths they were given."""
    p = Path(file)
    try:
        resolved = p.resolve()
    except OSError:
        return file
    for base in (site_packages(), (cwd or Path.cwd()).resolve()):
        if resolved.is_relative_to(base):
            return str(resolved.relative_to(base))
    return file


def special_file(file: str | Path) -> bool:
    """Whether ``file`` exists as a FIFO or socket: opening one to write waits for a reader (a run that hangs
    after it is done)."""
    import os
    import stat

    try:
        mode = os.stat(file).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def write_text(file: str | Path, text: str) -> None:
    """Write a report, baseline or draft: OSError as ``Path.write_text`` raises, and also for a FIFO or socket
    (``special_file``)."""
    import errno

    if special_file(file):
        raise OSError(errno.EINVAL, "a FIFO or socket, not a file")
    Path(file).write_text(text, encoding="utf-8")
