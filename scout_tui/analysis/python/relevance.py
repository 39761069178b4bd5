"""Does the experiment depend on what changed upstream? Pure: the experiment's modules and
one surface's changes in, the changes it depends on (with where) out.

A change matters when the experiment uses the changed part: it overrides or patches the
method (an override must accept and return what the new signature does), calls it with
the affected parameters or positions, unpacks its returned tuple, or reads, sets or passes
the changed field. A new keyword parameter with a default, a new field, a new method: no
caller can break; an override or patch still can.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

from scout_tui.analysis.python import pyast
from scout_tui.analysis.python.changes import (
    Added,
    Change,
    DefaultChanged,
    Named,
    Removed,
    ReturnsChanged,
    TypeChanged,
    ValuesChanged,
)
from scout_tui.analysis.python.shapes import admits

SPLAT = "**"  # not an identifier: a keyword set holding it had `**d` or `*t`


def given(call: ast.Call) -> set[str]:
    """The keywords a call passes by name; with `SPLAT` when it unpacks a dict or a
    sequence (then any field may be among them)."""
    names = {k.arg for k in call.keywords if k.arg}
    if any(k.arg is None for k in call.keywords) or any(
        isinstance(a, ast.Starred) for a in call.args
    ):
        names.add(SPLAT)
    return names


@dataclass
class Uses:
    """How the experiment's code uses one class and one of its members."""

    overrides: list[str] = field(default_factory=list)  # "path:line" of overriding defs
    patches: list[str] = field(default_factory=list)  # "path:line" of `Class.name = …`
    # "path:line" of `Class.name = wrap(Class.name)`: the original passed through a wrapper
    # (a decorator applied by hand), which takes and returns whatever it does
    wraps: list[str] = field(default_factory=list)
    # where, how many positional arguments, which keywords
    calls: list[tuple[str, int, set[str]]] = field(default_factory=list)
    unpacks: list[tuple[str, int]] = field(default_factory=list)  # where, how many names
    names: dict[str, list[str]] = field(default_factory=dict)  # attribute/keyword → where
    values: dict[str, set[str]] = field(default_factory=dict)  # option → literals it is set to
    reads: set[str] = field(default_factory=set)  # attributes read (a default can matter)
    # constructions of the class itself: where, how many positional arguments, which keywords
    # (`SPLAT` among them: `Cls(**d)` or `Cls(*t)`, arguments scout cannot see)
    constructions: list[tuple[str, int, set[str]]] = field(default_factory=list)


