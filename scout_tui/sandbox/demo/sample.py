"""Build the sample world the demo and the tests run on: a git repository with real
history, a stand-in torch, a scout.toml, and two prior reports.

Yesterday's prior report is not written by hand: it is what the pipeline produced when
run as of yesterday on the repository as it was then. The one before is hand-written in
the LLM scout's style, to exercise the tolerant parser and fuzzy matching.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path

import git

from scout_tui.errors import UsageError
from scout_tui.sandbox.demo.files import BASELINE, FAKE_TORCH, HAND_WRITTEN_REPORT, HISTORY, Link

AUTHOR = git.Actor("Sample Dev", "dev@example.com")
BASELINE_AGE_DAYS = 6


@dataclass(frozen=True)
class Sample:
    base: Path
    repo: Path
    priors: Path
    config: Path
    cache: Path
    state: Path  # the demo's own triage decisions, never the user's
    torch_root: Path


def _write(root: Path, files: dict[str, str | None]) -> list[str]:
    for path, text in files.items():
        target = root / path
        if text is None:
            target.unlink(missing_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, Link):
            target.unlink(missing_ok=True)
            target.symlink_to(text)
            continue
        target.write_text(text, encoding="utf-8")
        if path.endswith(".sh"):
            target.chmod(0o755)  # committed as 100755, as the real run_train.sh is
    return list(files)


def _commit(repo: git.Repo, message: str, when: datetime, files: dict[str, str | None]) -> None:
    root = Path(repo.working_tree_dir or ".")
    _write(root, files)
    present = [path for path, text in files.items() if text is not None]
    removed = [path for path, text in files.items() if text is None]
    if present:
        repo.index.add(present)
    if removed:
        repo.index.remove(removed)
    stamp = f"{int(when.timestamp())} +0000"
    repo.index.commit(
        message, author=AUTHOR, committer=AUTHOR, author_date=stamp, commit_date=stamp
    )


INITIAL_COMMIT = "Initial import of minititan and graph_trainer"


def build_repo(path: Path, today: date, history: bool = True) -> git.Repo:
    """The sample repository; with `history`, the commits inside the window too. A sample
    already there (`scout demo --dir` again) is made anew, the same commits: its history is
    never doubled; a repository the demo did not make is never touched."""
    if (path / ".git").exists():
        if not _made_by_the_demo(path):
            raise UsageError(
                f"{path} is a git repository the demo did not make: give the demo an empty "
                "folder, or one an earlier `scout demo --dir` made"
            )
        shutil.rmtree(path)
    path.mkdir(parents=True, exist_ok=True)
    repo = git.Repo.init(path, initial_branch="main")
    with repo.config_writer() as writer:
        writer.set_value("user", "name", AUTHOR.name)
        writer.set_value("user", "email", AUTHOR.email)
    start = datetime.combine(today - timedelta(days=BASELINE_AGE_DAYS), time(9), UTC)
    _commit(repo, INITIAL_COMMIT, start, dict(BASELINE))
    if history:
        for days, hour, message, files in HISTORY:
            when = datetime.combine(today - timedelta(days=days), time(hour, 5), UTC)
            _commit(repo, message, when, files)
    return repo


def demo_may_use(folder: Path) -> bool:
    """Whether `scout demo --dir folder` may write there: a new or empty folder, or one an
    earlier demo made (its sample repository is the demo's) — never a folder of someone's
    files it would overwrite."""
    if not folder.exists():
        return True
    if not folder.is_dir():
        return False
    return not any(folder.iterdir()) or _made_by_the_demo(folder / "repo")


def _made_by_the_demo(path: Path) -> bool:
    try:
        roots = git.Repo(path).git.log("--max-parents=0", "--format=%an <%ae> %s").splitlines()
    except git.GitError:
        return False
    return roots == [f"{AUTHOR.name} <{AUTHOR.email}> {INITIAL_COMMIT}"]


def write_config(path: Path, torch_root: Path) -> Path:
    path.write_text(
        "# scout.toml for the demo's sample repository; the rest is the shipped default.\n"
        '[project]\nrepo = "demo/minititan"\n'
        "# the old agent's reports on the tracking issue count as prior reports too\n"
        'trusted_authors = ["nightly-agent"]\n\n'
        "[github]  # the demo's GitHub is local: no need to pace writes or wait for it\n"
        "mutation_interval = 0\nconsistency_wait = 0.5\n\n"
        f'[torch]\nroot = "{torch_root.as_posix()}"\n',
        encoding="utf-8",
    )
    return path


def build_sample(base: Path, today: date) -> Sample:
    from scout_tui.collect.base import collector_sections
    from scout_tui.config.profile import load_config
    from scout_tui.pipeline.day import RunOptions, run
    from scout_tui.report.render import render_report
    from scout_tui.store.cache import Cache

    base.mkdir(parents=True, exist_ok=True)
    repo_path, priors = base / "repo", base / "priors"
    priors.mkdir(exist_ok=True)
    _write(base / "site-packages", dict(FAKE_TORCH))
    torch_root = base / "site-packages" / "torch"
    config_path = write_config(base / "scout.toml", torch_root)
    build_repo(repo_path, today)

    two_days_ago, yesterday = today - timedelta(days=2), today - timedelta(days=1)
    (priors / f"{two_days_ago.isoformat()}.md").write_text(
        HAND_WRITTEN_REPORT.format(
            date=two_days_ago.isoformat(), first=(today - timedelta(days=4)).isoformat()
        ),
        encoding="utf-8",
    )
    # Yesterday's report: the pipeline's morning run of yesterday (what the branch held at
    # 08:00 UTC: yesterday's commits came after it, and are today's news).
    result = run(
        RunOptions(
            repo=repo_path,
            config=load_config(config_path),
            as_of=yesterday,
            prior_dir=priors,
            offline=True,
            today=yesterday,
            moment=datetime.combine(yesterday, time(8), UTC),
        )
    )
    (priors / f"{yesterday.isoformat()}.md").write_text(
        render_report(
            yesterday,
            result.findings,
            result.collectors,
            collector_sections(),
            head=result.head,
            quiet=result.quiet,
        ),
        encoding="utf-8",
    )
    cache = base / "cache"
    Cache(cache).close()
    return Sample(base, repo_path, priors, config_path, cache, base / "state", torch_root)
