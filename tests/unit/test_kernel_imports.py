"""A kernel that imports a module this environment lacks, torch's or another package's, is inconclusive alike: what
it would do is not known here (hunt 57: a missing third-party module was an SC007 failure, a missing torch
module inconclusive)."""

import pytest

from shapecheck.findings import Verdict
from shapecheck.prove.verify import Options, verify_op
from shapecheck.rules import RuleCode
from tests.conftest import ROOT

KERNEL = '''import torch
from torch._meta_registrations import register_meta

aten = torch.ops.aten


@register_meta(aten.pixel_shuffle.default)
def meta_pixel_shuffle(self, upscale_factor):
    import {module}
    c = self.shape[-3] // (upscale_factor * upscale_factor)
    return self.new_empty((*self.shape[:-3], c, self.shape[-2] * upscale_factor, self.shape[-1] * upscale_factor))
'''


@pytest.mark.slow
@pytest.mark.parametrize("module", ["no_such_package_anywhere", "torch._no_such_module_in_this_torch"])
def test_a_missing_module_is_inconclusive_whoever_ships_it(tmp_path, module):
    f = tmp_path / "regs.py"
    f.write_text(KERNEL.format(module=module))
    r = verify_op("aten::pixel_shuffle", contract=str(ROOT / "contracts" / "aten" / "pixel_shuffle.toml"),
                  meta_source=str(f), options=Options(jobs=1))
    assert r.verdict is Verdict.INCONCLUSIVE, [(v.code, v.message) for v in r.violations]
    assert {v.code for v in r.violations} == {RuleCode.INCONCLUSIVE}
    assert any("No module named" in v.expr for v in r.violations)


@pytest.mark.slow
def test_a_kernels_not_implemented_error_keeps_its_message(tmp_path):
    """FakeTensorMode re-raises the kernel's NotImplementedError as UnsupportedOperatorException: the kernel's own
    words stay in the finding (hunt 57: "todo" was lost)."""
    f = tmp_path / "regs.py"
    f.write_text(KERNEL.replace("    import {module}\n", "    raise NotImplementedError('rank 5 is todo')\n"))
    r = verify_op("aten::pixel_shuffle", contract=str(ROOT / "contracts" / "aten" / "pixel_shuffle.toml"),
                  meta_source=str(f), options=Options(jobs=1))
    assert r.verdict is Verdict.FAIL
    assert all(v.code is RuleCode.KERNEL_ERROR and "NotImplementedError: rank 5 is todo" in v.expr
               for v in r.violations), [(v.code, v.expr) for v in r.violations]


@pytest.mark.slow
def test_a_value_the_ops_schema_does_not_take_is_said_so(tmp_path):
    """hunt 57: torch 2.0's flash attention kernel returns an int where this torch's schema has a Tensor:
    "Unable to cast 1 to Tensor" alone did not say why."""
    f = tmp_path / "regs.py"
    f.write_text(KERNEL.replace("    import {module}\n", "    return 1\n"))
    r = verify_op("aten::pixel_shuffle", contract=str(ROOT / "contracts" / "aten" / "pixel_shuffle.toml"),
                  meta_source=str(f), options=Options(jobs=1))
    assert r.verdict is Verdict.FAIL
    assert r.violations and all("the op's schema in this torch does not take" in v.expr for v in r.violations), \
        [(v.code, v.expr) for v in r.violations]
