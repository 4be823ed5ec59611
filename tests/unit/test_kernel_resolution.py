"""The kernel verify traces is the one torch runs (issue 22): ``_torch.kernels.resolve_kernel`` names it without
running the op, and on a deterministic sample of 200 aten ops the first of the op's registered functions that
each run reaches is the one it names:

- verify's own trace (the installed kernel, as ``kernel.load.installed_kernel`` gives it, under verify's
  ``TraceEnv``: unbacked sizes, the Python dispatcher) and strict ``torch.export`` reach resolve's EXPORT kernel;
- plain FakeTensorMode (no Python dispatcher, backed sizes) reaches its FAKE kernel.

"Reached" is the first entry into one of the op's registered Python functions (every ``py_kernels`` entry, the
meta and decomposition tables, FakeTensor's rules, its fast rules, a custom fake), compared by the code of the
function's body, at the top level or inside FakeTensorMode's dispatch of this op; a C++ kernel is predicted as
none of them running (above FakeTensorMode: FakeTensorMode never sees the op). The sample: functional aten
overloads with a Tensor first argument and inputs built from the schema that FakeTensorMode runs at static
sizes, ordered by the sha1 of their names (r22's validator, /work/notes/r22/validate.py, measured the same).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import sys
import warnings

import pytest

torch = pytest.importorskip("torch")

from shapecheck._torch import core as C  # noqa: E402
from shapecheck._torch import kernels as K  # noqa: E402

pytestmark = pytest.mark.slow

aten = torch.ops.aten
F32, I64, BOOL = torch.float32, torch.int64, torch.bool
SAMPLE = 200
FAKE_FILE = "_subclasses/fake_tensor.py"

NAMED = {  # ops whose inputs the schema alone does not give
    "aten::upsample_nearest2d": lambda T: ((T([2, 3, 4, 4]), [8, 8]), {}),
    "aten::upsample_nearest2d.vec": lambda T: ((T([2, 3, 4, 4]), [8, 8], None), {}),
    "aten::masked_select": lambda T: ((T([4, 5]), T([4, 5], BOOL)), {}),
    "aten::repeat_interleave.Tensor": lambda T: ((T([4], I64),), {}),
    "aten::nonzero": lambda T: ((T([4, 5]),), {}),
    "aten::index_put": lambda T: ((T([5, 6]), [T([3], I64)], T([3, 6])), {}),
    "aten::im2col": lambda T: ((T([2, 3, 8, 8]), [3, 3], [1, 1], [0, 0], [1, 1]), {}),
    "aten::avg_pool2d": lambda T: ((T([2, 3, 8, 8]), [2, 2]), {}),
    "aten::native_batch_norm": lambda T: ((T([2, 3, 4]), T([3]), T([3]), T([3]), T([3]), False, 0.1, 1e-5), {}),
}
SKIP = ("_foreach_", "sparse", "quantize", "mkldnn", "cudnn", "miopen", "nested", "fbgemm", "_mps", "vulkan",
        "xnnpack", "cuda", "_fused", "q_", "_test", "_mkl", "onednn", "_jagged", "mps_", "rnn", "lstm", "gru",
        "_sobol", "_amp_", "_fake_quant", "histogram", "_cummax", "_cummin", "_efficient_attention",
        "_flash_attention", "segment_reduce", "ctc", "linalg_", "_linalg", "lu_", "svd", "cholesky", "eig", "qr",
        "lstsq", "slogdet", "inverse", "pinverse", "matrix_exp", "_weight_norm", "embedding_bag", "_pack_padded",
        "_pad_packed", "unique", "_local_scalar", "item", "_assert", "sym_", "_functional_assert", "lift",
        "record_stream", "_print", "_version", "is_", "_make_dep_token", "_has_", "_chunk_cat", "_validate",
        "set_", "_reshape_alias", "_grouped_mm", "_scaled_mm", "_int_mm", "_weight_int", "_convert_weight",
        "_dyn_quant", "_wrapped", "_to_sparse", "_spdiags", "bincount", "_cslt", "_mixed_dtypes", "_transformer",
        "_native_multi_head", "_triton", "_masked_softmax", "_thnn", "_cdist", "normal", "rand", "bernoulli",
        "poisson", "multinomial", "dropout", "_standard_gamma", "_sample_dirichlet", "binomial", "_nnpack", "fft",
        "stft", "_empty_affine", "_empty_per_channel", "_autocast", "_cast_", "_use_", "_debug", "_dimI", "_dimV",
        "_nnz", "_coalesce", "_indices", "_values", "ccol", "crow", "row_indices", "col_indices", "_lazy",
        "_propagate", "_conj_physical", "_neg_view", "_to_cpu", "_copy_from", "pin_memory", "alias_copy",
        "_fw_primal", "_make_dual", "_unpack_dual", "_new_zeros_with_same", "_saturate_weight",
        "native_channel_shuffle", "_add_batch_dim", "_remove_batch_dim", "_functionalize", "_fill_mem_eff",
        "_resize_output")
INTS = {"dim": 0, "dim0": 0, "dim1": 1, "start_dim": 0, "end_dim": -1, "groups": 1, "diagonal": 0, "k": 1, "n": 2,
        "chunks": 2, "sections": 2, "split_size": 1, "repeats": 2, "size": 2, "length": 1, "start": 0, "end": 2,
        "step": 1, "index": 0, "offset": 0, "source": 0, "destination": 1, "upscale_factor": 1,
        "downscale_factor": 1, "reduction": 1, "padding_idx": -1, "num_classes": -1, "bins": 4, "ndim": 1}


def _ints(name: str, rank: int) -> list[int]:
    if name in ("dim", "dims", "source", "destination"):
        return [0]
    if name in ("size", "shape", "sizes", "output_size"):
        return [3] * rank
    if name in ("padding", "output_padding"):
        return [0] * max(1, rank - 2)
    if name == "pad":
        return [1, 1]
    if name == "repeats":
        return [1] * rank
    if name in ("perm", "permutation"):
        return list(range(rank))
    return [1] * max(1, rank - 2)


def _value(a, rank: int, dtype, T):
    t = str(a.type)
    optional = t.startswith("Optional[") or t.endswith("?")
    base = t.removeprefix("Optional[").removesuffix("]") if t.startswith("Optional[") else t.rstrip("?")
    shape = [4, 5, 6, 7][:rank]
    if base == "Tensor":
        return T(shape, dtype)
    if optional:
        return None
    table = {"List[Tensor]": lambda: [T(shape, dtype), T(shape, dtype)], "Tensor[]": lambda: [T(shape, dtype)] * 2,
             "List[Optional[Tensor]]": lambda: [T([3], I64)], "int": lambda: INTS.get(a.name, 1),
             "SymInt": lambda: INTS.get(a.name, 1), "bool": lambda: False, "float": lambda: 1.0,
             "number": lambda: 1, "Scalar": lambda: 1, "ScalarType": lambda: dtype,
             "List[bool]": lambda: [True] * rank, "str": lambda: "none"}
    if base in table:
        return table[base]()
    if base.startswith(("List[int]", "int[", "SymInt[")) or base == "List[SymInt]":
        return _ints(a.name, rank)
    raise TypeError(base)


def _specs(op):
    for rank in (4, 3, 2, 1):
        for dtype in (F32, I64, BOOL):
            def make(T, rank=rank, dtype=dtype):
                pos, kw = [], {}
                for a in op._schema.arguments:
                    if a.has_default_value():
                        continue
                    v = _value(a, rank, dtype, T)
                    (kw.__setitem__(a.name, v) if a.kwarg_only else pos.append(v))
                return tuple(pos), kw
            yield make


def _static(shape, dtype=F32):
    return torch.empty(shape, dtype=dtype)


def _runs(op, spec) -> bool:
    mode = C.static_fake_mode()
    try:
        with C.quiet_torch_logging(), mode:
            args, kwargs = spec(_static)
            op(*args, **kwargs)
        return True
    except Exception:  # noqa: BLE001 - a sample the op refuses
        return False


def sample() -> list[tuple[str, object, object]]:
    """(name, op, spec): the NAMED ops, then the sha1-ordered pool, up to SAMPLE ops that FakeTensorMode runs."""
    ops = {}
    for name in torch._C._dispatch_get_all_op_names():
        if not name.startswith("aten::"):
            continue
        packet, _, overload = name.split("::")[1].partition(".")
        short = name.replace(".default", "")
        if overload == "out" or overload.endswith("_out") or "out_" in overload or packet.endswith("_") \
                or "backward" in packet or (any(s in name for s in SKIP) and short not in NAMED):
            continue
        try:
            op = getattr(getattr(aten, packet), overload or "default")
        except (AttributeError, RuntimeError):
            continue
        schema = op._schema
        if schema.is_mutable or any(a.alias_info is not None and a.alias_info.is_write for a in schema.arguments):
            continue
        if not schema.arguments or "Tensor" not in str(schema.arguments[0].type):
            continue
        ops[short] = op
    order = [k for k in NAMED if k in ops] + sorted((k for k in ops if k not in NAMED),
                                                    key=lambda k: hashlib.sha1(k.encode()).hexdigest())
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in order:
            if len(out) >= SAMPLE:
                break
            op = ops[name]
            if not K.has_fake_kernel(op):
                continue
            spec = NAMED.get(name) or next((s for s in _specs(op) if _runs(op, s)), None)
            if spec is not None and _runs(op, spec):
                out.append((name, op, spec))
    return out


def registered_codes(op) -> dict:
    """code object -> where: every Python function torch has registered for the op, by its body's code."""
    import torch._decomp
    import torch._subclasses.fake_impls as fake_impls

    found = [(f"py_kernels[{k.name}]", fn) for k, fn in op.py_kernels.items()]
    found += [("meta_table", torch._decomp.meta_table.get(op)), ("decomposition_table",
              torch._decomp.decomposition_table.get(op)), ("rule", fake_impls.op_implementations_dict.get(op)),
              ("fast rule", fake_impls.get_fast_op_impls().get(op)), ("custom fake", K.custom_fake(op)),
              ("prim", getattr(op, "prim_meta_impl", None))]
    found += [("rule", impl) for check, impl in fake_impls.op_implementations_checks
              if impl is not fake_impls.dispatch_to_op_implementations_dict and check(op)]
    out = {}
    for label, fn in found:
        code = K.code_of(fn) if fn is not None and callable(fn) else None
        if code is not None:
            out.setdefault(code, label)
    return out


