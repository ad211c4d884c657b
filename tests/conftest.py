"""Shared test fixtures. Fakes live only at process boundaries (see DESIGN.md, Testing).

The one resolver of `../shared/` (upstream's published configs and schemas, the seed playbook):
every test that reads it goes through `shared()`, `needs_shared()` or `shared_cases()` here. On a
clone with nothing beside it those tests skip with one line naming what they need; CI sets
RLPILOT_REQUIRE_SHARED=1, which turns each of those skips into a failure.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# CI clones the repo next to a copy of shared/; RLPILOT_SHARED overrides for other layouts.
SHARED = Path(os.environ.get("RLPILOT_SHARED", REPO.parent / "shared"))
REQUIRE_SHARED = os.environ.get("RLPILOT_REQUIRE_SHARED", "") not in ("", "0")
FIXTURES = SHARED / "fixtures"
CORPUS = SHARED / "corpus/prime-rl"


def _cache_bytecode_out_of_tree() -> None:
    """Where PYTHONDONTWRITEBYTECODE is set (this project's machines set it), every Python the tests
    start compiled each module it imports from source again: 0.6 s of each `rlpilot` run, 40% of a
    bench play. The suite keeps the intent (no __pycache__ in the tree or the venvs) and caches
    bytecode in a folder of its own; set here, before xdist starts its workers, so they and every
    child inherit it."""
    if os.environ.pop("PYTHONDONTWRITEBYTECODE", "") and "PYTHONPYCACHEPREFIX" not in os.environ:
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
        os.environ["PYTHONPYCACHEPREFIX"] = str(cache / "rlpilot-tests" / "pycache")


_cache_bytecode_out_of_tree()


def _missing(relative: str) -> str:
    return f"needs {SHARED / relative} (upstream's data beside the clone as ../shared; or set RLPILOT_SHARED)"


def shared(relative: str) -> Path:
    """The path of ../shared/RELATIVE for a running test: the test skips without it (fails in CI)."""
    path = SHARED / relative
    if not path.exists():
        if REQUIRE_SHARED:
            pytest.fail(_missing(relative) + "; RLPILOT_REQUIRE_SHARED is set", pytrace=False)
        pytest.skip(_missing(relative))
    return path


def needs_shared(relative: str) -> pytest.MarkDecorator:
    """A mark for a test (or a module's `pytestmark`) that reads ../shared/RELATIVE."""
    missing = not (SHARED / relative).exists()
    return pytest.mark.skipif(missing and not REQUIRE_SHARED, reason=_missing(relative))


def shared_cases(relative: str, cases: Callable[[Path], list], arity: int = 1) -> list:
    """Parameters read from ../shared/RELATIVE at collection; without it, one case that skips (so
    the reason is ours, not pytest's 'empty parameter set'), and fails when CI requires the folder."""
    path = SHARED / relative
    if path.exists():
        return cases(path)
    marks = [] if REQUIRE_SHARED else [pytest.mark.skip(reason=_missing(relative))]
    return [pytest.param(*[None] * arity, marks=marks, id="needs-shared")]


def pytest_sessionstart(session: pytest.Session) -> None:
    if REQUIRE_SHARED and not SHARED.is_dir():
        raise pytest.UsageError(_missing("") + "; RLPILOT_REQUIRE_SHARED is set")


@pytest.fixture
def shared_fixtures() -> Path:
    return shared("fixtures")


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
