"""Nothing scout writes or shows carries a token or a control character: text is scrubbed
where it enters (files, git, API answers, the CI log stream, bundles, prior reports).

The end-to-end test puts two tokens in a CI log the local GitHub serves and in files of the
experiment — the token in use (shaped like no GitHub token: only its registration hides
it) and one shaped like a GitHub token that scout never held — then runs collect, report,
report --json, publish, a bundle round-trip, and reads every byte they left behind."""

from __future__ import annotations

import gzip
import io
import json
import os
from datetime import date
from pathlib import Path

import pytest

from scout_tui.analysis.ci.logindex import LogIndex
from scout_tui.analysis.text.markdown import bare_url, code, link
from scout_tui.config.models import GithubConfig
from scout_tui.config.profile import load_config
from scout_tui.errors import RedactingWriter, clean, redact, register_secret, scrub
from scout_tui.github.client import GitHubClient
from scout_tui.history.baseline import load_prior_dir
from scout_tui.model import Evidence, Finding, RegressionRow, Section, fingerprint
from scout_tui.report.render import regression_table, render_item
from scout_tui.sandbox.demo.ci_logs import TESTS, actions_format, runner_log
from scout_tui.sandbox.demo.github_world import demo_world
from scout_tui.sandbox.github.http import LocalGitHub
from scout_tui.source.tree import SourceTree
from scout_tui.store.bundle import read_bundle
from tests.cli import DAY, scout, world_args
from tests.collector_run import commit_all

SHAPED = "ghp_" + "Zq7xK2" * 6  # a GitHub token's shape: `ghp_` and 36 letters and digits
IN_USE = "scout-local-secret-4711"  # the local server's token: hidden because registered
EXP = "torchtitan/experiments/graph_trainer"
OSC = "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07 and \x1b]2;pwned title\x07"


def priors_of(sample) -> dict[date, str]:
    return {
        date.fromisoformat(p.stem): p.read_text(encoding="utf-8")
        for p in sorted(sample.priors.glob("*.md"))
    }


# -- the pieces -------------------------------------------------------------------------------
def test_redact_hides_registered_secrets_and_anything_shaped_like_a_github_token():
    register_secret("s3cr3t-value")
    fine_grained = "github_pat_" + "A1b2_" * 10
    for token in (
        SHAPED,
        "gho_" + "a" * 36,
        "ghu_" + "B" * 40,
        "ghs_" + "9" * 36,
        "ghr_" + "x1" * 18,
        fine_grained,
        "s3cr3t-value",
    ):
        said = redact(f"auth failed for {token}.")
        assert token not in said and said == "auth failed for ***."
    register_secret("pass-1234")
    register_secret("old-pass-1234-rotated")  # one secret inside another: hidden whole
    assert redact("old-pass-1234-rotated and pass-1234") == "*** and ***"
    for harmless in ("ghp_short", "the ghost_ of a token", "github_pat_tooshort", "plain"):
        assert redact(harmless) == harmless


def test_clean_strips_control_and_bidi_characters_but_tabs_and_newlines():
    assert clean("a\tb\nc") == "a\tb\nc"
    assert clean("line\r\nnext\rsame") == "line\nnext\nsame"
    assert (
        clean(f"subject {OSC}")
        == "subject ]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA== and ]2;pwned title"
    )
    assert clean("C1 \x85\x9b31m and DEL \x7f") == "C1 31m and DEL "
    hidden = "user\u202eexe.txt\u200b\u2066x\u2069\u200f"
    assert clean(hidden) == "userexe.txtx"
    assert scrub(f"\x1b[31m{SHAPED}\x1b[0m") == "[31m***[0m"


@pytest.mark.parametrize("secret", [SHAPED, "github_pat_" + "Q" * 82, "s3cr3t-value"])
def test_the_stream_redactor_hides_a_secret_split_at_any_chunk_boundary(secret):
    register_secret("s3cr3t-value")
    data = (b"x" * 300 + b" token=" + secret.encode() + b" end\n") * 2
    for size in (1, 7, 64, 299, 311, len(data) - 1):
        out = io.BytesIO()
        writer = RedactingWriter(out)
        for start in range(0, len(data), size):
            writer.write(data[start : start + size])
        writer.close()
        assert out.getvalue() == redact(data.decode()).encode(), size
        assert writer.written == len(out.getvalue())


