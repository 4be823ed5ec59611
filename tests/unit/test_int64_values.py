"""Every integer a contract gives torch lies within int64 wherever the domain holds, constants folded from an
expression and a choice's value included (hunt 54: ``9223372036854775807 + 1`` as a size, a storage offset of
2**63-1 and an int list's ``9223372036854775807 + pad`` passed ``contract check``; verify then exited 4, or blamed
torch's kernel with SC007)."""

from __future__ import annotations

import pytest

from tests.conftest import ROOT


def _mutant(tmp_path, name, old, new):
    text = (ROOT / "contracts" / "aten" / f"{name}.toml").read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / f"{name}.toml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


@pytest.mark.parametrize(("name", "old", "new", "key"), [
    ("pixel_shuffle", 'shape = "(B, Ci, H, W)"', 'shape = "(B, Ci, H, 9223372036854775807 + 1)"', "[args.self.shape]"),
    ("constant_pad_nd", 'value = ["pad", "2 * pad"]', 'value = ["pad", "9223372036854775807 + pad"]',
     "[args.pad.value]"),
    ("linalg_cross", 'shape = "(B, 1, 3)"', 'shape = "(B, 1, 3)"\nstorage_offset = "9223372036854775807"',
     "[args.self.storage_offset]"),
])
def test_an_integer_past_int64_is_a_contract_error_naming_its_key(tmp_path, name, old, new, key):
    from shapecheck.contract.load import load_contract
    from shapecheck.errors import ContractError

    path = _mutant(tmp_path, name, old, new)
    with pytest.raises(ContractError) as err:
        load_contract(path)
    assert key in str(err.value) and ("int64" in str(err.value) or "2**63-1" in str(err.value)), err.value


def test_the_largest_int64_itself_is_a_valid_int_argument(tmp_path):
    from shapecheck.contract.load import load_contract

    load_contract(_mutant(tmp_path, "constant_pad_nd", 'value = ["pad", "2 * pad"]',
                          'value = ["pad", "9223372036854775807 - pad"]'))
