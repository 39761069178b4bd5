"""Collect here, review there: `scout collect --bundle` on the demo's world (its local GitHub
with failing CI), `scout open` elsewhere — headless and in the console, triaged and
published to the local server — and the files `scout open` must refuse."""

from __future__ import annotations

import dataclasses
import gzip
import http.server
import json
import os
import re
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import Static

from scout_tui.errors import UsageError
from scout_tui.model import Section
from scout_tui.sandbox.demo.github_world import DEMO_TOKEN
from scout_tui.sandbox.demo.running import GONE, running_demo
from scout_tui.session import Session, SessionOptions
from scout_tui.store.bundle import BUNDLE_VERSION, MAX_DOCUMENT_BYTES, read_bundle
from scout_tui.tui.app import ScoutApp
from scout_tui.tui.screens.repro import ConfirmRepro
from tests.cli import demo_collect, scout
from tests.conftest import TODAY
from tests.console import (
    NEVER_THERE,
    confirm_publish,
    cursor_to,
    first_test,
    publish_modal,
    settle,
    watch_missing_surfaces,
)
from tests.github_world import scout_comments


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    """The demo's world with a bundle and a plain --json run collected by the CLI."""
    base = tmp_path_factory.mktemp("bundle")
    with running_demo(base / "world", TODAY) as demo:
        watch_missing_surfaces(demo)
        done = demo_collect(demo, base, "--bundle", base / "run.json.gz")
        demo_collect(demo, base, "--json", "-o", base / "run.json")
        yield demo, base, done


def test_a_bundle_is_one_gzip_json_document_with_the_run_and_its_log_excerpts(collected):
    _, base, done = collected
    raw = (base / "run.json.gz").read_bytes()
    assert raw[:2] == b"\x1f\x8b"
    document = json.loads(gzip.decompress(raw))
    assert document["bundle_version"] == BUNDLE_VERSION
    run = document["run"]
    assert run["findings"] and run["collectors"]
    assert document["config"]["project"]["experiment"] == run["experiment"]
    [ci] = [f for f in run["findings"] if f["kind"] == "ci_failure"]
    excerpt = document["logs"][ci["fingerprint"]]
    root = excerpt["root_offset"]
    # The excerpt holds the failure: its root cause starts a traceback where it says.
    assert (
        excerpt["text"][root:].startswith("Traceback")
        or "Traceback" in excerpt["text"][max(0, root - 200) : root + 200]
    )
    assert ci["evidence"]["error"].split(":")[0] in excerpt["text"]
    assert DEMO_TOKEN.encode() not in gzip.decompress(raw)  # no secret travels
    assert f"`scout open {base / 'run.json.gz'}` reviews it" in done.stderr  # a path that works
    # scout.toml's own problems: on stderr and in the bundle's run, apart from the findings.
    assert done.stderr.count("scout: scout.toml: `[upstream.surfaces]`") == len(NEVER_THERE)
    assert len(run["config_warnings"]) == len(NEVER_THERE)
    assert not any(f["kind"] == "surface_not_found" for f in run["findings"])


