"""The local server's GraphQL schema is GitHub's, as far as it goes: every type, field,
argument, union member and enum value it declares exists in GitHub's published schema with
the same type. GitHub's schema comes verbatim from the npm package @octokit/graphql-schema
at the version .ci/run fetches (build/github-schema/), or from $SCOUT_GITHUB_SCHEMA."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

import pytest
from graphql import (
    GraphQLEnumType,
    GraphQLInputObjectType,
    GraphQLInterfaceType,
    GraphQLObjectType,
    GraphQLUnionType,
    build_schema,
)

ROOT = Path(__file__).parent.parent
SCHEMA_PACKAGE = "@octokit/graphql-schema@15.26.1"  # also in .ci/run
GITHUB_SCHEMA = Path(
    os.environ.get("SCOUT_GITHUB_SCHEMA") or ROOT / "build/github-schema/package/schema.graphql"
)


def differences(ours_sdl: str, theirs_sdl: str) -> list[str]:
    ours = build_schema(ours_sdl)
    theirs = build_schema(theirs_sdl, assume_valid_sdl=True)  # GitHub's repeats a few fields
    problems = []
    for name, ours_type in ours.type_map.items():
        if name.startswith("__"):
            continue
        theirs_type = theirs.type_map.get(name)
        if theirs_type is None:
            problems.append(f"type {name} is not GitHub's")
            continue
        if type(ours_type) is not type(theirs_type):
            problems.append(f"{name} is a {type(theirs_type).__name__} on GitHub")
            continue
        if isinstance(ours_type, GraphQLObjectType | GraphQLInterfaceType | GraphQLInputObjectType):
            for field_name, field in ours_type.fields.items():
                other = theirs_type.fields.get(field_name)
                if other is None:
                    problems.append(f"{name}.{field_name} is not GitHub's")
                    continue
                if str(field.type) != str(other.type):
                    problems.append(f"{name}.{field_name}: {field.type}, GitHub: {other.type}")
                for arg_name, arg in getattr(field, "args", {}).items():
                    theirs_arg = other.args.get(arg_name)
                    if theirs_arg is None or str(arg.type) != str(theirs_arg.type):
                        problems.append(f"{name}.{field_name}({arg_name}: {arg.type}) differs")
            if not isinstance(ours_type, GraphQLInputObjectType):
                mine = {i.name for i in ours_type.interfaces}
                problems += [
                    f"{name} does not implement {i} on GitHub"
                    for i in mine - {i.name for i in theirs_type.interfaces}
                ]
        if isinstance(ours_type, GraphQLUnionType):
            extra = {t.name for t in ours_type.types} - {t.name for t in theirs_type.types}
            problems += [f"{name} has no member {member} on GitHub" for member in sorted(extra)]
        if isinstance(ours_type, GraphQLEnumType):
            extra = set(ours_type.values) - set(theirs_type.values)
            problems += [f"{name} has no value {value} on GitHub" for value in sorted(extra)]
    return problems


def ours() -> str:
    return resources.files("scout_tui.sandbox.github").joinpath("schema.graphql").read_text()


@pytest.mark.skipif(
    not GITHUB_SCHEMA.is_file(),
    reason=f"GitHub's schema not fetched: npm pack {SCHEMA_PACKAGE} "
    "into build/github-schema (.ci/run does)",
)
def test_the_servers_schema_is_githubs():
    assert differences(ours(), GITHUB_SCHEMA.read_text(encoding="utf-8")) == []


def test_the_check_finds_what_is_not_githubs():
    """The comparison itself, on a schema that departs from GitHub's in each way."""
    github = "type Query { a(n: Int): String! }\nenum E { X Y }\nunion U = Query\n"
    wrong = (
        "type Query { a(n: String): String! b: Int }\nenum E { X Z }\n"
        "type Other { c: Int }\nunion U = Query | Other\n"
    )
    assert set(differences(wrong, github)) == {
        "Query.a(n: String) differs",
        "Query.b is not GitHub's",
        "E has no value Z on GitHub",
        "type Other is not GitHub's",
        "U has no member Other on GitHub",
    }
