"""Every guard_or_false answer a trace gets reaches verify, also one torch gives from its cache (hunt 53): torch's
``ShapeEnv._inner_evaluate_expr`` is an lru_cache, so a later line asking the same question got the first asker's
answer and logged nothing. The first was a layout test (left out: it decides a layout), the later a size, and the
trace's output held only for D != 1: verify passed a kernel wrong at D = 1 (and col2im's decomposition copied with
an unbatched ``.squeeze()``)."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT

PAD_ROWS = str(ROOT / "docs" / "examples" / "pad_rows.toml")
KERNELS = ROOT / "tests" / "kernels" / "cached_answers.py"


@pytest.mark.parametrize(("fn", "verdict"), [("squeezes_after_a_layout_test", "fail"),
                                             ("keeps_the_dims_after_a_layout_test", "pass")])
@pytest.mark.slow
def test_a_size_question_torch_answers_from_its_cache_is_explored(fn, verdict):
    from shapecheck.prove.verify import verify_op

    r = verify_op("mylib::pad_rows", contract=PAD_ROWS, meta=f"{KERNELS}:{fn}")
    assert r.verdict == verdict, [v.message for v in r.violations]
    if verdict == "fail":
        assert any(v.code.value == "SC002" and v.counterexample.get("D") == 1 for v in r.violations)


@pytest.mark.slow
def test_an_int_list_reaches_a_python_kernel_as_a_list_in_every_run():
    """hunt 53: the runs on concrete sizes passed int[] arguments as tuples, and a copy of col2im's decomposition
    (``[...] + kernel_size``) raised TypeError there: a false SC007 on an unmodified copy."""
    from shapecheck.options import VerifyOptions
    from shapecheck.prove.verify import verify_op

    r = verify_op("aten::col2im", contract=str(ROOT / "tests" / "kernels" / "col2im_wrong_width.toml"),
                  meta=f"{KERNELS}:col2im_adds_lists", options=VerifyOptions())
    codes = {v.code.value for v in r.violations}
    assert "SC002" in codes and "SC007" not in codes, [v.message for v in r.violations]