@pytest.mark.parametrize(
    "url", ["https://alice:pw-" + "Z" * 40 + "@example.com/x.git", "http://x-oauth:tok3n@h:8/"]
)
def test_a_urls_user_and_password_are_hidden_at_any_chunk_boundary(url):
    data = (b"y" * 290 + b" cloning " + url.encode() + b" done\n") * 2
    password = url.split("://")[1].split("@")[0].encode()
    for size in range(1, 80, 3):
        out = io.BytesIO()
        writer = RedactingWriter(out)
        for start in range(0, len(data), size):
            writer.write(data[start : start + size])
        writer.close()
        assert password not in out.getvalue(), size
        assert out.getvalue() == redact(data.decode()).encode(), size
    assert redact(url) == url.split("://")[0] + "://***@" + url.split("@")[1]
    near_misses = "mail alice@example.com; see https://example.com/@alice and ssh://h/x"
    assert redact(near_misses) == near_misses


def test_an_api_url_with_a_password_is_refused_without_echoing_it(tmp_path, sample_world):
    for where in ("--api-url", "SCOUT_GITHUB_API_URL"):
        url = "http://alice:s3cretPW@127.0.0.1:9"
        flag, env = ([where, url], {}) if where.startswith("--") else ([], {where: url})
        done = scout(*flag, "report", *world_args(sample_world, tmp_path), env=env)
        assert done.returncode == 2, done.stderr
        assert "s3cretPW" not in done.stdout + done.stderr
        assert "'http://***@127.0.0.1:9'" in done.stderr


def test_a_ci_log_is_redacted_as_it_streams_into_the_cache(tmp_path, fresh_world):
    """A real download through the local GitHub: the token straddles the 1 MiB chunk the
    client reads at a time."""
    world = demo_world(load_config(fresh_world.config), priors_of(fresh_world), token=IN_USE)
    repo = world.repository("demo/minititan")
    job = repo.runs[0].jobs[0]
    log = tmp_path / "big.log"
    log.write_bytes(b"." * (1024 * 1024 - 10) + f"{SHAPED} {IN_USE}\n".encode())
    job.log_file = str(log)
    with LocalGitHub(world) as server:
        client = GitHubClient(server.url, IN_USE, GithubConfig())
        out = io.BytesIO()
        written = client.job_log(repo.full_name, job.id, out)
    assert out.getvalue().endswith(b"." * 20 + b"*** ***\n")
    assert written == len(out.getvalue())


def test_source_reads_are_scrubbed(tmp_path, fresh_world):
    register_secret(IN_USE)
    path = f"{EXP}/leak.py"
    (fresh_world.repo / path).write_text(f"# TODO: rotate {SHAPED} and {IN_USE}\x1b]2;x\x07\n")
    head = commit_all(fresh_world.repo, f"leak {SHAPED} {OSC}")
    tree = SourceTree(fresh_world.repo)
    for text in (tree.read(path), tree.read_at(head, path)):
        assert text == "# TODO: rotate *** and ***]2;x\n"
    [commit] = tree.log(None, head, [path])
    assert commit.summary == "leak *** ]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA== and ]2;pwned title"
    assert SHAPED not in tree.diff_range(f"{head}^", head, [path])
    (fresh_world.repo / EXP / "evil\x1b]2;x\x07").mkdir()
    (fresh_world.repo / EXP / "evil\x1b]2;x\x07" / "mod.py").write_text("x = 1\n")
    listed = SourceTree(fresh_world.repo).glob(EXP)
    assert path in listed and not any("evil" in name for name in listed)


def test_bundles_and_prior_reports_are_scrubbed_when_read(tmp_path, sample_world):
    done = scout(
        "collect",
        "--repo",
        sample_world.repo,
        "--config",
        sample_world.config,
        "--date",
        DAY,
        "--offline",
        "--json",
        "--cache-dir",
        tmp_path / "cache",
        "--state-dir",
        tmp_path / "state",
    )
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    document["findings"][0]["title"] = f"leaks {SHAPED} {OSC}"
    bundle = tmp_path / "run.json"
    bundle.write_text(json.dumps(document))
    title = read_bundle(bundle).run.findings[0].title
    assert title == "leaks *** ]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA== and ]2;pwned title"

    priors = tmp_path / "priors"
    priors.mkdir()
    report = (sample_world.priors / "2026-12-01.md").read_text(encoding="utf-8")
    leaky = report.replace("- [ ] **", f"- [ ] **Leak {SHAPED}\x1b]2;x\x07 ", 1)
    (priors / "2026-12-01.md").write_text(leaky)
    [prior] = load_prior_dir(priors, warn=lambda message: None)
    assert any(item.title.startswith("Leak") for item in prior.items)  # the item was read
    dumped = prior.model_dump_json()
    assert SHAPED not in dumped and "\\u001b" not in dumped and "\\u0007" not in dumped