def nested_elsewhere(call: ast.Call, enclosing: str, modules: dict[str, ast.Module]) -> bool:
    """`Other.Config(x=1)` when the class asked about is `enclosing.Config`: another class's
    nested class, its keywords that class's fields — unless `Other` subclasses `enclosing`
    (its Config may inherit the fields)."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False
    owner = ast.unparse(func.value).rsplit(".", 1)[-1]
    return owner != enclosing and owner not in _subclasses(modules, enclosing)


@pyast.per_tree
def _subclasses(modules: dict[str, ast.Module], name: str) -> frozenset[str]:
    """The modules' classes that derive from a class named `name`, through each other
    (asked for every nested Config call: kept per set of trees)."""
    bases = {
        node.name: {ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases}
        for tree in modules.values()
        for node in pyast.nodes(tree, ast.ClassDef)
        if isinstance(node, ast.ClassDef)
    }
    found: set[str] = set()
    grew = True
    while grew:
        more = {c for c, of in bases.items() if c not in found and of & (found | {name})}
        found |= more
        grew = bool(more)
    return frozenset(found)


@pyast.per_tree
def _defined_names(modules: dict[str, ast.Module]) -> frozenset[str]:
    """The names of the modules' classes and functions, at any depth."""
    return frozenset(
        getattr(node, "name", "")
        for tree in modules.values()
        for node in pyast.nodes(tree, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    )


def uses_of(
    modules: dict[str, ast.Module],
    outer: str,
    member: str = "",
    mention: str = "",
    typed_reads: bool = False,
) -> Uses:
    """The experiment's uses of `outer.member` (a method of class `outer`, or a function
    `member` when `outer` is ""), or of class `outer` itself when `member` is "". Only
    modules that name `mention` (default: `outer`; for a nested `Trainer.Config`, the
    enclosing `Trainer`) are read: one that never names it cannot depend on it.
    `typed_reads`: an attribute counts only on what holds an instance of the class (a
    field named `name` is not read by `node.name`)."""
    if not outer:
        outer = member
    mention = mention or outer
    found = Uses()
    elsewhere = _own_callables(modules, outer)
    kin = _subclasses(modules, outer) | _subclasses(modules, mention)
    # The experiment's own callables: `_own_callables` says which take their own keywords.
    defined = _defined_names(modules)
    for path, tree in modules.items():
        names_class = mention in pyast.identifiers(tree)
        if not names_class:
            continue
        originals = _bound_to(tree, outer, member) if member else set()
        held = _instances(tree, outer, mention, kin) if typed_reads and not member else None
        bare = originals | ({member} if outer == member else set())  # a function by its name
        for node in pyast.walk(tree):
            where = f"{path}:{getattr(node, 'lineno', 0)}"
            if (
                isinstance(node, ast.ClassDef)
                and member
                and any(ast.unparse(base).rsplit(".", 1)[-1] == outer for base in node.bases)
            ):
                for child in node.body:
                    if (
                        isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
                        and child.name == member
                    ):
                        found.overrides.append(f"{path}:{child.lineno}")
            elif isinstance(node, ast.Assign) and member:
                for target in node.targets:
                    if (
                        isinstance(target, ast.Attribute)
                        and target.attr == member
                        and ast.unparse(target.value).rsplit(".", 1)[-1] == outer
                    ):
                        passes = _passes_through(node.value, outer, member, originals)
                        (found.wraps if passes else found.patches).append(where)
                if isinstance(node.targets[0], ast.Tuple) and _calls_member(
                    node.value, member, bare
                ):
                    found.unpacks.append((where, len(node.targets[0].elts)))
            if isinstance(node, ast.Call):
                keywords = given(node)
                if member and _calls_member(node, member, bare):
                    found.calls.append((where, len(node.args), keywords))
                callee = ast.unparse(node.func).rsplit(".", 1)[-1]
                elsewhere_nested = mention != outer and nested_elsewhere(node, mention, modules)
                if not member and callee == outer and not elsewhere_nested:
                    found.constructions.append((where, len(node.args), keywords))
                if callee in elsewhere or elsewhere_nested:
                    continue  # `Own(x=1)`: the experiment's own `x`, whatever upstream's is
                if callee[:1].isupper() and callee not in (outer, mention, *kin, *defined):
                    continue  # `Adam(lr=…)`: another library class's own parameter
                for keyword in node.keywords:
                    if keyword.arg:  # its own line: a call can span twenty
                        at = f"{path}:{getattr(keyword, 'lineno', node.lineno)}"
                        found.names.setdefault(keyword.arg, []).append(at)
                        if isinstance(keyword.value, ast.Constant):
                            found.values.setdefault(keyword.arg, set()).add(
                                ast.unparse(keyword.value)
                            )
            elif isinstance(node, ast.Attribute):
                if held is not None and ast.unparse(node.value) not in held:
                    continue
                found.names.setdefault(node.attr, []).append(where)
                if isinstance(node.ctx, ast.Load):
                    found.reads.add(node.attr)
    return found


def _instances(tree: ast.Module, outer: str, mention: str, kin: frozenset[str]) -> set[str]:
    """What holds the class or an instance of it in one module, as source: the class
    itself, names and `self.x` bound to a construction, parameters annotated with it, and
    `self` in a subclass. Scope is the module: a name bound so anywhere counts."""
    spelled = f"{mention}.{outer}" if mention != outer else outer
    own = re.compile(rf"(?<![\w.])(\w+\.)*{re.escape(spelled)}(?!\w)")

    def is_class(expr: ast.expr) -> bool:
        text = ast.unparse(expr)
        return bool(own.fullmatch(text)) or text.rsplit(".", 1)[-1] in kin

    def typed(annotation: ast.expr | None) -> bool:
        return annotation is not None and bool(own.search(ast.unparse(annotation)))

    held = {spelled, outer}
    for node in pyast.walk(tree):
        if isinstance(node, ast.ClassDef) and any(is_class(base) for base in node.bases):
            held.add("self")
        elif isinstance(node, ast.arg) and typed(node.annotation):
            held.add(node.arg)
        elif isinstance(node, ast.AnnAssign) and typed(node.annotation):
            held.add(ast.unparse(node.target))
        elif (
            isinstance(node, ast.withitem)
            and node.optional_vars is not None
            and isinstance(node.context_expr, ast.Call)
            and is_class(node.context_expr.func)
        ):
            held.add(ast.unparse(node.optional_vars))
    # Bindings from a construction or from what already holds one, to a fixpoint
    # (`cfg = C(); self.cfg = cfg`).
    assigns = [node for node in pyast.walk(tree) if isinstance(node, ast.Assign)]
    grew = True
    while grew:
        grew = False
        for node in assigns:
            value = node.value
            holds = (isinstance(value, ast.Call) and is_class(value.func)) or (
                ast.unparse(value) in held
            )
            if not holds:
                continue
            for target in node.targets:
                text = ast.unparse(target)
                if isinstance(target, ast.Name | ast.Attribute) and text not in held:
                    held.add(text)
                    grew = True
    return held


def _own_callables(modules: dict[str, ast.Module], outer: str) -> set[str]:
    """Names of the experiment's own classes and functions whose keywords are their own:
    not `outer` or a subclass of it, and not forwarding `**kwargs` anywhere. A name it
    defines twice in different ways is not among them (scout cannot tell which is called)."""
    kinds: dict[str, set[bool]] = {}
    for tree in modules.values():
        # Classes at any depth (`Trainer.Config`); functions at the top only: a method
        # called on an object may be upstream's method of the same name.
        top = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
        for node in [*pyast.nodes(tree, ast.ClassDef), *top]:
            if isinstance(node, ast.ClassDef):
                bases = {ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases}
                own = node.name != outer and outer not in bases and not _forwards(node)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                own = node.args.kwarg is None
            else:
                continue
            kinds.setdefault(node.name, set()).add(own)
    return {name for name, own in kinds.items() if own == {True}}


def _forwards(node: ast.ClassDef) -> bool:
    """A class whose `__init__` or `__new__` takes `**kwargs` may hand them on."""
    return any(
        isinstance(child, ast.FunctionDef) and child.args.kwarg is not None
        for child in node.body
        if isinstance(child, ast.FunctionDef) and child.name in ("__init__", "__new__")
    )


def _original(node: ast.expr, outer: str, member: str, originals: set[str]) -> bool:
    """`Outer.member` itself, or a name bound to it (`orig = Outer.member`)."""
    if isinstance(node, ast.Name):
        return node.id in originals
    return (
        isinstance(node, ast.Attribute)
        and node.attr == member
        and ast.unparse(node.value).rsplit(".", 1)[-1] == outer
    )


def _bound_to(tree: ast.Module, outer: str, member: str) -> set[str]:
    """Names a module binds to the original method: `orig = Outer.member`."""
    return {
        target.id
        for node in pyast.nodes(tree, ast.Assign)
        if isinstance(node, ast.Assign) and _original(node.value, outer, member, set())
        for target in node.targets
        if isinstance(target, ast.Name)
    }


def _passes_through(value: ast.expr, outer: str, member: str, originals: set[str]) -> bool:
    """Whether a patch's value is the original method, or the original handed as the only
    argument to a wrapper (`wrap(Outer.member)`, `annotate(...)(Outer.member)`): callers'
    arguments and its result pass through, so its parameters are nobody's here. A
    `partial(Outer.member, x=1)` binds a parameter: not a pass-through."""
    while isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords:
        value = value.args[0]
    return _original(value, outer, member, originals)


def _calls_member(node: ast.AST, member: str, bare: set[str]) -> bool:
    """`x.member(...)`, or a bare-name call of what `bare` names: the function itself, or
    for a method only a name bound to it (`orig = Outer.member`) — a local `forward(...)`
    is not `Outer.forward`."""
    return isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Attribute) and node.func.attr == member)
        or (isinstance(node.func, ast.Name) and node.func.id in bare)
    )


