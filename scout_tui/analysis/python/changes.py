"""What changed in an upstream definition, as data: what `pyast.compare_*` find, what
relevance weighs, and what the report says — the words made once, by `describe`.

Nothing reads a change's words back: relevance and the collectors look at its fields, a
finding's items are the changes' keys (`item_key`), and words come from a key at render time.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import astuple, dataclass, fields
from typing import Literal

Subject = Literal["field", "parameter", "property", "method", "attribute"]


@dataclass(frozen=True)
class Added:
    """A field, parameter, property or method that is new; `kind`: a parameter's kind."""

    subject: Subject
    name: str
    kind: str | None = None
    # A parameter's: no default (every call must now pass it), and where it stands as a
    # caller counts (a method's `self` not counted): a call with more positional arguments
    # than that passes the old ones one place off.
    required: bool = False
    position: int | None = None


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
class CheckAdded:
    """A validation upstream added (a `raise` or an `assert`) in `where`: it rejects what
    `condition` (as code) holds for."""

    where: str
    condition: str


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
    | CheckAdded
    | Reshaped
)
Named = Added | Removed | TypeChanged | DefaultChanged | ValuesChanged | KindChanged


_TYPES: dict[str, type[Change]] = {
    cls.__name__: cls
    for cls in (
        Added,
        Removed,
        TypeChanged,
        DefaultChanged,
        ValuesChanged,
        KindChanged,
        Reordered,
        ReturnsChanged,
        CheckAdded,
        Reshaped,
    )
}


def item_key(change: Change) -> str:
    """The change as a finding's item: its type and fields, never its words, so that
    rewording `describe` moves no report marker. A wire format: changing it is changing
    every marker (like a fingerprint's key)."""
    return json.dumps(
        [type(change).__name__, *astuple(change)], ensure_ascii=False, separators=(",", ":")
    )


def change_of(item: str) -> Change | None:
    """The change an item is the key of; None for an item that is not one."""
    try:
        name, *values = json.loads(item)
        cls = _TYPES[name]
    except (ValueError, TypeError, KeyError):
        return None
    if len(values) != len(fields(cls)) or not all(map(_plain, values)):
        return None
    change: Change = cls(*(tuple(v) if isinstance(v, list) else v for v in values))  # type: ignore[arg-type]  # checked by _plain
    return change


def _plain(value: object) -> bool:
    return (
        value is None
        or isinstance(value, str | bool)
        or (isinstance(value, list) and all(isinstance(v, str) for v in value))
    )


def item_words(item: str) -> str:
    """How a change's item reads in a report; an item that is not a change's key (a run
    cached before items were keys) reads as itself."""
    change = change_of(item)
    return item if change is None else describe(change)


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
            if after is None:  # no default any more: a caller must now pass it
                return f"{subject} `{name}` default `{before}` removed"
            if before is None:
                return f"{subject} `{name}` default `{after}` added"
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
        case CheckAdded(where, condition):
            return f"new check in `{where}` rejects `{condition}`"
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
