"""An inferred ``requires`` says who asserted it: the kernel's own ``torch._check``, or torch inside an op the
kernel's line calls (indexing ``x[0]`` asserts ``x_0 > 0``; it was called "the kernel asserts it (torch._check)")."""

from __future__ import annotations

import pytest

from tests.unit.test_audit_untraced import audit_lib

LIB = '''
import torch
from torch.library import custom_op


@custom_op("assertorigin::first_row", mutates_args=())
def first_row(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x[0].clone()


@first_row.register_fake
def _(x, y):
    torch._check(y.shape[0] == x.shape[1])
    return x[0].new_empty(x.shape[1:])
'''


@pytest.mark.slow
def test_a_requires_names_who_asserted_it(tmp_path, monkeypatch):
    _, doc = audit_lib(tmp_path, monkeypatch, "assert_origin_lib", LIB)
    requires = {r["expr"]: r["evidence"] for r in doc["ops"][0]["requires"]}
    assert requires["y_0 == x_1"] == "the kernel asserts it (torch._check)"
    index = next(e for x, e in requires.items() if x.startswith("x_0 > 0"))
    assert index.startswith("torch asserts it inside an op this line calls"), requires
