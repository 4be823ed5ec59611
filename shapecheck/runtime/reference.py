"""The runtime reference: one object per op that ``shapecheck fuzz op`` and ``shapecheck ref check`` both drive.

A ``RuntimeReference`` says which path the runtime takes (``select_path``), runs it (``run``: outputs, or one
of ``rejects`` where the real op raises too, or ``Unmodelled``), gives the float64 output 0 it should return
(``expected``, with the path's documented quirks), the tolerance per dtype (``tolerance``, from the one
``TOLERANCES`` table) and builds the inputs (``arguments``: tensors from a case and a point of its dims, masks
included). ``reference_for(op)`` finds the reference of an op. Both commands report what they find with the
rule codes of ``RUNTIME_RULES`` and read the contract's ``[[suppress]]`` tables for them the same way.

Two references: ``MetalReference`` (``metal_ref``: array-code ports of the Apple MPS attention paths, on CPU)
for the MPS op, and ``EagerReference`` (the op's own eager kernel, on cpu or cuda) for any op with a kernel
for the device.
"""

from __future__ import annotations

import inspect
import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ..contract import suppressions
from ..contract.model import BoundCase, Contract
from ..rules import Command, RuleCode, rules_of
from ..trace.arguments import make_arguments

RUNTIME_RULES = rules_of(Command.REF)
"""Rule codes of runtime findings, the same in ``ref check`` and ``fuzz op`` (from the rule registry)."""

TOLERANCES = {"float32": (1e-5, 1e-5), "float16": (2e-3, 1e-2), "bfloat16": (1e-2, 2e-2), "float64": (1e-7, 1e-7)}
"""(atol, rtol) of output 0 against the float64 math, per output dtype: the tolerances of tests/metal_ref
(fp32 ~1e-5; fp16 / bf16 ~1e-2 relative). ``MetalReference.tolerance`` adds what rounding the scores to the
input dtype can do.

Why this table (fuzz's) and not ref check's (fp16 1e-2 absolute, no score term): it follows the runtime's
arithmetic. fp16 keeps 11 significant bits, so rounding output 0 to fp16 moves a value by at most 2^-11 of
it (within rtol 1e-2); where the runtime itself rounds before the softmax (Q K^T in T on the MPSGraph path,
Q pre-scaled in T by prefill), the added term bounds what that does, from the inputs. ref check's flat 1e-2
absolute fp16 tolerance is five times this table's and ignores where the runtime rounds, so it would let a
real fp16 error through where the scores are small. (Other dtypes: metal_ref runs only fp32, fp16 and bf16;
float64 and unlisted dtypes, never reached, were 1e-9 and 1e-2 in ref check.)"""


PREFILL_MASK_FACTOR = math.log(2.0)
"""The prefill and MPP kernels add a mask of the query dtype to base-2 scores, so in natural units it acts
as mask * ln 2 (metal_ref/prefill.py, by reading PrefillAttention.h)."""


class Unmodelled(Exception):
    """The reference cannot run this input (an argument it lacks, an input it does not model)."""


