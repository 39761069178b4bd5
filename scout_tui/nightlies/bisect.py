"""Bisect the nightlies: list them on the index, search (`search.py`), build each tried
nightly's environment (`envs.py`), run the repro there (`trial.py`), and say which
nightly broke it, with the PyTorch commits of it and of the last good one.

Each tried nightly's result is kept in the cache dir, keyed by the nightly, the exact
command, the checkout's HEAD and the environment's recipe: the same command run again
(after a Ctrl-C, or tomorrow) takes up where it stopped without running anything twice.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import date
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from scout_tui.nightlies.envs import Environments, InstallFailed, Recipe, safe_name
from scout_tui.nightlies.index import (
    Nightly,
    between,
    list_nightlies,
    nightly,
    resolve,
    shown,
)
from scout_tui.nightlies.search import Outcome, Search, Verdict
from scout_tui.nightlies.trial import Expected, Trial, run_trial
from scout_tui.nightlies.wheels import NightlyError, torch_commit

BISECT_FORMAT = "scout-bisect/1"


@dataclass(frozen=True)
class Request:
    good: str  # a version or a day
    bad: str
    argv: list[str]
    command: str  # as the user typed it: part of the results' key
    cwd: Path
    head: str  # the checkout's commit: part of the results' key
    recipe: Recipe
    env: dict[str, str] = field(default_factory=dict)  # NGPU=8 of `NGPU=8 ./run_train.sh`
    timeout: float = 1800.0
    runs: int = 1  # each nightly run this many times: fails if any run fails
    verify_good: bool = False
    expected: Expected = field(default_factory=Expected)
    experiment: str = ""
    python_tag: str = ""
    platform_tag: str = "manylinux"


class _Document(BaseModel):
    model_config = ConfigDict(extra="forbid")


class End(_Document):
    version: str
    commit: str | None  # null: the wheel's torch/version.py could not be read


class Run(_Document):
    nightly: str
    result: Literal["pass", "fail", "could not test"]
    seconds: float
    log: str  # the file its output went to ("" when it never ran: the install failed)


class Untested(_Document):
    nightly: str
    why: str


class Found(_Document):
    """What a bisect found: `--json`'s document (schema/bisect.schema.json)."""

    format: str = BISECT_FORMAT
    decision: str
    first_bad: End | None
    last_good: End | None
    compare_url: str | None
    commits_between: int | None
    commits_between_why: str | None
    runs: list[Run]
    could_not_test: list[Untested]
    candidates: int
    most_runs: int  # 1 + ceil(log2 n), plus one per nightly that could not be tested
    # Whether the last good nightly passed on this box; False: CI's word (--verify-good).
    last_good_passed_here: bool = False

    def as_json(self) -> dict[str, object]:
        return self.model_dump(mode="json")


class Results:
    """Each tried nightly's result, kept as a JSON file per key."""

    def __init__(self, root: Path, request: Request) -> None:
        self.root = root
        self.request = request

    def key(self, nightly: str) -> str:
        r = self.request
        key = "\0".join([nightly, r.command, r.head, r.recipe.digest, str(r.runs)])
        return hashlib.sha256(key.encode()).hexdigest()[:24]

    def _path(self, nightly: str) -> Path:
        return self.root / f"{self.key(nightly)}.json"

    def get(self, nightly: str) -> Trial | None:
        try:
            data = json.loads(self._path(nightly).read_text())
            return Trial(**{**data, "outcome": Outcome(data["outcome"])})
        except (OSError, ValueError, TypeError, KeyError):
            return None

    def put(self, trial: Trial) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        path = self._path(trial.nightly)
        partial = path.with_suffix(".partial")
        partial.write_text(json.dumps({**asdict(trial), "outcome": trial.outcome.value}))
        partial.replace(path)


