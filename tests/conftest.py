"""Shared test fixtures. Fakes live only at process boundaries (see DESIGN.md, Testing)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# CI clones the repo next to a copy of shared/; RLPILOT_SHARED overrides for other layouts.
SHARED = Path(os.environ.get("RLPILOT_SHARED", REPO.parent / "shared"))
FIXTURES = SHARED / "fixtures"


@pytest.fixture
def shared_fixtures() -> Path:
    assert FIXTURES.is_dir(), f"shared fixtures not found at {FIXTURES}; set RLPILOT_SHARED"
    return FIXTURES
