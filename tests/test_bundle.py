"""Collect here, review there: `scout collect --bundle` on the demo's world (its local GitHub
with failing CI), `scout open` elsewhere — headless and in the console, triaged and
published to the local server — and the files `scout open` must refuse."""

from __future__ import annotations

import dataclasses
import gzip
import json

import pytest

from scout_tui.bundle import BUNDLE_VERSION, read_bundle
from scout_tui.demo.github_world import DEMO_TOKEN
from scout_tui.demo.running import running_demo
from scout_tui.model import Section
from scout_tui.session import Session, SessionOptions
from scout_tui.tui.app import ScoutApp
from tests.cli import scout
from tests.conftest import TODAY
from tests.console import confirm_publish, cursor_to, publish_modal, settle
from tests.github_world import scout_comments


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    """The demo's world with a bundle and a plain --json run collected by the CLI."""
    base = tmp_path_factory.mktemp("bundle")
    with running_demo(base / "world", TODAY) as demo:
        opts = demo.session_options(today=TODAY)
        common = ["--repo", opts.repo, "--config", opts.config, "--date", TODAY.isoformat(),
                  "--cache-dir", base / "cache", "--state-dir", base / "state-box",
                  "--api-url", demo.github.url]  # fmt: skip
        env = {"GH_ENTERPRISE_TOKEN": DEMO_TOKEN, "SCOUT_GITHUB_API_URL": ""}
        done = scout("collect", *common, "--bundle", base / "run.json.gz", env=env)
        assert done.returncode == 0, done.stderr
        plain = scout("collect", *common, "--json", "-o", base / "run.json", env=env)
        assert plain.returncode == 0, plain.stderr
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
    assert excerpt["text"][root:].startswith("Traceback") or "Traceback" in \
        excerpt["text"][max(0, root - 200): root + 200]  # fmt: skip
    assert ci["evidence"]["error"].split(":")[0] in excerpt["text"]
    assert DEMO_TOKEN.encode() not in gzip.decompress(raw)  # no secret travels
    assert f"`scout open {base / 'run.json.gz'}` reviews it" in done.stderr  # a path that works
    # scout.toml's own problems: on stderr and in the bundle's run, apart from the findings.
    assert done.stderr.count("scout: scout.toml: `[upstream.surfaces]`") == 3
    assert len(run["config_warnings"]) == 3
    assert not any(f["kind"] == "surface_not_found" for f in run["findings"])


def test_open_headless_prints_the_bundles_report(collected, tmp_path):
    _, base, _ = collected
    done = scout("open", base / "run.json.gz", "--state-dir", tmp_path / "state",
                 "--cache-dir", tmp_path / "cache", "--offline")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# Nightly Scout Report — 2026-12-02")
    assert "CI Failures" in done.stdout


def test_open_takes_a_plain_collect_json_run(collected, tmp_path):
    _, base, _ = collected
    bundle = read_bundle(base / "run.json")
    assert bundle.config is None and bundle.run.findings
    done = scout("open", base / "run.json", "--state-dir", tmp_path / "state", "--offline")
    assert done.returncode == 0, done.stderr
    assert "# Nightly Scout Report" in done.stdout


@pytest.mark.parametrize("content, said", [
    (b"not json at all", "not a scout bundle or run (not JSON"),
    (b"\x1f\x8b\x08\x00garbage", "a damaged gzip file"),
    (b'{"bundle_version": 99, "run": {}}', "bundle_version 99 is newer than this scout reads"),
    (b'{"bundle_version": "one"}', "bundle_version 'one' is not a version"),
    (b'{"bundle_version": 1, "scout_version": "0.1.0", "created_at": "2026-12-02T00:00:00Z",'
     b' "run": {"date": "not a date"}}', "run.date"),
    (b"[1, 2]", "a JSON list"),
    (b'{"hello": 1}', "no bundle_version, no findings"),
])  # fmt: skip
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
    assert done.stderr == ("scout: error: --bundle /proc/scout.json.gz: cannot write there: "
                           f"{done.stderr.rsplit(': ', 1)[1]}")  # one line, nothing collected


