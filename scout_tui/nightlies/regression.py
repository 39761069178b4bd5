"""The regression range: which PyTorch commits the failing and the last passing nightlies
were built from, and the upstream compare link between them."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel

from scout_tui.config.models import Config
from scout_tui.model import RegressionRow
from scout_tui.nightlies.wheels import NightlyError, torch_commit
from scout_tui.store.cache import Cache


class TorchCommit(BaseModel):
    version: str
    commit: str
    wheel: str


_VARIANT = re.compile(r"/(cu\d+|cpu|rocm[\d.]+|xpu)/?$")


def variant_index(index: str, version: str) -> str:
    """A nightly's local version names its build (`+cu126`): the index of that build, when
    the configured index is one of the per-build ones."""
    _, plus, local = version.partition("+")
    if plus and _VARIANT.search(index) and re.fullmatch(r"cu\d+|cpu|rocm[\d.]+|xpu", local):
        return _VARIANT.sub(f"/{local}", index)
    return index


def commit_for(
    config: Config,
    version: str,
    cache: Cache,
    index_url: str | None = None,
    python_tag: str | None = None,
    note: Callable[[str], None] = lambda message: None,
) -> TorchCommit:
    """Cached forever: a published nightly never changes."""
    index = index_url or variant_index(config.torch.nightly_index, version)
    tag = python_tag or config.torch.python_tag
    key = f"{index.rstrip('/')}|{tag}|{version}"
    cached = cache.get_value(key, TorchCommit)
    if cached is not None:
        return cached
    found = torch_commit(version, index, tag, config.torch.platform_tag)
    for message in found.transfer.notes:
        note(message)
    note(f"read {found.transfer.bytes:,} bytes in {found.transfer.requests} requests")
    result = TorchCommit(version=version, commit=found.commit, wheel=found.wheel)
    cache.put_value(key, result)
    return result


def regression_range(
    config: Config,
    failing: str,
    passing: str | None,
    cache: Cache,
    note: Callable[[str], None] = lambda message: None,
) -> tuple[list[RegressionRow], str | None]:
    """Rows `| Nightly | Status | PyTorch Commit |` (a commit that cannot be looked up
    stays unknown, with a note) and the compare URL when both commits are known."""
    rows: list[RegressionRow] = []
    commits: dict[str, str] = {}
    steps: tuple[tuple[str | None, Literal["pass", "fail"]], ...] = (
        (passing, "pass"),
        (failing, "fail"),
    )
    for version, status in steps:
        if version is None:
            continue
        try:
            commits[status] = commit_for(config, version, cache, note=note).commit
        except NightlyError as exc:
            note(f"torch {version}: skipped — {exc}")
        rows.append(RegressionRow(nightly=version, status=status, commit=commits.get(status)))
    compare = None
    if "pass" in commits and "fail" in commits and commits["pass"] != commits["fail"]:
        compare = config.torch.compare_url.format(old=commits["pass"], new=commits["fail"])
    return rows, compare
