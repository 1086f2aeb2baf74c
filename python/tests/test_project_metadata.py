"""pyproject.toml keeps the forms current setuptools accepts without deprecation warnings at install time."""

from __future__ import annotations

import re
from pathlib import Path

PYPROJECT = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text(encoding="utf-8")


def test_license_is_an_spdx_string_not_a_table():
    # A `license = { text = ... }` table makes setuptools warn three times on every `pip install -e python`.
    assert re.search(r'^license = "MIT"$', PYPROJECT, re.MULTILINE)
    assert not re.search(r"^license = \{", PYPROJECT, re.MULTILINE)


def test_build_requires_a_setuptools_that_reads_spdx_license_strings():
    match = re.search(r'^requires = \["setuptools>=(\d+)"\]$', PYPROJECT, re.MULTILINE)
    assert match and int(match.group(1)) >= 77
