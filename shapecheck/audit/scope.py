"""Which ops an audit covers: the overloads FakeTensorMode can run in the namespaces in scope, and the ops each
``--import`` registers (the library's, not those of torch's own modules the import loads on the way)."""

from __future__ import annotations

import fnmatch

_REGISTERED: dict[str, tuple[frozenset[str], frozenset[str], frozenset[str]]] = {}  # --import spec -> (the op
# names importing it registered, the namespaces it made, the ops of torch's own modules it registered on the way)


def op_name(name: str) -> str:
    """``ns::name.overload`` with the default overload spelled out."""
    return name if "." in name.partition("::")[2] else f"{name}.default"


def enumerate_ops(patterns: tuple[str, ...], namespaces: set[str], extra: set[str]) -> list[str]:
    """Every overload in ``namespaces`` (plus ``extra`` names) that FakeTensorMode can run (a Python meta
    registration or decomposition, a fake kernel, FakeTensor's rule, a C++ Meta or composite kernel) and that
    matches one of ``patterns`` (all when none), sorted: aten's functional overloads, and every overload of
    another namespace (a library's ``.out`` and in-place ops have fakes of their own)."""
    return enumerate_all(patterns, namespaces, extra)[0]


def enumerate_all(patterns: tuple[str, ...], namespaces: set[str], extra: set[str],
                  skip: set[str] = frozenset()) -> tuple[list[str], list[str]]:
    """(the ops to audit, the matching ops of a non-aten namespace that FakeTensorMode cannot run at all);
    ``skip``: ops left out whatever their namespace."""
    from .._torch import audit as CA
    from .._torch import core as C

    out, unreachable = [], []
    for raw in CA.all_op_names():
        ns = raw.partition("::")[0]
        if (ns not in namespaces and raw not in extra) or raw in skip:
            continue
        name = op_name(raw)
        if patterns and not any(fnmatch.fnmatchcase(n, p) for n in (name, raw) for p in patterns):
            continue
        overload = name.partition("::")[2].partition(".")[2]
        if ns == "aten" and (overload == "out" or overload.endswith("_out") or "out_" in overload):
            continue
        try:
            op = C.resolve_op(raw)
        except Exception:  # noqa: BLE001 - a name torch lists but cannot resolve: not an op to audit
            continue
        if ns == "aten" and not CA.is_functional(op):
            continue
        try:
            reachable = CA.fake_reachable(op)
        except Exception:  # noqa: BLE001 - a bug in shapecheck on one op: audited, so that its record says so
            reachable = True  # (not run, with the error) and the other ops still report
        if reachable:
            out.append(name)
        elif ns != "aten":
            unreachable.append(name)
    return sorted(set(out)), sorted(set(unreachable))


def imported_ops(imports: tuple[str, ...]) -> tuple[set[str], set[str], set[str]]:
    """Each ``--import`` done once per process: (the op names the imports registered, the namespaces they made,
    the ops of torch's own modules they registered on the way, which are not the library's)."""
    from .._torch import audit as CA
    from ..kernel.load import import_modules

    extra: set[str] = set()
    fresh: set[str] = set()  # the namespaces the imports made: their every op is the library's
    foreign: set[str] = set()  # ops the imports registered from torch's own modules, in a namespace made beside
    for spec in imports:  # the ops each import registers (remembered: a module is imported once per process)
        if spec not in _REGISTERED:
            before = set(CA.all_op_names())
            with CA.registering_modules() as owner:
                import_modules([spec])
            # not the ops of torch's own modules that the import loaded on the way (prims, distributed), but those
            # of the torch module it names (torch.ao.quantization.fx._decomposed: quantized_decomposed)
            new = frozenset(n for n in set(CA.all_op_names()) - before if not CA.torch_module(m := owner.get(n, ""))
                            or m == spec or m.startswith(spec + "."))
            known = {n.partition("::")[0] for n in before}
            _REGISTERED[spec] = (new, frozenset(n.partition("::")[0] for n in new) - known,
                                 frozenset(set(CA.all_op_names()) - before - new))
        extra |= _REGISTERED[spec][0]
        fresh |= _REGISTERED[spec][1]
        foreign |= _REGISTERED[spec][2]
    return extra, fresh, foreign


def aten_in_scope(patterns: tuple[str, ...], imports: tuple[str, ...], source: object) -> bool:
    """Whether torch's own ``aten`` ops are audited: always without an ``--import``; with one, only when a
    ``--meta-source`` replaces aten kernels or an ``--ops`` pattern can name an aten op. ``audit --import
    mylib`` is about mylib: the ops its import registers (and the namespaces they are in)."""
    if not imports or source is not None:
        return True
    return any("::" not in p or fnmatch.fnmatchcase("aten", p.partition("::")[0]) for p in patterns)
