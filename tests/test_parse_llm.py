"""Reports written by hand in the LLM scout's style, not by our renderer."""

from __future__ import annotations

from datetime import date

import pytest

from scout_tui.history.parse import parse_report
from scout_tui.model import Priority, Section

from .conftest import FIXTURES


def load(name):
    return parse_report((FIXTURES / "reports" / name).read_text(), source=name)


def items_in(report, section):
    return [item for item in report.items if item.section is section]


def test_llm_report_of_april_2():
    report = load("2026-04-02.md")
    assert report.date == date(2026, 4, 2)

    (ci,) = items_in(report, Section.CI_FAILURES)
    assert ci.title == "integration_test_8gpu_graph_trainer.yaml — FAILING"
    assert "torch._dynamo.exc.UserError" in ci.text
    assert "NGPU=8 ./run_train.sh" in ci.text  # the fenced repro stays inside the item

    actions = items_in(report, Section.ACTION_ITEMS)
    assert [(i.priority, i.title) for i in actions] == [
        (
            Priority.P0,
            "`Trainer.Config` gained `gradient_accumulation_steps`, not copied by "
            "`to_graph_trainer_config`",
        ),
        (Priority.P1, "Re-enable `TestProfiler` in CI"),
        (Priority.P2, "Stale doc path in README"),
        (Priority.P1, "FlexAttention.forward signature changed upstream"),
    ]
    assert "silently dropped" in actions[0].text  # wrapped lines joined into the item
    assert "closing prose" not in actions[-1].text
    assert actions[1].first_reported == date(2026, 3, 28)
    assert actions[3].checked is True
    assert actions[3].board_url == (
        "https://github.com/orgs/pytorch/projects/161?pane=issue&itemId=123456"
    )
    assert all(i.fingerprint is None for i in report.items)

    opportunities = items_in(report, Section.OPPORTUNITIES)
    assert len(opportunities) == 2
    assert opportunities[0].title.startswith("`torchtitan/distributed/bucketing.py` adds")
    assert opportunities[1].title.startswith("New model directory")

    assert [i.title for i in items_in(report, Section.FYI)] == [
        "12 TODOs with no upstream blocker.",
        "`pytorch/pytorch#161234` still open.",
    ]
    assert [i.title for i in items_in(report, Section.ALL_CLEAR)] == [
        "Trainer.Config fields",
        "ParallelDims properties",
    ]
    assert not any("not one the report template has" in i.text for i in report.items)


def test_llm_report_of_april_3():
    report = load("2026-04-03.md")
    assert items_in(report, Section.CI_FAILURES) == []  # "CI green" is not an item
    actions = items_in(report, Section.ACTION_ITEMS)
    assert [i.title for i in actions] == [
        "`MoE.forward` gained a `scores` keyword",
        "Untested passes: `reorder_pass`, `bucket_pass`",
    ]
    assert "graph_trainer/deepseek_v3/parallelize.py" in actions[0].text
    carried = items_in(report, Section.CARRIED_FORWARD)
    assert [i.first_reported for i in carried] == [date(2026, 4, 2), date(2026, 3, 28)]
    assert carried[0].priority is Priority.P0
    docs = items_in(report, Section.DOCS)
    assert len(docs) == 1 and "--compile.mode=turbo" in docs[0].title
    assert items_in(report, Section.ALL_CLEAR) == []  # prose, not a list


def test_missing_sections_and_no_date():
    report = parse_report("# Nightly Scout Report — 2026-05-01\n\nAll quiet.\n")
    assert report.items == []
    with pytest.raises(ValueError, match="no date"):
        parse_report("# Something else\n\n- an item\n")
    undated = parse_report("# Nightly Scout Report\n\n## FYI\n- x\n", date(2026, 5, 2))
    assert undated.date == date(2026, 5, 2) and undated.items[0].title == "x"


def test_garbage_does_not_crash():
    text = "# Nightly Scout Report — 2026-05-01\n## Action Items\n- [ ] **[P1] unclosed bold\n```\n"
    report = parse_report(text + "\x00\ufffd" * 50)
    assert report.items[0].priority is Priority.P1