def test_a_log_given_to_ci_log_is_scrubbed_in_what_scout_says_and_shows(tmp_path):
    lines = actions_format(runner_log([TESTS[0]], torch_version="2.9.0", noise=2))
    log = tmp_path / "ci.log"
    log.write_text(
        "".join(lines).replace("Dynamic control flow is", f"Dynamic ({SHAPED} {OSC}) is")
    )
    for extra in ((), ("--json",)):
        done = scout("ci-log", log, *extra)
        assert done.returncode == 0, done.stderr
        assert "]2;pwned title" in done.stdout  # the line is shown...
        for unwanted in (SHAPED, "\x1b", "\x07", "\\u001b", "\\u0007"):  # ...without these
            assert unwanted not in done.stdout + done.stderr
    index = LogIndex(log)  # the console's log viewer
    assert index.scan()
    shown = "\n".join(index.lines(0, index.line_count))
    index.close()
    assert "Dynamic (*** " in shown and SHAPED not in shown


# -- Markdown ---------------------------------------------------------------------------------
def _ci_finding(**evidence) -> Finding:
    return Finding(
        collector="ci_failures",
        kind="ci_failure",
        section=Section.CI_FAILURES,
        title="CI fails",
        body="It fails.",
        fingerprint=fingerprint("ci_failure", "x"),
        evidence=Evidence(**evidence),
    )


def test_a_fingerprint_scout_did_not_make_never_reaches_a_marker():
    finding = _ci_finding().model_copy(
        update={"fingerprint": "x --> @pytorch/everyone <img src=https://evil.example/a.png>"}
    )
    item = render_item(finding)
    assert "-->" not in item and "<img" not in item and "@pytorch/everyone" not in item
    assert f"<!-- scout:fp={fingerprint('ci_failure', 'x')} -->" in render_item(_ci_finding())


def test_the_regression_table_escapes_its_cells_and_links_only_http_addresses():
    hostile = "2.9 | <img src=x> @pytorch/everyone"
    finding = _ci_finding(
        regression=[RegressionRow(nightly=hostile, status="fail", commit="abc|<b>@alice</b>")],
        compare_url="javascript:alert(1)",
    )
    table = regression_table(finding)
    rows = [line for line in table.splitlines() if line.startswith("|")]
    assert all(line.replace("\\|", "").count("|") == 4 for line in rows)  # three cells each
    assert "<img" not in table and "`@pytorch/everyone`" in table  # prose made inert
    assert "| `abc\\|<b>@alic` |" in table  # code, its pipe escaped for the table
    assert "](javascript" not in table and "`javascript:alert(1)`" in table
    assert link("board", "https://github.com/orgs/x/projects/1?itemId=2") == (
        "[board](https://github.com/orgs/x/projects/1?itemId=2)"
    )
    for bad in (
        "https://a.example/x) [y](https://evil.example",
        "https://user@evil.example/",
        "data:text/html,<script>",
        "https://x.example/<img>",
    ):
        assert link("board", bad) == f"board ({code(bad)})" and bare_url(bad) == code(bad)


# -- end to end -------------------------------------------------------------------------------
def _offline_args(world, tmp_path: Path) -> list:
    return [
        "--repo",
        world.repo,
        "--config",
        world.config,
        "--date",
        DAY,
        "--offline",
        "--cache-dir",
        tmp_path / "cache",
        "--state-dir",
        tmp_path / "state",
    ]


def test_a_commit_subject_cannot_drive_the_terminal(tmp_path, fresh_world):
    trainer = fresh_world.repo / "torchtitan/trainer.py"
    trainer.write_text(trainer.read_text().replace("steps: int = 2000", "steps: int = 3000"))
    commit_all(fresh_world.repo, f"Trainer.Config: more steps {OSC}")
    args = _offline_args(fresh_world, tmp_path)
    for extra in ((), ("--json",)):
        done = scout("report", *args, *extra)
        assert done.returncode == 0, done.stderr
        assert "]2;pwned title" in done.stdout  # the subject is shown...
        for control in ("\x1b", "\x07", "\\u001b", "\\u0007"):  # ...without its escapes
            assert control not in done.stdout + done.stderr


