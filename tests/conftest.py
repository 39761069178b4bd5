from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from scout_tui.config import Config, load_config
from scout_tui.demo.sample import Sample, build_sample

TODAY = date(2026, 12, 2)
FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="session")
def shipped_config() -> Config:
    return load_config(None)


@pytest.fixture(scope="session")
def sample_world(tmp_path_factory: pytest.TempPathFactory) -> Sample:
    """The demo's world (repository, stand-in torch, priors), built once per session.

    Tests must not modify it; tests that write build their own with `build_sample`.
    """
    return build_sample(tmp_path_factory.mktemp("sample"), TODAY)


@pytest.fixture
def fresh_world(tmp_path: Path) -> Sample:
    return build_sample(tmp_path / "world", TODAY)
