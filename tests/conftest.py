from __future__ import annotations

import os
import shutil
from datetime import date, timedelta
from pathlib import Path

import pytest

from scout_tui.config.models import Config
from scout_tui.config.profile import load_config
from scout_tui.sandbox.demo.sample import Sample, build_sample

TODAY = date(2026, 12, 2)
FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="session", autouse=True)
def _no_user_dirs(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Tests and the commands they start never touch the user's cache, state, config or
    tokens."""
    home = tmp_path_factory.mktemp("xdg")
    os.environ["XDG_CACHE_HOME"] = str(home / "cache")
    os.environ["XDG_DATA_HOME"] = str(home / "data")
    os.environ["XDG_CONFIG_HOME"] = str(home / "config")
    os.environ.pop("SCOUT_STATE_DIR", None)
    # The suite's today, whatever the clock says: its fixtures are of 2026-12-02, and what a
    # publish may post under depends on what today and yesterday are.
    os.environ["SCOUT_TODAY"] = (TODAY + timedelta(days=1)).isoformat()
    os.environ.pop("SCOUT_GITHUB_API_URL", None)
    for name in ("GH_TOKEN", "GITHUB_TOKEN", "GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"):
        os.environ[name] = ""


@pytest.fixture
def run_today(monkeypatch: pytest.MonkeyPatch) -> None:
    """Today is TODAY (not the suite's day after): a run as of TODAY is today's, so the
    installed torch speaks for it (for a past day it does not)."""
    monkeypatch.setenv("SCOUT_TODAY", TODAY.isoformat())


@pytest.fixture(scope="session")
def shipped_config() -> Config:
    return load_config(None)


@pytest.fixture(scope="session")
def sample_world(tmp_path_factory: pytest.TempPathFactory) -> Sample:
    """The demo's world (repository, stand-in torch, priors), built once per session.

    Tests must not modify it; tests that write build their own with `build_sample`.
    """
    return build_sample(tmp_path_factory.mktemp("sample"), TODAY)


@pytest.fixture(scope="session")
def _fresh_template(tmp_path_factory: pytest.TempPathFactory) -> Sample:
    return build_sample(tmp_path_factory.mktemp("fresh-template") / "world", TODAY)


@pytest.fixture
def fresh_world(tmp_path: Path, _fresh_template: Sample) -> Sample:
    """A sample world of the test's own, to change as it likes: a copy of one built once a
    session (a build runs two days of the pipeline: ~0.7 s; a copy, ~0.05 s)."""
    return copy_sample(_fresh_template, tmp_path / "world")


def copy_sample(template: Sample, base: Path) -> Sample:
    """`template` copied to `base`, its own paths (scout.toml's torch root, a report that
    names it) moved with it: what `build_sample(base, TODAY)` builds, byte for byte (the
    build is deterministic; tests/test_sample_copy.py checks it)."""
    shutil.copytree(template.base, base, symlinks=True)
    for path in [base / "scout.toml", *sorted((base / "priors").glob("*.md"))]:
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace(str(template.base), str(base)), encoding="utf-8")
    moved = {
        name: base / Path(value).relative_to(template.base)
        for name, value in vars(template).items()
        if isinstance(value, Path)
    }
    return Sample(**moved)


@pytest.fixture(scope="session")
def long_history(tmp_path_factory: pytest.TempPathFactory) -> Sample:
    from tests.history import build_long_history

    return build_long_history(tmp_path_factory.mktemp("long"), TODAY)


def _snapshots_at_the_top(snapshot_dir: Path) -> None:
    """pytest-textual-snapshot's SVGs live in the top-level snapshots/ (the design card's
    layout), one folder per test module, not in syrupy's __snapshots__ beside the tests."""
    try:
        from pytest_textual_snapshot import SVGImageExtension
    except ImportError:  # the plain install runs no snapshot tests
        return

    def dirname(cls, *, test_location) -> str:
        return str(snapshot_dir / Path(test_location.filepath).stem)

    SVGImageExtension.dirname = classmethod(dirname)


_snapshots_at_the_top(Path(__file__).parent.parent / "snapshots")