class RuntimeReference(ABC):
    """A runtime that contract paths are checked against.

    Arguments are passed by the op's argument names (``arguments`` builds them). Path names are the
    runtime's own (``path_id`` gives the contract path id of one).
    """

    name: ClassVar[str] = "runtime"
    eras: tuple[str, ...] = ()
    """The contract eras (runtime versions) this reference models."""
    rejects: tuple[type[BaseException], ...] = ()
    """What ``run`` raises where the real op raises too."""

    @classmethod
    @abstractmethod
    def available(cls, op: str, device: str = "cpu") -> str | None:
        """None when this reference serves ``op`` on ``device``, else why not."""

    def describe(self, eras: tuple[str, ...]) -> str:
        """What the checks ran against, for reports."""
        return f"{self.name} (eras {', '.join(e for e in eras if e in self.eras)})"

    def has_path(self, era: str, path_id: str) -> bool:
        """Whether the reference models contract path ``path_id`` of ``era``."""
        return era in self.eras

    def for_path(self, path_id: str) -> RuntimeReference:
        """The reference as on a machine that can take contract path ``path_id`` (a device feature the path
        needs); itself by default."""
        return self

    def path_id(self, runtime_path: str) -> str:
        """The contract path id of one of the runtime's paths."""
        return runtime_path

    def runtime_path(self, path_id: str) -> str:
        """The runtime's name of contract path ``path_id``."""
        return path_id

    def arguments(self, case: BoundCase, dims: Mapping[str, int], seed: int = 0) -> dict[str, Any]:
        """The op's arguments by name for ``case`` at ``dims``, as cpu tensors with values drawn from ``seed``."""
        return make_arguments(case, dims, seed, "cpu")

    @abstractmethod
    def select_path(self, args: Mapping[str, Any], era: str) -> str:
        """The path the runtime of ``era`` takes for ``args``; raises ``Unmodelled``."""

    @abstractmethod
    def run(self, args: Mapping[str, Any], era: str, path: str | None = None) -> tuple[Any, ...]:
        """The outputs of the runtime of ``era`` (on ``path`` if given, else its own choice); raises one of
        ``rejects`` where the real op raises, ``Unmodelled`` where the reference cannot tell."""

    @abstractmethod
    def expected(self, args: Mapping[str, Any], era: str, path: str) -> Any | None:
        """Output 0 the runtime should return on ``path``, in float64; None when there is no oracle."""

    @abstractmethod
    def tolerance(self, args: Mapping[str, Any], dtype: str) -> tuple[float, float]:
        """(atol, rtol) of output 0 in ``dtype`` against ``expected``."""


class MetalReference(RuntimeReference):
    """``metal_ref``: CPU ports of the MPS attention paths, for ``aten::_scaled_dot_product_attention_math_for_mps``.

    The path is ``metal_ref.select_path``'s per era, on a GPU without Metal Performance Primitives unless
    ``has_mpp``. The math is ``metal_ref.math_reference`` with each path's documented quirks (``expected``).
    """

    name = "metal_ref"
    OP = "aten::_scaled_dot_product_attention_math_for_mps"

    def __init__(self, has_mpp: bool = False) -> None:
        import metal_ref

        self.m = metal_ref
        self.has_mpp = has_mpp
        self.eras = tuple(metal_ref.ERAS)
        self.params = inspect.signature(metal_ref.dispatch.run).parameters  # the port's signature
        # Only RuntimeCheckError says "the real op fails here too" (a TORCH_CHECK, or the NOT_IMPLEMENTED check
        # of dropout on today's runtime, RuntimeNotImplementedError). A plain NotImplementedError marks
        # undefined behaviour metal_ref cannot model (a March 1-pass call with Hk < Hq reads past K/V), so it
        # cannot claim the runtime raises: Unmodelled.
        self.rejects = (metal_ref.RuntimeCheckError,)

    @classmethod
    def available(cls, op: str, device: str = "cpu") -> str | None:
        if op != cls.OP:
            return f"metal_ref implements {cls.OP} only, not {op}"
        if device != "cpu":
            return f"metal_ref runs on cpu, not {device}"
        return None

    def has_path(self, era: str, path_id: str) -> bool:
        return era in self.eras and self.runtime_path(path_id) in self.m.PATHS

    def for_path(self, path_id: str) -> MetalReference:
        # the MPP kernels run only on GPUs with Metal Performance Primitives (metal_ref.select_path's has_mpp)
        mpp = path_id == "mpp"
        return self if mpp == self.has_mpp else MetalReference(has_mpp=mpp)

    def path_id(self, runtime_path: str) -> str:
        return runtime_path.replace("_", "-")

    def runtime_path(self, path_id: str) -> str:
        return path_id.replace("-", "_")

    def _kwargs(self, args: Mapping[str, Any]) -> dict[str, Any]:
        out = {}
        for name, value in args.items():
            if name in self.params:
                out[name] = value
            elif value is not None:
                raise Unmodelled(f"metal_ref.run takes no argument {name!r}")
        return out

    def select_path(self, args: Mapping[str, Any], era: str) -> str:
        kw = self._kwargs(args)
        try:
            return self.m.select_path(kw["query"], kw["key"], kw["value"], kw.get("attn_mask"),
                                      kw.get("is_causal", False), era=era, has_mpp=self.has_mpp)
        except self.rejects:
            raise
        except (NotImplementedError, ValueError, TypeError) as err:  # not modelled by the port
            raise Unmodelled(f"{type(err).__name__}: {err}") from err

    def run(self, args: Mapping[str, Any], era: str, path: str | None = None) -> tuple[Any, ...]:
        kw = self._kwargs(args)
        try:
            return tuple(self.m.run(**kw, era=era, path=path, has_mpp=self.has_mpp))
        except self.rejects:
            raise
        except (NotImplementedError, ValueError, TypeError) as err:  # not modelled by the port
            raise Unmodelled(f"{type(err).__name__}: {err}") from err

    def expected(self, args: Mapping[str, Any], era: str, path: str) -> Any:
        """The float64 math for ``path``, with the quirks ``metal_ref`` documents for it (``metal_math``)."""
        return metal_math(self.m, args, path)

    def tolerance(self, args: Mapping[str, Any], dtype: str) -> tuple[float, float]:
        """``TOLERANCES``, plus what rounding the scores to the input dtype can do (``score_rounding``)."""
        atol, rtol = TOLERANCES.get(dtype, (1e-5, 1e-5))
        return atol + score_rounding(args, dtype), rtol