class Recorder:
    """A trace function (``sys.settrace``) for one call: the op's registered functions entered, each with the
    number of FakeTensorMode dispatches active and the op the innermost one handles; whether FakeTensorMode saw
    the op. A trace function, not a profile one: it is called on Python calls only, and follows only the frames of
    FakeTensorMode's dispatch (for their return), so an export under it costs about half what it did under
    ``sys.setprofile``, which is called on every call and return, C functions included."""

    def __init__(self, op, codes) -> None:
        self.op, self.codes = str(op), codes
        self.stack: list[tuple[object, str]] = []
        self.entered: list[tuple[int, str | None, object]] = []
        self.dispatched = False

    def __call__(self, frame, event, arg):
        code = frame.f_code
        if code.co_name == "_dispatch_impl" and code.co_filename.endswith(FAKE_FILE):
            func = str(frame.f_locals.get("func"))
            self.stack.append((frame, func))
            self.dispatched |= func == self.op
            frame.f_trace_lines = False  # its return only
            return self._returns
        if code in self.codes:
            self.entered.append((len(self.stack), self.stack[-1][1] if self.stack else None, code))
        return None

    def _returns(self, frame, event, arg):
        if event == "return" and self.stack and self.stack[-1][0] is frame:
            self.stack.pop()
        return self._returns

    def first(self):
        """The first of the op's functions entered above FakeTensorMode or in its dispatch of this op."""
        return next((code for depth, func, code in self.entered if depth == 0 or func == self.op), None)

    @contextlib.contextmanager
    def recording(self):
        previous = sys.gettrace()
        sys.settrace(self)
        try:
            yield self
        finally:
            sys.settrace(previous)