@pytest.mark.parametrize("where", ["torchtitan/models", "torchtitan/experiments/graph_trainer"])
def test_a_folder_name_cannot_drive_the_terminal(tmp_path, fresh_world, where):
    """Git trees and folders are named by other people: a name holding escapes names no
    model, and reaches neither the report nor the terminal."""
    hostile = fresh_world.repo / where / "evil\x1b]52;c;cm0gLXJmIH4K\x1b\\\x1b]2;PWNED\x07"
    hostile.mkdir()
    (hostile / "__init__.py").write_text("X = 1  # TODO: look at this\n")
    commit_all(fresh_world.repo, "a new model")
    args = _offline_args(fresh_world, tmp_path)
    for extra in ((), ("--json",)):
        done = scout("report", *args, *extra)
        assert done.returncode == 0, done.stderr
        for control in ("\x1b", "\x07", "\\u001b", "\\u0007", "PWNED"):
            assert control not in done.stdout + done.stderr


def _files_under(*folders: Path) -> dict[Path, bytes]:
    found = {}
    for folder in folders:
        for path in folder.rglob("*"):
            if path.is_file() and not path.is_symlink():
                found[path] = path.read_bytes()
    return found


def test_grep_for_the_token_over_everything_scout_wrote_finds_nothing(tmp_path, fresh_world):
    leak = f"{SHAPED} {IN_USE}"
    passes = fresh_world.repo / EXP / "passes.py"
    passes.write_text(
        passes.read_text().replace(
            "drop this copy once upstream CSE handles", f"drop this copy ({leak}) once CSE handles"
        )
    )
    readme = fresh_world.repo / EXP / "README.md"
    readme.write_text(
        readme.read_text().replace(
            "for the fastest compile.", f"for the fastest compile (token {leak})."
        )
    )
    commit_all(fresh_world.repo, "Notes")
    world = demo_world(load_config(fresh_world.config), priors_of(fresh_world), token=IN_USE)
    for run in world.repository("demo/minititan").runs:
        for job in run.jobs:
            job.log = job.log.replace(
                "Dynamic control flow is", f"Dynamic control flow ({leak}) is"
            )

    env = {"GH_ENTERPRISE_TOKEN": IN_USE, "SCOUT_GITHUB_API_URL": ""}
    outputs = []
    with LocalGitHub(world) as server:
        args = [
            "--repo",
            fresh_world.repo,
            "--config",
            fresh_world.config,
            "--date",
            DAY,
            "--cache-dir",
            tmp_path / "cache",
            "--state-dir",
            tmp_path / "state",
            "--api-url",
            server.url,
        ]
        for command in (
            ["collect"],
            ["report"],
            ["report", "--json"],
            ["publish", "--yes"],
            ["collect", "--bundle", tmp_path / "run.json.gz"],
        ):
            done = scout(*command, *args, env=env)
            assert done.returncode == 0, (command, done.stderr)
            outputs.append(done.stdout + done.stderr)
        opened = scout(
            "open",
            tmp_path / "run.json.gz",
            "--state-dir",
            tmp_path / "state-open",
            "--cache-dir",
            tmp_path / "cache-open",
            "--offline",
            env=env,
        )
        assert opened.returncode == 0, opened.stderr
        outputs.append(opened.stdout + opened.stderr)
        [issue] = [i for i in server.world.repository("demo/minititan").issues if i.number == 2856]
        published = [c.body for c in issue.comments]
        published += [f"{i.title}\n{i.body}" for p in server.world.projects for i in p.items]

    report = outputs[1]
    # The leaks reached what scout shows, redacted: the CI error, the TODO, the doc line.
    assert "Dynamic control flow (*** ***) is" in report
    assert "(*** ***) once CSE handles" in report
    assert any("(*** ***)" in body for body in published)
    written = _files_under(
        tmp_path / "cache",
        tmp_path / "state",
        tmp_path / "state-open",
        tmp_path / "cache-open",
        Path(os.environ["XDG_CACHE_HOME"]),
        Path(os.environ["XDG_DATA_HOME"]),
    )
    assert any(path.suffix == ".log" for path in written)  # the CI logs were cached
    written[tmp_path / "run.json.gz"] = gzip.decompress((tmp_path / "run.json.gz").read_bytes())
    texts = {"output": "\n".join(outputs).encode(), "GitHub": "\n".join(published).encode()}
    for token in (SHAPED, IN_USE):
        for name, data in [*written.items(), *texts.items()]:
            assert token.encode() not in data, (token, name)