async def test_a_bundle_reviewed_in_the_console_and_published(collected, tmp_path):
    """Open the bundle on "another machine" (its own state, no checkout needed), triage it,
    publish it to the local GitHub: the comment and the drafts arrive."""
    demo, base, _ = collected
    # The reviewer's own configuration says where it goes, never the bundle's.
    options = SessionOptions(state_dir=tmp_path / "state", cache_dir=tmp_path / "cache",
                             api_url=demo.github.url, token=DEMO_TOKEN,
                             config=demo.session_options(today=TODAY).config)  # fmt: skip
    session = Session.of_bundle(base / "run.json.gz", options)
    before = len(scout_comments(demo.github.world, TODAY))
    app = ScoutApp(session, load_cached=True)
    async with app.run_test(size=(100, 32)) as pilot:
        await settle(pilot, app)
        assert app.run_result is not None and app.run_result.findings
        await cursor_to(pilot, app, lambda f: f.section is Section.ACTION_ITEMS)
        await pilot.press("a")
        await pilot.press("R")  # a bundle is not collected again here
        await settle(pilot, app)
        assert app.collection is None
        proposal = (await publish_modal(pilot, app)).proposal
        assert proposal.target.endswith(f"(from {options.config})")
        wanted = len(proposal.plan.drafts)
        await confirm_publish(pilot, app)
    comments = scout_comments(demo.github.world, TODAY)
    assert len(comments) == before + 1 or "edit" in app.screen.query("Markdown").last().source
    assert "Nightly Scout Report" in comments[-1].body
    drafts = [item for item in demo.github.world.projects[0].items
              if item.title.startswith("[NightlyScout]")]  # fmt: skip
    assert len(drafts) >= wanted > 0


def test_decisions_on_a_bundle_are_filed_under_its_repository(collected, tmp_path):
    """Tomorrow's bundle of the same repository finds today's decisions; they are never
    filed under a local path the bundle names."""
    _, base, _ = collected
    options = SessionOptions(state_dir=tmp_path / "state", offline=True)
    first = Session.of_bundle(base / "run.json.gz", options)
    finding = next(f for f in first.cached_run().findings
                   if f.section is Section.ACTION_ITEMS)  # fmt: skip
    first.drop([finding], "not ours")
    again = Session.of_bundle(base / "run.json.gz", dataclasses.replace(options))
    assert again.scope == first.scope == f"bundle:{first.repository}/{first.experiment}"
    assert first.repository == read_bundle(base / "run.json.gz").config["project"]["repo"]
    entry = again.decisions()[finding.fingerprint]
    assert (entry.decision, entry.reason) == ("dropped", "not ours")
    assert again.workdir() is None  # no repro runs where the bundle says: only with --repo


def test_a_bundles_log_excerpt_opens_as_a_file(collected, tmp_path):
    _, base, _ = collected
    session = Session.of_bundle(base / "run.json.gz",
                                SessionOptions(state_dir=tmp_path / "s", offline=True))
    [ci] = [f for f in session.cached_run().findings if f.kind == "ci_failure"]
    kept = session.log_file(ci)
    assert kept is not None and kept.path.is_file()
    data = kept.path.read_bytes()
    assert kept.root_offset is not None
    assert b"Traceback" in data[kept.root_offset: kept.root_offset + 400]


def test_publishing_a_bundle_collected_offline_warns_items_would_be_filed_again(tmp_path):
    with running_demo(tmp_path / "world", TODAY) as demo:
        opts = dataclasses.replace(demo.session_options(today=TODAY), offline=True,
                                   state_dir=tmp_path / "state")  # fmt: skip
        run = Session(opts).collect()
        problems = Session(dataclasses.replace(opts, offline=False)).run_problems(run)
    assert any(p.startswith("no prior report was read (skipped — offline")
               and "would be filed again as new" in p for p in problems)  # fmt: skip
