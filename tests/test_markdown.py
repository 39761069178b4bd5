"""Text from logs and code cannot break the report, render HTML, or ping people."""

from __future__ import annotations

import re
from datetime import date

from scout_tui.analysis.text.markdown import code, fence, neutralize
from scout_tui.history.parse import parse_report
from scout_tui.model import Evidence, Finding, Priority, Section, fingerprint
from scout_tui.report.render import render_report

TRACEBACK = """Traceback (most recent call last):
  File "torchtitan/experiments/graph_trainer/passes.py", line 12, in cse_pass
    doc = '''
```python
print("fence inside a docstring")
```
'''
RuntimeError: <b>boom</b> cc @alice <!-- scout:fp=forged-000000000000 -->"""


def ci_finding():
    return Finding(
        collector="ci",
        kind="ci_failure",
        section=Section.CI_FAILURES,
        priority=Priority.P0,
        title="`integration_test_8gpu_graph_trainer.yaml` failing, ping @bob <script>x</script>",
        body="Root cause from @carol's change <img src=x onerror=alert(1)>.",
        evidence=Evidence(
            traceback=TRACEBACK,
            error="RuntimeError: <b>boom</b> `tick` @dave",
            repro="NGPU=8 ./run_train.sh --module m",
        ),
        fingerprint=fingerprint("ci_failure", "wf"),
    )


def following_item():
    return Finding(
        collector="x",
        kind="todo_owned",
        section=Section.FYI,
        title="After the fence",
        fingerprint=fingerprint("todo_owned", "after"),
    )


def test_fence_is_longer_than_any_backtick_run():
    block = fence("a\n````\nb")
    assert block.startswith("`````\n") and block.endswith("\n`````")
    assert code("a ``b`` c") == "```a ``b`` c```"
    assert code("`x`") == "`` `x` ``"


def test_neutralize_prose_but_not_code():
    text = neutralize("hi @alice and <b>x</b> but `@bob <i>` stays\n```\n@carol <b>\n```")
    assert "`@alice`" in text
    assert "&lt;b>x&lt;/b>" in text
    assert "`@bob <i>`" in text
    assert "\n@carol <b>\n" in text  # inside a fence GitHub neither pings nor renders
    assert neutralize("mail me at a@b.com") == "mail me at a@b.com"


def test_unclosed_fence_is_closed():
    assert neutralize("text\n```\ncode").endswith("```")


def test_report_with_hostile_text_stays_well_formed():
    report = render_report(date(2026, 4, 2), [ci_finding(), following_item()])
    # No raw HTML outside code, no mention outside code.
    prose = re.sub(r"(`{3,})[^\n]*\n.*?\n[ ]*\1(?!`)", "", report, flags=re.DOTALL)
    prose = re.sub(r"(`+)(.+?)\1", "", prose)
    assert "<b>" not in prose and "<script>" not in prose and "<img" not in prose
    assert not re.search(r"(?<![\w`])@\w", prose)
    # Exactly our markers survive as HTML comments; the forged one in the traceback does not
    # parse as a marker because it sits inside a fence.
    parsed = parse_report(report)
    assert [i.fingerprint for i in parsed.items] == [
        ci_finding().fingerprint,
        following_item().fingerprint,
    ]
    assert parsed.items[1].section is Section.FYI
    assert parsed.items[1].title == "After the fence"
    # The traceback's fence did not end ours: the docstring's ``` sits inside a longer one.
    assert "````\n" in report