def metal_math(m: Any, args: Mapping[str, Any], path: str) -> Any:
    """``metal_ref.math_reference`` (module ``m``) in float64 for runtime ``path``, with its documented quirks."""
    import torch

    q, k, v = args["query"], args["key"], args["value"]
    mask, causal, scale = args.get("attn_mask"), bool(args.get("is_causal")), args.get("scale")
    # vector_1pass: a fully masked row is 0/0 = NaN; every other path gives 0 (vector_1pass.sdpa_vector).
    fully = "nan" if path == "vector_1pass" else "zero"
    if path in ("general", "general_chunked"):
        # the MPSGraph graph (general.py; the chunked branch runs the same graph): the mask is ignored when
        # causal, and a bool mask is cast and *added* as 1/0 (mps-sdpa-facts 3.3).
        mask = None if causal else (mask.double() if mask is not None and mask.dtype == torch.bool else mask)
    if path in ("prefill", "mpp") and mask is not None and mask.dtype != torch.bool:
        # prefill: a dtype mask is added to base-2 scores, i.e. it acts as mask * ln(2) (prefill.py).
        mask = mask.double() * PREFILL_MASK_FACTOR
    if path == "general_chunked" and causal:
        # causal is top-left aligned to each 3068-row chunk (general_chunked.py).
        rows = m.general_chunked.CHUNK_ROWS
        parts = [m.math_reference(q[..., s:s + rows, :], k, v, None, True, scale, fully_masked=fully)
                 for s in range(0, q.shape[-2], rows)]
        return torch.cat(parts, dim=-2)
    return m.math_reference(q, k, v, mask, causal, scale, fully_masked=fully)