@dataclass(frozen=True)
class Dependence:
    change: Change
    because: str  # "overridden at p:12", "called positionally at p:30 (4 arguments)", …
    # Today's tree still uses what is gone (a removed name it names, a tuple it unpacks at
    # the old size): broken whatever the commit that made the change did to the experiment.
    broken: bool = False


def depended_on(
    changes: list[Change], uses: Uses, old_positions: dict[str, int], old_arity: set[int]
) -> list[Dependence]:
    """The changes the experiment depends on. `old_positions`: each parameter's position in
    the old signature as a caller counts them (a method's `self` not counted);
    `old_arity`: the tuple sizes it returned."""
    found = []
    for change in changes:
        because = _because(change, uses, old_positions, old_arity)
        if because:
            found.append(Dependence(change, because, _still_used(change, uses, old_arity)))
    return found


def _still_used(change: Change, uses: Uses, old_arity: set[int]) -> bool:
    """Whether today's tree names what a change took away, or unpacks the old tuple."""
    if isinstance(change, Removed):
        return change.name in uses.names or any(change.name in kw for _, _, kw in uses.calls)
    if isinstance(change, ReturnsChanged):
        return any(n in old_arity for _, n in uses.unpacks)
    return False


def _because(
    change: Change, uses: Uses, old_positions: dict[str, int], old_arity: set[int]
) -> str | None:
    """How the experiment depends on one change; None: it does not."""
    reshaped = uses.overrides or uses.patches
    overridden = "overridden" if uses.overrides else "patched"
    if isinstance(change, Named) and change.subject == "parameter":
        if reshaped:
            return _where(overridden, uses.overrides or uses.patches)
        return _called_with(change, uses, old_positions.get(change.name))
    if isinstance(change, Named) and change.subject == "field":
        return _field_used(change, uses, old_positions)
    if isinstance(change, Removed):  # a property or a method
        places = uses.names.get(change.name)
        return _where(f"`{change.name}` used", places) if places else None
    if isinstance(change, Added):
        return None
    if isinstance(change, ReturnsChanged):
        if reshaped:
            return _where(overridden, uses.overrides or uses.patches)
        unpacked = [(w, n) for w, n in uses.unpacks if n in old_arity]
        if unpacked:
            return f"its result unpacked into {unpacked[0][1]} names at {unpacked[0][0]}"
        return None
    return "a change of kind scout cannot judge"  # never silently dropped


