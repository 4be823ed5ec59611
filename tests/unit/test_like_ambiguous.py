"""``like ARG`` of a channels-last ARG where its strides cannot tell its format (channels and spatial sizes all 1):
torch takes it for contiguous (c10's is_channels_last_strides_3d), and so is the runtime's output (hunt 37: a 3-D
convolution of a (2, 1, 1, 1, 1) input, eager and fake alike, where verify claimed SC018). And the thread count a
supervised child runs fake kernels with: the parent's, since torch's CPU convolution (and FakeTensor's rule for it)
picks the output layout by it (hunt 37: SC018 in the supervised child, SC005 in process)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from shapecheck.contract.load import load_contract
from shapecheck.logic import expr as E
from shapecheck.prove.verify import Options, verify_op
from shapecheck.rules import RuleCode
from shapecheck.trace import isolate

KERNELS = Path(__file__).resolve().parents[1] / "kernels"
CONTRACT = KERNELS / "conv3d_channels_last.toml"


def _strides(case_id: str, point: dict[str, int]) -> tuple[int, ...]:
    case = next(c for c in load_contract(str(CONTRACT)).cases() if c.id == case_id)
    out = case.paths[0].specs[0]
    return tuple(E.evaluate(s, point) for s in out.strides)


def test_like_a_channels_last_input_is_contiguous_where_its_strides_cannot_tell_and_channels_last_elsewhere():
    ambiguous = {"N": 2, "Ci": 1, "Co": 2, "D": 1, "H": 1, "W": 1}
    assert _strides("k=1,p=1,fmt=channels_last_3d", ambiguous) == (54, 27, 9, 3, 1)  # eager's, shape (2, 2, 3, 3, 3)
    assert _strides("k=1,p=1,fmt=channels_last_3d", {**ambiguous, "Ci": 2}) == (54, 1, 18, 6, 2)
    assert _strides("k=1,p=1,fmt=channels_last_3d", {**ambiguous, "W": 2}) == (72, 1, 24, 8, 2)
    assert _strides("k=1,p=1,fmt=contiguous", ambiguous) == (54, 27, 9, 3, 1)


def test_the_eager_kernel_agrees_where_the_input_is_ambiguous():
    x = torch.randn(2, 1, 1, 1, 1).to(memory_format=torch.channels_last_3d)
    w = torch.randn(2, 1, 1, 1, 1).to(memory_format=torch.channels_last_3d)
    out = torch.ops.aten.convolution(x, w, None, [1] * 3, [1] * 3, [1] * 3, False, [0] * 3, 1)
    assert out.stride() == _strides("k=1,p=1,fmt=channels_last_3d", {"N": 2, "Ci": 1, "Co": 2, "D": 1, "H": 1,
                                                                       "W": 1})


@pytest.mark.skipif(not isolate.can_isolate(), reason="no fork here: runs are not supervised")
def test_a_supervised_child_keeps_the_thread_count_for_fake_kernels_and_takes_one_for_real_ones():
    before = torch.get_num_threads()
    assert isolate.supervised(lambda send: torch.get_num_threads(), lambda m: None, one_thread=False) == before
    assert isolate.supervised(lambda send: torch.get_num_threads(), lambda m: None) == 1
    assert torch.get_num_threads() == before


@pytest.mark.slow
@pytest.mark.skipif(torch.get_num_threads() < 2 or not isolate.can_isolate(),
                    reason="needs 2 intra-op threads and fork: torch's choice differs only between 1 and more")
def test_verify_of_a_channels_last_3d_convolution_is_the_same_in_a_supervised_child_as_in_process(monkeypatch):
    def run():
        r = verify_op("aten::convolution", contract=str(CONTRACT), options=Options(jobs=1))
        return sorted((v.case, v.code.value) for v in r.violations)

    in_process = run()
    assert ("k=1,p=1,fmt=channels_last_3d", RuleCode.OUTPUT_LAYOUT_MISMATCH.value) not in in_process
    assert ("k=1,p=0,fmt=channels_last_3d", RuleCode.INCONCLUSIVE.value) in in_process
    assert isolate.supervised(lambda send: run(), lambda m: None, one_thread=False) == in_process


def test_sc018s_fix_says_how_to_allocate_in_the_layout_the_contract_states():
    from shapecheck.prove.outputs import _layout_fix

    cl = _layout_fix((16, 8, 4, 2, 1), (16, 1, 8, 4, 2), (2, 2, 2, 2, 2), "like input (channels_last_3d)")
    assert "suggest_memory_format(input)" in cl and "torch.channels_last_3d" in cl and "transpose" not in cl
    assert "contiguous" in _layout_fix((4, 1, 2), (4, 2, 1), (2, 2, 2), "contiguous")
    assert _layout_fix((4, 1, 2), (4, 2, 1), (2, 2, 2), "dim order (0, 2, 1)") == ""  # the rule's own fix
    assert "no memory order is wrong" in _layout_fix((4, 1, 1), (4, 1, 2), (1, 4, 1), "like input (channels_last)")
