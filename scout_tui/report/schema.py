"""The JSON Schema of `--json` output, generated from the pydantic models.

`python -m scout_tui.report.schema` rewrites the committed copy in schema/; a test fails
when the models change and the committed schema was not regenerated.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from scout_tui.model import SCHEMA_VERSION, RunResult

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "schema" / "run.schema.json"


def schema_of(model: type[BaseModel], name: str) -> dict[str, Any]:
    """A model's JSON Schema as scout commits it: draft 2020-12, with its own `$id`."""
    schema = model.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://scout-tui.invalid/schema/{name}.json"
    return schema


def schema_text(schema: dict[str, Any]) -> str:
    """As the committed file holds it (a test compares the two)."""
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def run_schema() -> dict[str, Any]:
    return schema_of(RunResult, f"run.v{SCHEMA_VERSION}")


def render() -> str:
    return schema_text(run_schema())


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else SCHEMA_FILE
    target.write_text(render(), encoding="utf-8")
    print(f"wrote {target}")