def agrees(resolved: K.Resolved, rec: Recorder) -> bool:
    first = rec.first()
    if isinstance(resolved.fn, torch._ops.OpOverload):  # a decomposition that is another op (a view_copy's view)
        return first is None and rec.dispatched
    want = K.code_of(resolved.fn) if resolved.fn is not None else None
    if resolved.layer == "above":
        return first == want and (want is not None or not rec.dispatched)
    return rec.dispatched and first == want


def verify_trace(name, op, spec) -> Recorder:
    """The op as verify traces it: the installed kernel (``installed_kernel``) under ``TraceEnv``."""
    from shapecheck.kernel.load import installed_kernel

    kernel = installed_kernel(name)
    rec = Recorder(op, registered_codes(op))
    with C.TraceEnv() as env:
        args, kwargs = spec(lambda shape, dtype=F32: torch.empty([env.size(1, 64) for _ in shape], dtype=dtype))
        with rec.recording(), contextlib.suppress(Exception):
            kernel.fn(*args, **kwargs)
    return rec


def plain_run(op, spec) -> Recorder:
    """The op under plain FakeTensorMode: backed sizes, no Python dispatcher."""
    from torch._dispatch.python import no_python_dispatcher
    from torch._dynamo.source import LocalSource
    from torch.fx.experimental.symbolic_shapes import DimDynamic, ShapeEnv, StatelessSymbolicContext

    mode = C.FakeTensorMode(shape_env=ShapeEnv())
    mode.cache_enabled = False
    count = [0]

    def T(shape, dtype=F32):
        count[0] += 1
        ctx = StatelessSymbolicContext(dynamic_sizes=[DimDynamic.DYNAMIC] * len(shape))
        return mode.from_tensor(torch.zeros(shape, dtype=dtype), source=LocalSource(f"x{count[0]}"),
                                symbolic_context=ctx)

    rec = Recorder(op, registered_codes(op))
    args, kwargs = spec(T)
    with C.quiet_torch_logging(), no_python_dispatcher(), mode, rec.recording(), contextlib.suppress(Exception):
        op(*args, **kwargs)
    return rec