def test_open_headless_prints_the_bundles_report(collected, tmp_path):
    _, base, _ = collected
    done = scout(
        "open",
        base / "run.json.gz",
        "--state-dir",
        tmp_path / "state",
        "--cache-dir",
        tmp_path / "cache",
        "--offline",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    # Not in a checkout, no --config: the shipped configuration, never the bundle's.
    assert (
        "scout: publishing goes to pytorch/torchtitan#2856 and the board pytorch/161 (from "
        "<shipped default>) on https://api.github.com (from <shipped default>), links to "
        "https://github.com\n" in done.stderr
    )
    assert done.stdout.startswith("# Nightly Scout Report — 2026-12-02")
    assert "CI Failures" in done.stdout


def test_open_takes_a_plain_collect_json_run(collected, tmp_path):
    _, base, _ = collected
    bundle = read_bundle(base / "run.json")
    assert bundle.config is None and bundle.run.findings
    done = scout("open", base / "run.json", "--state-dir", tmp_path / "state", "--offline")
    assert done.returncode == 0, done.stderr
    assert "# Nightly Scout Report" in done.stdout


@pytest.mark.parametrize(
    "content, said",
    [
        (b"not json at all", "not a scout bundle or run (not JSON"),
        (b"\x1f\x8b\x08\x00garbage", "a damaged gzip file"),
        (b'{"bundle_version": 99, "run": {}}', "bundle_version 99 is newer than this scout reads"),
        (b'{"bundle_version": "one"}', "bundle_version 'one' is not a version"),
        (
            b'{"bundle_version": 1, "scout_version": "0.1.0", "created_at": "2026-12-02T00:00:00Z",'
            b' "run": {"date": "not a date"}}',
            "run.date",
        ),
        (b"[1, 2]", "a JSON list"),
        (b'{"hello": 1}', "no bundle_version, no findings"),
        (b"[" * 100_000, "not a scout bundle or run (nested too deeply)"),
        (
            b'{"bundle_version": 1, "config": ' + b'{"a": ' * 40 + b"1" + b"}" * 41,
            "config.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a"
            ".a.a.a.a.a.a.a.a.a.a.a.a.a.a.a: nested more than 32",
        ),
    ],
)
def test_a_bad_bundle_is_one_line_and_exit_2(tmp_path, content, said):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    done = scout("open", path, "--state-dir", tmp_path / "state", "--offline")
    assert done.returncode == 2
    assert done.stderr.startswith(f"scout: error: {path}: ")
    assert said in done.stderr and done.stderr.count("\n") == 1


def test_a_truncated_gzip_bundle_is_refused(collected, tmp_path):
    _, base, _ = collected
    path = tmp_path / "cut.json.gz"
    path.write_bytes((base / "run.json.gz").read_bytes()[:500])
    done = scout("open", path, "--offline")
    assert done.returncode == 2 and "damaged gzip" in done.stderr


def test_a_missing_bundle_and_a_bad_bundle_target(tmp_path):
    done = scout("open", tmp_path / "nowhere.json.gz")
    assert done.returncode == 2 and "no such file" in done.stderr
    done = scout("collect", "--bundle", tmp_path / "no" / "such" / "dir.json", "--offline")
    assert done.returncode == 2 and "--bundle" in done.stderr and "no such folder" in done.stderr
    # A folder nothing can be written in (even by root): said before any collecting.
    done = scout("collect", "--bundle", "/proc/scout.json.gz", "--offline")
    assert done.returncode == 2
    assert done.stderr == (
        "scout: error: --bundle /proc/scout.json.gz: cannot write there: "
        f"{done.stderr.rsplit(': ', 1)[1]}"
    )  # one line, nothing collected
    # `-` is stdout elsewhere; a bundle never goes there, nor into a file named `-`.
    done = scout("collect", "--bundle", "-", "--offline", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr == (
        "scout: error: --bundle takes a file name, not - (stdout is the report, or --json)\n"
    )
    assert not (tmp_path / "-").exists()


async def test_a_bundle_reviewed_in_the_console_and_published(collected, tmp_path):
    """Open the bundle on "another machine" (its own state, no checkout needed), triage it,
    publish it to the local GitHub: the comment and the drafts arrive."""
    demo, base, _ = collected
    # The reviewer's own configuration says where it goes, never the bundle's.
    options = SessionOptions(
        state_dir=tmp_path / "state",
        cache_dir=tmp_path / "cache",
        api_url=demo.github.url,
        token=DEMO_TOKEN,
        config=demo.session_options(today=TODAY).config,
    )
    session = Session.of_bundle(base / "run.json.gz", options)
    before = len(scout_comments(demo.github.world, TODAY))
    app = ScoutApp(session, load_cached=True)
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot, app)
        assert app.triage.run_result is not None and app.triage.run_result.findings
        await cursor_to(pilot, app, lambda f: f.section is Section.ACTION_ITEMS)
        await pilot.press("a")
        await pilot.press("R")  # a bundle is not collected again here
        await settle(pilot, app)
        assert app.triage.collection is None
        proposal = (await publish_modal(pilot, app)).proposal
        assert f"pytorch/161 (from {options.config}) on " in proposal.target
        wanted = len(proposal.plan.drafts)
        await confirm_publish(pilot, app)
    comments = scout_comments(demo.github.world, TODAY)
    assert len(comments) == before + 1 or "edit" in app.screen.query("Markdown").last().source
    assert "Nightly Scout Report" in comments[-1].body
    drafts = [
        item
        for item in demo.github.world.projects[0].items
        if item.title.startswith("[NightlyScout]")
    ]
    assert len(drafts) >= wanted > 0


def test_decisions_on_a_bundle_are_filed_under_its_repository(collected, tmp_path):
    """Tomorrow's bundle of the same repository finds today's decisions; they are never
    filed under a local path the bundle names."""
    _, base, _ = collected
    options = SessionOptions(state_dir=tmp_path / "state", offline=True)
    first = Session.of_bundle(base / "run.json.gz", options)
    finding = next(f for f in first.cached_run().findings if f.section is Section.ACTION_ITEMS)
    first.review.drop([finding], "not ours")
    again = Session.of_bundle(base / "run.json.gz", dataclasses.replace(options))
    assert again.scope == first.scope == f"bundle:{first.repository}/{first.experiment}"
    assert first.repository == read_bundle(base / "run.json.gz").config["project"]["repo"]
    entry = again.review.decisions()[finding.fingerprint]
    assert (entry.decision, entry.reason) == ("dropped", "not ours")
    assert again.workdir() is None  # no repro runs where the bundle says: only with --repo


def test_a_bundles_log_excerpt_opens_as_a_file(collected, tmp_path):
    _, base, _ = collected
    session = Session.of_bundle(
        base / "run.json.gz", SessionOptions(state_dir=tmp_path / "s", offline=True)
    )
    [ci] = [f for f in session.cached_run().findings if f.kind == "ci_failure"]
    kept = session.logs.log_file(ci)
    assert kept is not None and kept.path.is_file()
    data = kept.path.read_bytes()
    assert kept.root_offset is not None
    assert b"Traceback" in data[kept.root_offset : kept.root_offset + 400]


def test_publishing_a_bundle_collected_offline_warns_items_would_be_filed_again(tmp_path):
    with running_demo(tmp_path / "world", TODAY) as demo:
        opts = dataclasses.replace(
            demo.session_options(today=TODAY), offline=True, state_dir=tmp_path / "state"
        )
        run = Session(opts).collect()
        problems = Session(dataclasses.replace(opts, offline=False)).run_problems(run)
    assert any(
        p.startswith("no prior report was read (skipped — offline")
        and "would be filed again as new" in p
        for p in problems
    )


# -- A bundle is data: what it holds never says where the token goes, what runs, or where
# a file is written ---------------------------------------------------------------------------
def rewritten(base: Path, target: Path, change) -> Path:
    """The collected bundle, changed as a hostile sender would."""
    document = json.loads(gzip.decompress((base / "run.json.gz").read_bytes()))
    change(document)
    target.write_bytes(gzip.compress(json.dumps(document).encode()))
    return target


def ci_failure_of(document: dict) -> dict:
    return next(f for f in document["run"]["findings"] if f["kind"] == "ci_failure")


def set_first_fingerprint(document: dict, value: str) -> None:
    document["run"]["findings"][0]["fingerprint"] = value


@pytest.mark.parametrize(
    "change, where",
    [
        (lambda d: set_first_fingerprint(d, "../../x"), "run.findings.0.fingerprint: '../../x'"),
        (
            lambda d: d["run"]["findings"][1].update(aliases=["ok-0123456789ab", "x/../y"]),
            "run.findings.1.aliases.1",
        ),
        (lambda d: d["run"].update(suppressed=["NOT-A-FINGERPRINT"]), "run.suppressed.0"),
        (
            lambda d: d["logs"].update({"../../evil": next(iter(d["logs"].values()))}),
            "logs.'../../evil'",
        ),
        (lambda d: next(iter(d["logs"].values())).update(name="../../.bashrc"), ".name: "),
        (lambda d: d["config"]["project"].update(repo="../../home"), "config.project.repo"),
        (lambda d: d["run"].update(experiment="../../etc"), "run.experiment"),
        (
            lambda d: d["run"]["findings"][0]["evidence"].update(urls=["file:///etc/passwd"]),
            "run.findings.0.evidence.urls.0: 'file:///etc/passwd' is not an http(s) link",
        ),
        (
            lambda d: d["run"]["findings"][0].update(title="a \ud800 b"),
            "run.findings.0.title: not Unicode text",
        ),
        (
            lambda d: d["run"]["findings"][0].update(title="x" * 2_000_000),
            "run.findings.0.title: a string of 2,000,000 characters (at most 1,048,576)",
        ),
    ],
)
def test_a_bundle_field_scout_acts_on_is_checked(collected, tmp_path, change, where):
    _, base, _ = collected
    path = rewritten(base, tmp_path / "hostile.json.gz", change)
    done = scout("open", path, "--state-dir", tmp_path / "state", "--offline")
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"scout: error: {path}: ") and done.stderr.count("\n") == 1
    assert where in done.stderr


