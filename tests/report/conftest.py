"""Fixtures of the report tests; the helpers live in report_helpers.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_helpers import ObjCase, make_obj_case


@pytest.fixture
def obj_case(tmp_path: Path) -> ObjCase:
    """A struct compiled with -g, a hand-written two-role profile of it and a plan."""
    return make_obj_case(tmp_path)
