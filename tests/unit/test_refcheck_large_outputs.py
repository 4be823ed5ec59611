"""ref check never allocates an output past what a real tensor may hold here, and reads the allocator's refusal
as this machine's, not the op's (hunt 56: replication_pad3d at a point whose padded output was 10.9 GB was an
SC014 "the runtime rejects" on a correct op, or a killed process)."""

import pytest
import torch

from shapecheck.contract.load import load_contract
from shapecheck.runtime.refcheck import REAL_ELEMENTS, _out_of_memory, check_point
from shapecheck.runtime.reference import Unmodelled

CONTRACT = """schema = 1
op = "aten::constant_pad_nd"

[dims]
N = { min = 1, max = 8 }
L = { min = 1, max = 8 }
P = { min = 0, max = 1073741824 }

[[args]]
name = "self"
kind = "tensor"
dtype = "float32"
shape = "(N, L)"

[[args]]
name = "pad"
kind = "ints"
value = ["P", "P"]

[[paths]]
id = "padded"
when = "true"
outputs = ["(N, L + 2 * P)"]
"""


def test_an_output_past_the_real_tensor_limit_is_not_run_and_not_a_rejection(tmp_path):
    f = tmp_path / "pad.toml"
    f.write_text(CONTRACT)
    (case,) = load_contract(str(f)).cases()
    (path,) = case.paths
    with pytest.raises(Unmodelled, match="output too large"):
        check_point(case, path, {"N": 1, "L": 1, "P": REAL_ELEMENTS}, 0, False)
    assert check_point(case, path, {"N": 2, "L": 3, "P": 4}, 0, False) == []  # a small one runs, and agrees


def test_the_allocators_refusal_is_told_apart_from_the_ops():
    assert _out_of_memory(RuntimeError("[enforce fail at alloc_cpu.cpp:121] DefaultCPUAllocator: can't allocate "
                                       "memory: you tried to allocate 10921902080 bytes"))
    assert _out_of_memory(torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB"))
    assert not _out_of_memory(RuntimeError("Padding size should be less than the corresponding input dimension"))


def test_a_fake_output_sized_by_the_data_is_compared_by_rank_known_sizes_and_dtype():
    """hunt 56: ref check said "output 0 of the meta kernel has a tensor where the runtime returns a tensor"."""
    from shapecheck._torch.backed import DataDependent
    from shapecheck.runtime.reference import outputs_differ

    real = torch.zeros(7, 10)
    assert outputs_differ(DataDependent((7, None, 7, 10), torch.float32), real) == \
        "shape (7, ?, 7, 10) (? from the data) where the runtime's is (7, 10)"
    assert outputs_differ(DataDependent((8, None), torch.float32), real).startswith("shape (8, ?)")
    assert outputs_differ(DataDependent((7, None), torch.float64), real) == \
        "dtype float64 where the runtime's is float32"
    assert outputs_differ(DataDependent((7, None), torch.float32), real) is None
