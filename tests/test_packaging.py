"""pyproject.toml: the license is an SPDX expression string (the table form makes setuptools warn on every
install), and the build requires a setuptools that reads that form."""

from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")
licenses = pytest.importorskip("packaging.licenses")
from packaging.requirements import Requirement  # noqa: E402

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def test_license_is_a_canonical_spdx_expression_and_setuptools_reads_it():
    project = tomllib.loads(PYPROJECT.read_text())
    license_ = project["project"]["license"]
    assert isinstance(license_, str), f"license is {license_!r}, not an SPDX string"
    assert licenses.canonicalize_license_expression(license_) == license_
    setuptools = next(Requirement(r) for r in project["build-system"]["requires"]
                      if Requirement(r).name == "setuptools")
    assert not setuptools.specifier.contains("76.9"), "setuptools < 77 rejects a string license"
    assert setuptools.specifier.contains("77.0")
