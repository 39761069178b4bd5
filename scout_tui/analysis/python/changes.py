"""What changed in an upstream definition, as data: what `pyast.compare_*` find, what
relevance weighs, and what the report says — the words made once, by `describe`.

Nothing reads a change's words back: relevance and the collectors look at its fields.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

Subject = Literal["field", "parameter", "property", "method"]


@dataclass(frozen=True)
class Added:
    """A field, parameter, property or method that is new; `kind`: a parameter's kind."""

    subject: Subject
    name: str
    kind: str | None = None


@dataclass(frozen=True)
class Removed:
    subject: Subject
    name: str


@dataclass(frozen=True)
class TypeChanged:
    """A field's or a parameter's annotation; `widened`: the new type is a base class of
    the old one, so whatever fit still fits."""

    subject: Subject
    name: str
    before: str | None
    after: str | None
    widened: bool = False


@dataclass(frozen=True)
class DefaultChanged:
    subject: Subject
    name: str
    before: str | None
    after: str | None


@dataclass(frozen=True)
class ValuesChanged:
    """A `Literal` field's allowed values."""

    name: str
    removed: tuple[str, ...]
    added: tuple[str, ...]

    subject: Subject = "field"


@dataclass(frozen=True)
class KindChanged:
    """A parameter that became positional, keyword-only, …"""

    name: str
    kind: str
    was: str

    subject: Subject = "parameter"


@dataclass(frozen=True)
class Reordered:
    """The parameters both versions have, in their new order."""

    order: tuple[str, ...]


@dataclass(frozen=True)
class ReturnsChanged:
    after: str  # "a 4-tuple", "a single value", …
    before: str


@dataclass(frozen=True)
class Reshaped:
    """The definition itself changed shape: no longer a class, a class became a function,
    it appeared or disappeared in a commit."""

    qualname: str
    how: Literal["no longer a class", "class or function", "appeared or disappeared"]


Change = (
    Added
    | Removed
    | TypeChanged
    | DefaultChanged
    | ValuesChanged
    | KindChanged
    | Reordered
    | ReturnsChanged
    | Reshaped
)
Named = Added | Removed | TypeChanged | DefaultChanged | ValuesChanged | KindChanged


def named(change: Change) -> str | None:
    """The field, parameter or member a change is about; None for a change of the whole."""
    return change.name if isinstance(change, Named) else None


def _listed(values: tuple[str, ...]) -> str:
    return ", ".join(f"`{v}`" for v in values)


def describe(change: Change) -> str:
    """The change in the report's words."""
    match change:
        case Added(subject, name, kind):
            return f"{subject} `{name}` added" + (f" ({kind})" if kind else "")
        case Removed(subject, name):
            return f"{subject} `{name}` removed"
        case TypeChanged(subject, name, before, after, widened):
            said = f"{subject} `{name}` type `{before}` → `{after}`"
            return said + (f", a base class of `{before}`: what fit still fits" if widened else "")
        case DefaultChanged(subject, name, before, after):
            return f"{subject} `{name}` default `{before}` → `{after}`"
        case ValuesChanged(name, removed, added):
            parts = ([f"removed {_listed(removed)}"] if removed else []) + (
                [f"added {_listed(added)}"] if added else []
            )
            return f"field `{name}` allowed values: {'; '.join(parts)}"
        case KindChanged(name, kind, was):
            return f"parameter `{name}` became {kind} (was {was})"
        case Reordered(order):
            return "parameters reordered: " + ", ".join(order)
        case ReturnsChanged(after, before):
            return f"returns {after} (was {before})"
        case Reshaped(qualname, how):
            if how == "no longer a class":
                return f"`{qualname}` is no longer a class"
            if how == "class or function":
                return f"`{qualname}` changed between class and function"
            return f"`{qualname}` appeared or disappeared"
    raise AssertionError(change)


def in_order(changes: Iterable[Change]) -> list[Change]:
    """Changes in the order the report lists them."""
    return sorted(changes, key=describe)