def score_rounding(args: Mapping[str, Any], dtype: str) -> float:
    """What rounding the attention scores to ``dtype`` can do to output 0 (the MPSGraph path computes Q K^T in
    T; prefill pre-scales Q in T): a score error of eps/2 * |s| moves each softmax weight by at most a factor
    exp(eps * |s|), so output 0 moves by at most expm1(eps * max|s|) * max|V|."""
    import torch

    q, k, v = args["query"].double(), args["key"].double(), args["value"]
    if q.shape[-1] == 0 or k.shape[-2] == 0 or v.numel() == 0:
        return 0.0
    if k.shape[-3] != q.shape[-3]:
        k = k.repeat_interleave(q.shape[-3] // k.shape[-3], dim=-3)
    scale = args.get("scale") or 1.0 / math.sqrt(q.shape[-1])
    s_max = float(torch.matmul(q, k.transpose(-1, -2)).abs().max()) * scale
    eps = torch.finfo(getattr(torch, dtype)).eps
    return math.expm1(eps * s_max) * float(v.abs().max())


class _EveryEra(tuple):
    """The eras of a reference that is the installed runtime itself: it answers for every era."""

    def __contains__(self, era: object) -> bool:
        return True


class EagerReference(RuntimeReference):
    """The op's own eager kernel on ``device`` (cpu, or cuda where one exists): the real runtime, for any op
    with a kernel for the device (its own, or a composite one).

    It has no notion of the contract's paths (``select_path`` gives None: dispatch is not checked) and no
    float64 oracle (``expected`` is None: values are not checked). What it checks is the meta kernel against
    the real one at every drawn point (``fuzz op``, ``ref check``): every output's shape, significant strides
    and dtype, and whether each raises. Whatever the real op raises counts as the op refusing the input."""

    name = "eager"
    compares_all_outputs = True  # every output against the meta kernel's, strides included
    rejects = (Exception,)

    def __init__(self, op: str, device: str = "cpu") -> None:
        from .._torch import core as C
        from ..contract.find import normalize_op

        self.op_name, self.device = op, device
        self.op = C.resolve_op(normalize_op(op))
        self.eras = _EveryEra()

    @classmethod
    def available(cls, op: str, device: str = "cpu") -> str | None:
        from .._torch import core as C
        from ..contract.find import normalize_op
        from ..errors import UserError

        why = C.device_available(device)
        if why is not None:
            return why
        try:
            resolved = C.resolve_op(normalize_op(op))
        except (UserError, ValueError):
            return f"{op} is not a registered op"
        from .._torch.eager_keys import eager_kernel_key

        if eager_kernel_key(resolved, device) is None:
            return f"{op} has no {device} kernel"
        return None

    def describe(self, eras: tuple[str, ...]) -> str:
        return f"the op's eager kernel on {self.device}"

    def has_path(self, era: str, path_id: str) -> bool:
        return True

    def arguments(self, case: BoundCase, dims: Mapping[str, int], seed: int = 0) -> dict[str, Any]:
        """The cpu draws, made on the device with the contract's layouts (a copy with ``.to`` would make an
        expanded input dense and drop a storage offset)."""
        return make_arguments(case, dims, seed, self.device)

    def select_path(self, args: Mapping[str, Any], era: str) -> str | None:  # type: ignore[override]
        return None

    def run(self, args: Mapping[str, Any], era: str, path: str | None = None) -> tuple[Any, ...]:
        from .._torch import core as C

        try:
            return C.call_op(self.op, dict(args))
        except NotImplementedError as err:  # a stub for other backends, or no kernel for this dispatch key: torch
            # has no kernel that could accept or refuse the input here, so it is not the input's refusal (SC014)
            line = (str(err).strip().splitlines() or [""])[0][:160]
            raise Unmodelled(f"the eager kernel on {self.device} is not implemented: {line}") from err

    def expected(self, args: Mapping[str, Any], era: str, path: str) -> Any | None:
        return None

    def tolerance(self, args: Mapping[str, Any], dtype: str) -> tuple[float, float]:
        return TOLERANCES.get(dtype, (1e-5, 1e-5))


REFERENCES: list[type[RuntimeReference]] = [MetalReference, EagerReference]
"""The runtime references, asked in order by ``reference_for``: metal_ref for the MPS op (which has no CPU
kernel), then the op's own eager kernel."""


def reference_for(op: str, *, device: str = "cpu") -> tuple[RuntimeReference | None, str]:
    """The runtime reference of ``op`` (``ns::name`` or ``ns.name``) on ``device``, and ``""``; or None and
    why there is none (``"no runtime reference for OP"``, with each reference's reason)."""
    op = op.replace(".", "::", 1) if "::" not in op else op
    whys = []
    for ref in REFERENCES:
        why = ref.available(op, device)
        if why is None:
            return (ref(op, device) if ref is EagerReference else ref()), ""
        whys.append(why)
    return None, (f"no runtime reference for {op}" + ("" if device == "cpu" else f" on {device}")
                  + f" ({whys[-1]})" if whys else "")


def outputs_differ(meta: Any, real: Any) -> str | None:
    """How a meta kernel's output differs from the real kernel's (shape, dtype, significant strides: what
    torch's fake-tensor cross-check compares), or None. Tensors only; other outputs compare by value."""
    from .._torch import core as C

    if C.is_tensor(real) and not C.is_tensor(meta) and isinstance(getattr(meta, "shape", None), tuple) \
            and hasattr(meta, "dtype"):
        return _data_sized_differ(meta, real)
    if not (C.is_tensor(meta) and C.is_tensor(real)):
        if C.is_tensor(meta) != C.is_tensor(real):
            return f"{_kind(meta)} where the runtime returns {_kind(real)}"
        return None if meta == real or real is None or meta is None else f"{meta!r} where the runtime returns {real!r}"
    if tuple(meta.shape) != tuple(real.shape):
        return f"shape {tuple(meta.shape)} where the runtime's is {tuple(real.shape)}"
    if meta.dtype != real.dtype:
        return f"dtype {str(meta.dtype)[6:]} where the runtime's is {str(real.dtype)[6:]}"
    ms, rs = C.significant_strides(meta), C.significant_strides(real)
    if ms != rs:
        return f"strides {tuple(meta.stride())} where the runtime's are {tuple(real.stride())}"
    return None


def _data_sized_differ(meta: Any, real: Any) -> str | None:
    """A fake output with sizes the data decides (``_torch.backed.DataDependent``: None where it does) against the
    runtime's tensor: its rank, its known sizes and its dtype (hunt 56: a rank-4 output was "a tensor where the
    runtime returns a tensor")."""
    shown = "(" + ", ".join("?" if n is None else str(n) for n in meta.shape) + ("," if len(meta.shape) == 1 else "") + ")"
    if len(meta.shape) != real.dim() or any(n is not None and n != r for n, r in zip(meta.shape, real.shape)):
        return f"shape {shown} (? from the data) where the runtime's is {tuple(real.shape)}"
    if meta.dtype != real.dtype:
        return f"dtype {str(meta.dtype)[6:]} where the runtime's is {str(real.dtype)[6:]}"
    return None


def _kind(x: Any) -> str:
    return "None" if x is None else ("a tensor" if hasattr(x, "dtype") else type(x).__name__)


@dataclass(frozen=True)
class ValueMismatch:
    """Where output 0 differs from ``expected`` beyond the tolerance."""

    bad: int  # values outside the tolerance
    total: int
    index: tuple[int, ...]  # the first of them
    want: float
    got: float
    max_error: float  # the largest absolute error (inf where only one side is NaN)


def compare_values(got: Any, want: Any, atol: float, rtol: float) -> ValueMismatch | None:
    """``got`` (any dtype, ``want``'s number of values) against the float64 ``want``: |got - want| <=
    atol + rtol * |want|, NaN matching NaN. None when every value is within the tolerance."""
    import torch

    a = got.double().reshape(want.shape)
    close = torch.isclose(a, want, rtol=rtol, atol=atol, equal_nan=True)
    if bool(close.all()):
        return None
    idx = tuple((~close).nonzero()[0].tolist())
    err = float((a - want).abs().nan_to_num(math.inf).max())
    return ValueMismatch(int((~close).sum()), close.numel(), idx, want[idx].item(), a[idx].item(), err)


COMPARED_RULES = (RuleCode.META_RUNTIME_MISMATCH, RuleCode.META_ACCEPTS_REJECTED_INPUT)
"""Rules of the meta kernel against the real one that ``fuzz op`` and ``ref check`` also report from a runtime
run (an eager reference): their ``[[suppress]]`` tables are read the same way."""


def live_runtime_suppressions(contract: Contract) -> list:
    """The contract's ``[[suppress]]`` tables for runtime rules (SC010-SC014, and SC015/SC021 as a runtime run
    finds them) that have not expired."""
    return suppressions.in_force(contract.suppressions, [*RUNTIME_RULES, *COMPARED_RULES])


def accepted_by(suppressions: list, rule: str, path: str, case_id: str):
    """The first suppression accepting a runtime finding of ``rule`` on contract path ``path``, or None."""
    for s in suppressions:
        if s.rule == rule and (not s.path or s.path == path) and (not s.case or s.case in case_id):
            return s
    return None