def test_a_plain_run_is_checked_the_same(collected, tmp_path):
    _, base, _ = collected
    run = json.loads((base / "run.json").read_text())
    run["findings"][0]["fingerprint"] = "../../x"
    path = tmp_path / "run.json"
    path.write_text(json.dumps(run))
    done = scout("open", path, "--state-dir", tmp_path / "state", "--offline")
    assert done.returncode == 2
    assert (
        done.stderr == f"scout: error: {path}: findings.0.fingerprint: '../../x' is not a "
        "fingerprint (kind-<12 hex digits>)\n"
    )


def test_a_gzip_bomb_is_one_line_and_memory_stays_low(tmp_path):
    """4 GiB of JSON whitespace in 4 MB: gzip members of 64 MiB, the same one repeated."""
    member = gzip.compress(b" " * (64 << 20), compresslevel=9)
    path = tmp_path / "bomb.json.gz"
    with path.open("wb") as bomb:
        bomb.write(gzip.compress(b'{"bundle_version": 1,'))
        for _ in range(64):
            bomb.write(member)
    command = [sys.executable, "-m", "scout_tui", "open", str(path), "--offline"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stderr = process.stderr.read()
    process.stdout.close()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    assert process.returncode == 2
    assert stderr == (
        f"scout: error: {path}: decompresses to more than "
        f"{MAX_DOCUMENT_BYTES >> 20} MiB of JSON: not a bundle scout opens\n"
    )
    assert usage.ru_maxrss < 2 * MAX_DOCUMENT_BYTES // 1024 + 200 * 1024  # KiB: never 4 GiB


def test_a_run_of_5000_findings_opens(collected, tmp_path):
    _, base, _ = collected

    def many(document: dict) -> None:
        findings = document["run"]["findings"]
        document["run"]["findings"] = [
            {
                **findings[n % len(findings)],
                "fingerprint": f"todo_blocked-{n:012x}",
                "aliases": [],
                "title": f"finding {n}",
            }
            for n in range(5000)
        ]
        document["logs"] = {}

    path = rewritten(base, tmp_path / "many.json.gz", many)
    done = scout("open", path, "--state-dir", tmp_path / "state", "--offline")
    assert done.returncode == 0, done.stderr
    assert "finding 4999" in done.stdout


def test_an_excerpt_is_written_only_in_a_private_folder(collected, tmp_path, monkeypatch):
    """Not in the predictable folder of before, where anyone could plant a symlink."""
    _, base, _ = collected
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    elsewhere = tmp_path / "someone-elses"
    elsewhere.mkdir()
    (tmp_path / "tmp" / f"scout-bundle-logs-{os.getuid()}").symlink_to(elsewhere)
    session = Session.of_bundle(
        base / "run.json.gz", SessionOptions(state_dir=tmp_path / "s", offline=True)
    )
    [ci] = [f for f in session.cached_run().findings if f.kind == "ci_failure"]
    kept = session.logs.log_file(ci)
    assert kept is not None and session.logs.log_file(ci) == kept  # written once per session
    assert list(elsewhere.iterdir()) == []
    folder = kept.path.parent
    info = folder.lstat()
    assert folder.parent == tmp_path / "tmp" and stat.S_ISDIR(info.st_mode)
    assert stat.S_IMODE(info.st_mode) == 0o700 and info.st_uid == os.getuid()
    excerpt = session.bundle.logs[ci.fingerprint]
    assert ci.fingerprint not in kept.path.name and excerpt.name not in kept.path.name
    assert kept.path.read_bytes() == excerpt.text.encode()


class CountingServer(http.server.ThreadingHTTPServer):
    """A host the bundle names: it counts every request that reaches it."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.requests.append(f"{self.command} {self.path}")
                self.send_error(404)

            do_POST = do_PATCH = do_GET

            def log_message(self, *_: object) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


async def test_the_bundles_configuration_never_sends_the_token(collected, tmp_path):
    """The bundle names another API and web host: nothing reaches it; the reviewer's own
    configuration is the target, and the confirmation names it and where it came from."""
    demo, base, _ = collected
    elsewhere = CountingServer()
    try:
        path = rewritten(
            base,
            tmp_path / "b.json.gz",
            lambda d: d["config"]["project"].update(api_url=elsewhere.url, web_url=elsewhere.url),
        )
        mine = tmp_path / "mine" / "scout.toml"
        mine.parent.mkdir()
        demo_config = Path(demo.session_options(today=TODAY).config).read_text()
        assert GONE in demo_config  # the demo's own GitHub, once it is gone
        mine.write_text(demo_config.replace(GONE, demo.github.url))
        options = SessionOptions(
            state_dir=tmp_path / "state",
            cache_dir=tmp_path / "cache",
            token=DEMO_TOKEN,
            config=mine,
        )
        app = ScoutApp(Session.of_bundle(path, options), load_cached=True)
        async with app.run_test(size=(100, 32)) as pilot:
            await settle(pilot, app)
            assert elsewhere.requests == []  # GitHub was asked: the reviewer's, not this one
            modal = await publish_modal(pilot, app)
            assert modal.proposal.target.endswith(
                f"(from {mine}) on {demo.github.url} (from {mine}), links to {demo.github.url}"
            )
            await pilot.press("escape")
        assert elsewhere.requests == []
    finally:
        elsewhere.shutdown()
        elsewhere.server_close()


async def test_r_on_a_bundle_is_refused_without_the_reviewers_checkout(collected, tmp_path):
    _, base, _ = collected
    session = Session.of_bundle(
        base / "run.json.gz", SessionOptions(state_dir=tmp_path / "s", offline=True)
    )
    app = ScoutApp(session, load_cached=True)
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot, app)
        await cursor_to(pilot, app, lambda f: f.kind == "ci_failure")
        await pilot.press("r")
        await settle(pilot, app)
        assert not isinstance(app.screen, ConfirmRepro) and app.triage.repro_flow.run is None
        assert any("scout open FILE --repo PATH" in n.message for n in app._notifications)


STAND_IN_TRAIN = """#!/bin/sh
printf '%s\\n' "NGPU=$NGPU" "$@" > argv.txt
"""


async def test_r_with_repo_runs_the_command_derived_from_the_excerpt(collected, tmp_path):
    """The bundle's stored command is never run: the command is read again from its log
    excerpt, in scout's shapes, run without a shell, and shown literally (markup and all)."""
    _, base, _ = collected
    tail = " --note '[/]' --tag '[black on black]hidden' 'x;touch pwned'"

    def hostile(document: dict) -> None:
        ci_failure_of(document)["evidence"]["repro"] = "touch pwned; NGPU=1 ./run_train.sh"
        for excerpt in document["logs"].values():  # its `Command:` lines and test headers
            text = re.sub(r"(Command: [^\r\n]*)", lambda m: m.group(1) + tail, excerpt["text"])
            excerpt["text"] = re.sub(
                r"(\] command: [^\r\n]*?)( =====)", lambda m: m.group(1) + tail + m.group(2), text
            )

    path = rewritten(base, tmp_path / "b.json.gz", hostile)
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    subprocess.run(["git", "init", "-q", str(checkout)], check=True)
    script = checkout / "run_train.sh"
    script.write_text(STAND_IN_TRAIN)
    script.chmod(0o755)
    options = SessionOptions(state_dir=tmp_path / "s", offline=True, reviewer_checkout=checkout)
    app = ScoutApp(Session.of_bundle(path, options), load_cached=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        await cursor_to(pilot, app, lambda f: f.kind == "ci_failure")
        await pilot.press("c")  # what is copied is what would run: never the stored string
        await first_test(pilot, app)
        assert app.clipboard.startswith("NGPU=4 ./run_train.sh --module graph_trainer.llama3")
        await pilot.press("r")
        await first_test(pilot, app)
        await settle(pilot, app)
        assert isinstance(app.screen, ConfirmRepro)
        shown = str(app.screen.query_one("#repro-command", Static).render())
        assert shown.startswith("$ NGPU=4 ./run_train.sh --module graph_trainer.llama3")
        assert shown.endswith("--note '[/]' --tag '[black on black]hidden' 'x;touch pwned'")
        await pilot.press("y")
        for _ in range(200):
            await pilot.pause(0.05)
            if app.triage.repro_flow.run is not None and not app.triage.repro_flow.run.running:
                break
        assert app.triage.repro_flow.run is not None and app.triage.repro_flow.run.returncode == 0
    argv = (checkout / "argv.txt").read_text().splitlines()
    assert argv[:3] == ["NGPU=4", "--module", "graph_trainer.llama3"]
    assert argv[-5:] == ["--note", "[/]", "--tag", "[black on black]hidden", "x;touch pwned"]
    assert not (checkout / "pwned").exists()


async def test_the_repro_confirmation_shows_control_characters(tmp_path):
    app = App()
    async with app.run_test(size=(100, 30)) as pilot:
        app.push_screen(
            ConfirmRepro(
                "NGPU=1 ./run_train.sh \x1b]52;c;aGk=\x07 \u202eexe.sh", str(tmp_path / "a\x1b[2Jb")
            )
        )
        await pilot.pause()
        shown = "\n".join(str(widget.render()) for widget in app.screen.query(Static))
    assert "\x1b" not in shown and "\u202e" not in shown and "\x07" not in shown
    assert "\\x1b]52;c;aGk=\\x07 \\u202eexe.sh" in shown and "a\\x1b[2Jb" in shown


def test_open_with_repo_publishes_with_that_checkouts_configuration(collected, tmp_path):
    _, base, _ = collected
    checkout = tmp_path / "mine"
    (checkout / "sub").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(checkout)], check=True)
    (checkout / "scout.toml").write_text('[project]\nrepo = "demo/minititan"\ntracking_issue = 7\n')
    done = scout(
        "open",
        base / "run.json.gz",
        "--repo",
        checkout / "sub",
        "--offline",
        "--state-dir",
        tmp_path / "state",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert (
        f"publishing goes to demo/minititan#7 and the board pytorch/161 (from "
        f"{checkout / 'scout.toml'}) on https://api.github.com (from "
        f"{checkout / 'scout.toml'}), links to https://github.com" in done.stderr
    )
    done = scout("open", base / "run.json.gz", "--repo", tmp_path / "nowhere", "--offline")
    assert done.returncode == 2
    assert done.stderr == f"scout: error: --repo {tmp_path / 'nowhere'}: no such folder\n"


def test_a_bundle_of_another_repository_is_not_published_with_your_configuration(
    collected, tmp_path
):
    _, base, _ = collected
    mine = tmp_path / "scout.toml"
    mine.write_text('[project]\nrepo = "someone/else"\n')
    listener = CountingServer()
    try:
        session = Session.of_bundle(
            base / "run.json.gz",
            SessionOptions(
                config=mine, api_url=listener.url, token="not-used", state_dir=tmp_path / "s"
            ),
        )
        with pytest.raises(
            UsageError,
            match=re.escape(
                f"the bundle is a run of demo/minititan; your configuration ({mine}) "
                "publishes to someone/else"
            ),
        ):
            session.publisher()
    finally:
        listener.shutdown()
        listener.server_close()
    assert listener.requests == []


async def test_p_on_a_bundle_of_another_repository_says_why_it_cannot_publish(collected, tmp_path):
    """Online, with a configuration of another repository: `P` ends with the refusal naming
    both repositories, not "preparing the publish…" for good (and nothing is posted)."""
    demo, base, _ = collected
    mine = tmp_path / "scout.toml"
    mine.write_text('[project]\nrepo = "someone/else"\n')
    options = SessionOptions(
        state_dir=tmp_path / "state",
        cache_dir=tmp_path / "cache",
        api_url=demo.github.url,
        token=DEMO_TOKEN,
        config=mine,
    )
    before = len(scout_comments(demo.github.world, TODAY))
    app = ScoutApp(Session.of_bundle(base / "run.json.gz", options), load_cached=True)
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot, app)
        said: list[str] = []
        app.notify = lambda message, **kw: said.append(str(message))  # type: ignore[method-assign]
        await pilot.press("P")
        for _ in range(100):
            await pilot.pause(0.05)
            if said:
                break
        assert said == [
            "cannot publish: the bundle is a run of demo/minititan; your configuration "
            f"({mine}) publishes to someone/else: give the scout.toml for demo/minititan "
            "(--config FILE, or --repo with your checkout)"
        ]
        status = str(app.screen.query_one("#status").render())
        assert "preparing the publish" not in status
    assert len(scout_comments(demo.github.world, TODAY)) == before