def export_run(op, spec) -> Recorder:
    """``torch.export(strict=True)`` of a module calling the op, every input dim ``Dim.AUTO``."""
    from torch.export import Dim, export

    shapes: list = []

    class Slot:
        def __init__(self, i):
            self.i = i

    def probe(shape, dtype=F32):
        shapes.append((list(shape), dtype))
        return Slot(len(shapes) - 1)

    t_args, t_kwargs = spec(probe)

    def fill(v, xs):
        return xs[v.i] if isinstance(v, Slot) else [fill(i, xs) for i in v] if isinstance(v, list) else v

    class M(torch.nn.Module):
        def forward(self, *xs):
            return op(*[fill(a, xs) for a in t_args], **{k: fill(v, xs) for k, v in t_kwargs.items()})

    inputs = tuple(torch.rand(s).to(d) if d.is_floating_point else torch.zeros(s, dtype=d) for s, d in shapes)
    rec = Recorder(op, registered_codes(op))
    torch._dynamo.reset()
    previous = logging.root.manager.disable
    logging.disable(logging.CRITICAL)
    try:
        with rec.recording(), contextlib.suppress(Exception):
            export(M(), inputs, dynamic_shapes=(tuple({ax: Dim.AUTO for ax in range(len(s))} for s, _ in shapes),),
                   strict=True)
    finally:
        logging.disable(previous)
        torch._dynamo.reset()
    return rec


@pytest.fixture(scope="module")
def ops():
    return sample()


def test_the_sample_has_200_ops_and_covers_every_kind_of_kernel(ops):
    assert len(ops) == SAMPLE
    kinds = {K.resolve_kernel(op, mode).kind for _, op, _ in ops for mode in K.Mode}
    assert {K.ABOVE_PY, K.ABOVE_CIA_CPP, K.DECOMP, K.RULE, K.FAST, K.PY_META, K.CPP_META} <= kinds
    differ = [name for name, op, _ in ops if len(K.kernels_for(op)) == 2]
    assert {"aten::upsample_nearest2d", "aten::upsample_nearest2d.vec", "aten::native_batch_norm"} <= set(differ)


def test_verify_traces_the_kernel_resolve_names_for_export_on_every_sampled_op(ops):
    wrong = []
    for name, op, spec in ops:
        resolved = K.resolve_kernel(op, K.Mode.EXPORT)
        if not agrees(resolved, verify_trace(name, op, spec)):
            wrong.append(f"{name}: resolve says {resolved.label}")
    assert not wrong, f"{len(wrong)}/{len(ops)}:\n" + "\n".join(wrong)


def test_plain_fake_tensor_mode_runs_the_kernel_resolve_names_for_it_on_every_sampled_op(ops):
    wrong = []
    for name, op, spec in ops:
        resolved = K.resolve_kernel(op, K.Mode.FAKE)
        if not agrees(resolved, plain_run(op, spec)):
            wrong.append(f"{name}: resolve says {resolved.label}")
    assert not wrong, f"{len(wrong)}/{len(ops)}:\n" + "\n".join(wrong)


#: the export check in parts, so that pytest-xdist spreads its 200 strict exports over the workers
EXPORT_PARTS = 4


@pytest.mark.parametrize("part", range(EXPORT_PARTS))
def test_torch_export_reaches_the_kernel_verify_traces_on_every_sampled_op(ops, part):
    """The negative control: where the two modes differ, plain FakeTensorMode's kernel is not export's (the
    sample opens with such ops, so part 0 has some)."""
    wrong, control = [], []
    for name, op, spec in ops[part::EXPORT_PARTS]:
        rec = export_run(op, spec)
        export_kernel = K.resolve_kernel(op, K.Mode.EXPORT)
        if not agrees(export_kernel, rec):
            wrong.append(f"{name}: resolve says {export_kernel.label}")
        if len(K.kernels_for(op)) == 2:
            control.append((name, agrees(K.resolve_kernel(op, K.Mode.FAKE), rec)))
    assert not wrong, f"{len(wrong)}/{len(ops[part::EXPORT_PARTS])}:\n" + "\n".join(wrong)
    assert not any(ok for _, ok in control), control
    assert control or part != 0