def _called_with(change: Named, uses: Uses, position: int | None) -> str | None:
    """A parameter's change, against the calls the experiment makes."""
    name = change.name
    if isinstance(change, DefaultChanged):
        # A new default reaches a call that leaves the parameter out; one that passes it,
        # by name or position, is immune (as a config built with the field is).
        left_out = [
            where
            for where, positional, keywords in uses.calls
            if name not in keywords
            and SPLAT not in keywords
            and (position is None or positional <= position)
        ]
        return _where(f"called without `{name}`", left_out) if left_out else None
    if isinstance(change, Added):
        return _called_without(change, uses)
    for where, positional, keywords in uses.calls:
        if name in keywords:
            return f"called with `{name}=` at {where}"
        if position is not None and positional > position:
            return f"called with {positional} positional arguments at {where}"
    return None


def _called_without(change: Added, uses: Uses) -> str | None:
    """A new parameter breaks a call that must now pass it and does not, or one whose
    positional arguments it now stands between; a new one with a default at the end of
    what the call passes breaks nothing."""
    for where, positional, keywords in uses.calls:
        if change.name in keywords:
            return f"called with `{change.name}=` at {where}"  # needs an upstream that has it
        if SPLAT in keywords:
            continue
        if change.position is not None and positional > change.position:
            return f"called with {positional} positional arguments at {where}"
        if change.required and change.kind != "*args":
            return f"called without `{change.name}` at {where}"
    return None


def _field_used(change: Named, uses: Uses, old_positions: dict[str, int]) -> str | None:
    """A field's change, against how the experiment builds, sets and reads the class."""
    name = change.name
    if isinstance(change, TypeChanged) and change.widened:
        return None  # widened to a base class: whatever the experiment passes still fits
    if isinstance(change, ValuesChanged):
        # Only a value taken away can break a config that still sets it.
        gone = [v for v in change.removed if v in uses.values.get(name, ())]
        if gone and name in uses.names:
            return _where(f"`{name}` set to {gone[0]}", uses.names[name])
        return None
    if isinstance(change, DefaultChanged):
        # A default reaches the experiment where it builds one without the field, or reads
        # it from objects it never builds; setting it everywhere is immune.
        position = old_positions.get(name, 1 << 30)
        omitted = [
            where
            for where, positional, kw in uses.constructions
            if name not in kw and SPLAT not in kw and positional <= position
        ]
        if omitted:
            return _where(f"built without `{name}`", omitted)
        if not uses.constructions and name in uses.reads:
            return _where(f"`{name}` read", uses.names[name])
        return None
    if isinstance(change, TypeChanged):
        # An annotation alone changes no value the experiment reads; it bites a setter
        # whose value the new annotation no longer admits.
        misfit = [
            v
            for v in sorted(uses.values.get(name, ()))
            if admits(change.before, v) is True and admits(change.after, v) is False
        ]
        if misfit and name in uses.names:
            return _where(f"`{name}` set to {misfit[0]}", uses.names[name])
        return None
    if not isinstance(change, Added) and name in uses.names:
        return _where(f"`{name}` used", uses.names[name])
    return None


def _where(what: str, places: list[str]) -> str:
    more = f" (+{len(places) - 1} more)" if len(places) > 1 else ""
    return f"{what} at {places[0]}{more}"
