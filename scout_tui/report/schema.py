"""The JSON Schema of `--json` output, generated from the pydantic models.

`python -m scout_tui.report.schema` rewrites the committed copy in schema/; a test fails
when the models change and the committed schema was not regenerated.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from scout_tui.model import SCHEMA_VERSION, RunResult

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "schema" / "run.schema.json"


def run_schema() -> dict:
    schema = RunResult.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://scout-tui.invalid/schema/run.v{SCHEMA_VERSION}.json"
    return schema


def render() -> str:
    return json.dumps(run_schema(), indent=2, sort_keys=True) + "\n"


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else SCHEMA_FILE
    target.write_text(render(), encoding="utf-8")
    print(f"wrote {target}")
