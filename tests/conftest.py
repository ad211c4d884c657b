"""Shared test fixtures. Fakes live only at process boundaries (see DESIGN.md, Testing)."""

from __future__ import annotations

import os
import signal
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


@pytest.fixture(autouse=True, scope="session")
def private_runtime_folder(tmp_path_factory: pytest.TempPathFactory):
    """Schema workers of this run listen in a folder of its own, and end with it: an idle one
    would otherwise stay for ten minutes after the suite."""
    folder = tmp_path_factory.mktemp("runtime")
    folder.chmod(0o700)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_RUNTIME_DIR", str(folder))
        yield folder
    for pid_file in folder.glob("*/*.pid"):
        try:
            os.kill(int(pid_file.read_text()), signal.SIGTERM)
        except (ProcessLookupError, ValueError):
            pass
