"""A ``--meta-source`` file's module-level constants that its kernel reads: a literal is the file's value (never
the installed torch's), another binding the installed module's only where it is the same statement, else the
verdict is inconclusive (hunt 58: ``cufft_max_ndim = 2`` in the file was read as torch's 3, a false PASS; a
constant torch lacks was a NameError, inconclusive for a correct kernel)."""

import pytest

from shapecheck.findings import Verdict
from shapecheck.prove.verify import Options, verify_op
from tests.conftest import ROOT

FILE = '''import torch
from torch._meta_registrations import register_meta

aten = torch.ops.aten
{constant}


@register_meta(aten.pixel_shuffle.default)
def meta_pixel_shuffle(self, upscale_factor):
    r = upscale_factor
    c = self.shape[-3] // (r * r)
    return self.new_empty((*self.shape[:-3], c, self.shape[-2] * r, self.shape[-1] * r * {use}))
'''


def _verify(tmp_path, constant: str, use: str):
    f = tmp_path / "regs.py"
    f.write_text(FILE.format(constant=constant, use=use))
    return verify_op("aten::pixel_shuffle", contract=str(ROOT / "contracts" / "aten" / "pixel_shuffle.toml"),
                     meta_source=str(f), options=Options(jobs=1))


@pytest.mark.slow
@pytest.mark.parametrize("constant, use, verdict", [
    ("cufft_max_ndim = 2", "(cufft_max_ndim - 1)", Verdict.PASS),  # torch's own is 3: read as 3, a wrong width
    ("cufft_max_ndim = 2", "(cufft_max_ndim - 2)", Verdict.FAIL),  # the file's 2: the width is 0 (it passed)
    ("widen: int = 1", "widen", Verdict.PASS),  # a constant torch lacks: the file's (it was a NameError)
    ("cufft_max_ndim = max(2, 1)", "(cufft_max_ndim - 1)", Verdict.INCONCLUSIVE),  # not a literal, not torch's
])
def test_a_files_constant_is_its_own_value_or_the_verdict_says_it_is_not_known(tmp_path, constant, use, verdict):
    r = _verify(tmp_path, constant, use)
    assert r.verdict is verdict, [(v.code, v.message) for v in r.violations]
    if verdict is Verdict.INCONCLUSIVE:
        assert any("not a literal" in v.message for v in r.violations)