def bisect(
    request: Request,
    index_url: str,
    cache_dir: Path,
    environments: Environments,
    compare_url: str,
    say: Callable[[str], None],
    line: Callable[[str], None] = lambda _: None,
    count: Callable[[str, str], tuple[int | None, str | None]] | None = None,
) -> tuple[Verdict, Found]:
    """Search to the first bad nightly (NightlyError when the index cannot say which
    nightlies there are; KeyboardInterrupt leaves the results so far kept)."""
    listed = list_nightlies(index_url)
    good = resolve(_named(request.good), listed, index_url)
    bad = resolve(_named(request.bad), listed, index_url)
    candidates = between(good, bad, listed)
    by_name = {n.name: n for n in (good, *candidates)}
    search = Search(good.name, tuple(n.name for n in candidates), request.verify_good)
    most = 1 + math.ceil(math.log2(len(candidates))) + (1 if request.verify_good else 0)
    say(
        f"{len(candidates)} nightlies after {good} up to {bad} on {shown(index_url)}: "
        f"at most {most} runs, plus one for each that cannot be tested"
    )
    results = Results(cache_dir / "results", request)
    expected = request.expected
    tried: dict[str, Outcome] = {}
    trials: list[Trial] = []
    while (name := search.next(tried)) is not None:
        trial = results.get(name)
        if trial is not None:
            say(f"torch {name}: {trial.outcome.value} (kept from an earlier run: {trial.why})")
        else:
            log = cache_dir / "logs" / f"torch-{safe_name(name)}-{results.key(name)}"
            trial = _try(request, by_name[name], environments, log, expected, say, line)
            results.put(trial)
        if name == search.bad and trial.outcome is Outcome.FAIL and expected.error is None:
            expected = Expected(trial.error, expected.timeout_is_failure)
        tried[name] = trial.outcome
        trials.append(trial)
    verdict = search.verdict(tried)
    found = _outcome(
        request, verdict, trials, len(candidates), most, index_url, compare_url, cache_dir, say
    )
    if found.compare_url and count is not None and found.last_good and found.first_bad:
        old, new = found.last_good.commit, found.first_bad.commit
        if old and new:
            found.commits_between, found.commits_between_why = count(old, new)
    return verdict, found


def _commit(
    name: str, index_url: str, request: Request, kept: Path, say: Callable[[str], None]
) -> str | None:
    """The PyTorch commit a nightly was built from, read once from its wheel (a published
    nightly never changes) and kept."""
    key = hashlib.sha256(f"{index_url}\0{request.python_tag}\0{name}".encode()).hexdigest()
    path = kept / "commits" / f"{key[:24]}.txt"
    try:
        return path.read_text().strip() or None
    except OSError:
        pass
    try:
        commit = torch_commit(name, index_url, request.python_tag, request.platform_tag).commit
    except NightlyError as exc:
        say(f"torch {name}: its commit is unknown — {exc}")
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(commit)
    return commit


def _named(text: str) -> Nightly | date:
    try:
        return nightly(text)
    except ValueError as exc:
        raise NightlyError(str(exc)) from None


def _try(
    request: Request,
    nightly_: Nightly,
    environments: Environments,
    log_stem: Path,
    expected: Expected,
    say: Callable[[str], None],
    line: Callable[[str], None],
) -> Trial:
    name = nightly_.name
    try:
        env = environments.get(nightly_, request.recipe, say)
    except InstallFailed as exc:
        say(f"torch {name}: could not test — the install failed: {exc}")
        return Trial(name, Outcome.UNTESTABLE, 0.0, f"the install failed: {exc}", "")
    trial: Trial | None = None
    for attempt in range(request.runs):
        counted = f" (run {attempt + 1} of {request.runs})" if request.runs > 1 else ""
        say(f"torch {name}: running{counted}: {request.command}")
        log = log_stem.with_name(f"{log_stem.name}-{attempt + 1}.log")
        trial = run_trial(
            env,
            request.argv,
            request.cwd,
            log,
            request.timeout,
            expected,
            request.experiment,
            line,
            request.env,
        )
        if trial.outcome is not Outcome.PASS:
            break  # one failure is enough: an intermittent failure seldom shows twice
    assert trial is not None
    say(f"torch {name}: {trial.outcome.value} — {trial.why} ({trial.seconds:g} s)")
    return trial


def _outcome(
    request: Request,
    verdict: Verdict,
    trials: list[Trial],
    candidates: int,
    most: int,
    index_url: str,
    compare_url: str,
    kept: Path,
    say: Callable[[str], None],
) -> Found:
    commits: dict[str, str | None] = {}
    for name in (verdict.last_good, verdict.first_bad):
        if name is not None:
            commits[name] = _commit(name, index_url, request, kept, say)

    def end(name: str | None) -> End | None:
        return None if name is None else End(version=name, commit=commits.get(name))

    old = commits.get(verdict.last_good or "")
    new = commits.get(verdict.first_bad or "")
    compare = compare_url.format(old=old, new=new) if old and new and old != new else None
    return Found(
        decision=verdict.decision.value,
        first_bad=end(verdict.first_bad),
        last_good=end(verdict.last_good),
        compare_url=compare,
        commits_between=None,
        commits_between_why="not asked: counting the commits needs GitHub's compare API"
        if compare
        else "no compare: a commit is unknown",
        runs=[
            Run(nightly=t.nightly, result=t.outcome.value, seconds=t.seconds, log=t.log)
            for t in trials
        ],
        could_not_test=[
            Untested(nightly=t.nightly, why=t.why)
            for t in trials
            if t.outcome is Outcome.UNTESTABLE
        ],
        candidates=candidates,
        most_runs=most,
        last_good_passed_here=any(
            t.nightly == verdict.last_good and t.outcome is Outcome.PASS for t in trials
        ),
    )