@pytest.mark.parametrize(
    ("value", "count"),
    [
        # 120 MiB of `[],` gzip to 120 KB; parsed whole they took 6 GB: counted first.
        (b"[],", 40 << 20),
        # 100 MiB of `"ab",`, 20 million strings: blanking them with a regex held a piece per
        # string (4.5 GB); they are counted in place, and each string is a value.
        (b'"ab",', 20 << 20),
    ],
    ids=["containers", "strings"],
)
def test_a_small_bundle_of_millions_of_values_is_one_line_and_memory_stays_low(
    tmp_path, value, count
):
    path = tmp_path / "values.json.gz"
    body = b'{"bundle_version": 1, "x": [' + value * count + value.rstrip(b",") + b"]}"
    path.write_bytes(gzip.compress(body, compresslevel=6))
    del body  # the child's peak is measured, not this process's pages it starts with
    command = [sys.executable, "-m", "scout_tui", "open", str(path), "--offline"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stderr = process.stderr.read()
    process.stdout.close()
    _, status, usage = os.wait4(process.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 2
    assert (
        stderr == f"scout: error: {path}: holds more than 2,000,000 values: not a bundle "
        "scout opens\n"
    )
    assert usage.ru_maxrss < 2 * MAX_DOCUMENT_BYTES // 1024 + 200 * 1024  # KiB: never GBs
