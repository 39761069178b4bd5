"""Python read with `ast`: parsing (depth-checked), finding a definition, properties, public
names, imports, and results derived from a tree kept as long as the tree lives
(`per_tree`, and kept in the cache dir by blob id when the tree came from one: see
`Module`). Pure functions over parsed modules; a definition's shape is `shapes.py`'s."""

from __future__ import annotations

import ast
import functools
import hashlib
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

Definition = ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef

# Deeper trees are refused: recursive walks (`ast.unparse`, helpers here) take a few stack
# frames a level, and Python's stack is never raised for a hostile file. Real modules nest
# well under 100 (a 2,500-file survey of site-packages: 87 at most).
MAX_DEPTH = 150


class Unparsable(Exception):
    """A file `ast` cannot take; the message says why, in a few words."""


def parse(text: str, filename: str = "<unknown>") -> ast.Module:
    """The module's tree, or Unparsable: invalid Python, NUL bytes, or nested too deeply
    for the parser or for the recursive walks that read the tree afterwards."""
    return _checked(text, filename, "exec")  # type: ignore[return-value]


class FactKeeper(Protocol):
    """Where the results of `per_tree` analyses are kept by blob id from run to run (the
    cache dir's `source.facts.FileFacts`)."""

    def get(self, blob: str, key: str) -> Any:
        """The kept value, or MISSING."""

    def put(self, blob: str, key: str, value: Any) -> None: ...


MISSING: Any = object()  # what a FactKeeper answers for a fact it does not hold
_LOADING = threading.Lock()


class Module(ast.Module):
    """A module whose blob was parsed by an earlier run: it is parsed again only when
    something looks into it (its `body`). Every `per_tree` answer kept for its blob is read
    without that, so a rescan at an unchanged tree parses only what no kept answer covers."""

    def __getattr__(self, name: str) -> Any:
        if name not in ("body", "type_ignores"):
            raise AttributeError(name)
        with _LOADING:
            if "body" not in self.__dict__:
                try:
                    tree = self.__dict__["_scout_load"]()
                except Unparsable:  # it parsed when its facts were kept: another Python
                    tree = ast.Module([], [])
                self.body, self.type_ignores = tree.body, tree.type_ignores
                del self.__dict__["_scout_load"]  # (kept until loaded: an interrupt retries)
                index = _INDEX.pop(tree, None)  # the depth check's walk indexed it
                if index is not None:
                    _INDEX[self] = index
        return self.__dict__[name]


def kept_module(blob: str, keeper: FactKeeper, load: Callable[[], ast.Module]) -> Module:
    """A module of this blob, parsed by `load` when first looked into."""
    module = Module.__new__(Module)  # no __init__: `body` stays unset until it is loaded
    module.__dict__.update(_scout_load=load, _scout_blob=blob, _scout_facts=keeper)
    return module


def keep_facts_of(tree: ast.Module, blob: str, keeper: FactKeeper) -> ast.Module:
    """`tree` (parsed from `blob`), its `per_tree` answers kept by `keeper`."""
    tree.__dict__.update(_scout_blob=blob, _scout_facts=keeper)
    return tree


def parse_expression(text: str) -> ast.expr | None:
    """An expression written in a string (an annotation), or None when `ast` cannot take it."""
    try:
        return _checked(text, "<annotation>", "eval").body  # type: ignore[attr-defined]
    except Unparsable:
        return None


def _checked(text: str, filename: str, mode: str) -> ast.AST:
    try:
        tree = ast.parse(text, filename=filename, mode=mode)
    except SyntaxError as exc:
        where = f", line {exc.lineno}" if exc.lineno else ""
        raise Unparsable(f"not valid Python ({exc.msg}{where})") from None
    except ValueError:  # NUL bytes, on Pythons that do not call them a SyntaxError
        raise Unparsable("not valid Python (it holds NUL bytes)") from None
    except RecursionError:
        raise Unparsable("nested too deeply for Python's parser") from None
    except MemoryError:
        raise Unparsable("too big for Python's parser") from None
    if not _index_within(tree, MAX_DEPTH):
        raise Unparsable(f"nested more than {MAX_DEPTH} levels deep")
    return tree


def find(tree: ast.Module | None, qualname: str) -> Definition | None:
    """`Outer.Inner.method` → its node, following classes and functions by name."""
    if tree is None:
        return None
    scope: list[ast.stmt] = tree.body
    node: Definition | None = None
    for part in qualname.split("."):
        node = next(
            (child for child in scope if isinstance(child, Definition) and child.name == part),
            None,
        )
        if node is None:
            return None
        scope = node.body
    return node


def source_of(text: str, node: ast.AST) -> str:
    """The whole lines a definition spans (cheaper than ast.get_source_segment, which
    splits the entire module on every call)."""
    first, last = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
    if first is None or last is None:
        return ""
    start = 0
    for _ in range(first - 1):
        start = text.find("\n", start) + 1
        if start == 0:
            return ""
    end = start
    for _ in range(last - first + 1):
        found = text.find("\n", end)
        end = len(text) if found < 0 else found + 1
    return text[start:end]


def _decorator_names(node: Definition) -> set[str]:
    names = set()
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        names.add(ast.unparse(target).rsplit(".", 1)[-1])
    return names


def properties(node: ast.ClassDef) -> set[str]:
    return {
        child.name
        for child in node.body
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
        and _decorator_names(child) & {"property", "cached_property"}
    }


def public_methods(node: ast.ClassDef) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    return {
        child.name: child
        for child in node.body
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
        and not child.name.startswith("_")
    }


def child_statements(statement: ast.stmt) -> list[ast.stmt]:
    """The statements a compound statement holds (its body, else, finally and handlers)."""
    return [
        child
        for field in ("body", "orelse", "finalbody", "handlers")
        for child in getattr(statement, field, []) or []
        if isinstance(child, ast.stmt)
    ]


def is_constructor(node: ast.FunctionDef | ast.AsyncFunctionDef, cls: str = "") -> bool:
    """An alternate constructor: a class- or staticmethod that builds the class (`cls(...)`,
    `C(...)`) or is annotated to return it (`-> "C"`, `-> Self`). One that computes
    something else is a helper, not a way to build one."""
    decorators = _decorator_names(node)
    if "classmethod" not in decorators and "staticmethod" not in decorators:
        return False
    returns = ast.unparse(node.returns).strip("'\"") if node.returns is not None else ""
    if returns.rsplit(".", 1)[-1] in {"Self", cls} - {""}:
        return True
    first = node.args.args[0].arg if node.args.args else ""
    builders = {first, cls} - {""} if "classmethod" in decorators else {cls} - {""}
    return any(isinstance(n, ast.Call) and ast.unparse(n.func) in builders for n in ast.walk(node))


@dataclass(frozen=True)
class Import:
    module: str
    name: str  # "" for `import module`
    asname: str | None
    line: int


# Derived facts are memoized per parsed tree: several collectors ask questions of the same
# module, and a walk over a 2,000-line module is not free. One walk indexes every node by
# type; the questions below read the index.
_INDEX: weakref.WeakKeyDictionary[ast.Module, dict[type, list[ast.AST]]] = (
    weakref.WeakKeyDictionary()
)


# tree → key → (weak references to the key's trees, files read, result)
_DERIVED: weakref.WeakKeyDictionary[ast.AST, dict[tuple[Any, ...], tuple[Any, ...]]] = (
    weakref.WeakKeyDictionary()
)
_DERIVED_LOCK = threading.Lock()


def per_tree(function: F) -> F:
    """`function` computed once per parsed tree (or node) and arguments, kept as long as the
    tree lives. A tree is shared by every run that reads its blob (the BlobStore), so a
    replay reads what an unchanged file says once, not once a day. Trees in the arguments
    (alone or as a dict's values) count by identity, and are held weakly; lists and dicts
    by content. The result is shared: no caller may change it."""

    @functools.wraps(function)
    def kept(*args: Any) -> Any:
        keyed = _key_of(function, args)
        if keyed is None:  # no tree, or an argument that cannot be a key: computed, not kept
            return function(*args)
        key, trees = keyed
        known = _known(key, trees)
        if known is not None:
            return known[1]
        fact = _fact_of(function, args, trees)
        if fact is not None:
            keeper, blob, name = fact
            found = keeper.get(blob, name)
            if found is not MISSING:
                _keep(key, trees, (), found)
                return found
        found = function(*args)
        _keep(key, trees, (), found)
        if fact is not None:
            keeper.put(blob, name, found)
        return found

    return kept  # type: ignore[return-value]


def per_tree_read(function: F) -> F:
    """`per_tree` for `function(*args, parse)`, where `parse(path)` gives a file's tree: a
    result is reused when the arguments are the same and `parse` gives the same trees for
    every path the first call asked it for (the same blobs: nothing it read changed)."""

    @functools.wraps(function)
    def kept(*args: Any) -> Any:
        *given, parse = args
        keyed = _key_of(function, given)
        if keyed is None:
            return function(*args)
        key, trees = keyed
        known = _known(key, trees)
        if known is not None and all(_same(parse(path), ref) for path, ref in known[0]):
            return known[1]
        read: dict[str, ast.Module | None] = {}

        def traced(path: str) -> ast.Module | None:
            tree = parse(path)
            read.setdefault(path, tree)
            return tree

        # Kept across runs with the blob each path gave: reused while every path still
        # gives the same blob (reading a file and hashing it, not parsing it).
        fact = _fact_of(function, given, trees)
        if fact is not None:
            keeper, blob, name = fact
            stored = keeper.get(blob, name)
            if type(stored) is tuple and len(stored) == 2 and type(stored[0]) is tuple:
                blobs, found = stored
                if all(_blob_of(traced(path)) == was for path, was in blobs):
                    _keep(key, trees, _refs(read), found)
                    return found
                read.clear()
        found = function(*given, traced)
        _keep(key, trees, _refs(read), found)
        blobs = tuple((path, _blob_of(tree)) for path, tree in read.items())
        if fact is not None and all(was != "" for _, was in blobs):
            keeper.put(blob, name, (blobs, found))
        return found

    return kept  # type: ignore[return-value]


class _NotByBlob(Exception):
    """An argument that does not name what it is by content (a tree without a blob id, an
    object): the call's answer is kept in memory only."""


def _fact_of(
    function: Callable[..., Any], args: Sequence[Any], trees: list[ast.AST]
) -> tuple[FactKeeper, str, str] | None:
    """(keeper, blob, fact name) under which this call's answer is kept across runs: the
    function and its arguments, trees named by blob id; None when it cannot be."""
    keeper = trees[0].__dict__.get("_scout_facts")
    if keeper is None:
        return None
    try:
        named = repr(tuple(_by_blob(arg) for arg in args))
    except _NotByBlob:
        return None
    digest = hashlib.sha256(named.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    name = f"{function.__module__}.{function.__qualname__}:{digest}"
    # An answer about several trees has a row of its own: a module's row would otherwise
    # gather every day's combination of the others.
    blobs = {tree.__dict__.get("_scout_blob") for tree in trees}
    row = trees[0].__dict__["_scout_blob"] if len(blobs) == 1 else f"of:{digest}"
    return keeper, row, name


_PLAIN = (str, int, float, bool, type(None))


def _by_blob(arg: Any) -> Any:
    if isinstance(arg, ast.AST):
        blob = arg.__dict__.get("_scout_blob")
        if blob is None:
            raise _NotByBlob
        return ("blob", blob)
    kind = type(arg)
    if kind in _PLAIN:
        return arg
    if kind is dict:
        return ("dict", *((_by_blob(k), _by_blob(v)) for k, v in arg.items()))
    if kind is list or kind is tuple:
        return (kind.__name__, *map(_by_blob, arg))
    if kind is set or kind is frozenset:
        return (kind.__name__, *sorted(repr(_by_blob(item)) for item in arg))
    params = getattr(kind, "__dataclass_params__", None)
    if params is not None and params.frozen:  # a value object: named by its fields
        fields = [_by_blob(getattr(arg, name)) for name in kind.__dataclass_fields__]
        return (f"{kind.__module__}.{kind.__qualname__}", *fields)
    raise _NotByBlob


def _blob_of(tree: ast.Module | None) -> str | None:
    """The blob a tree was parsed from; None for no tree, "" when it is not known."""
    return None if tree is None else tree.__dict__.get("_scout_blob", "")


def _refs(read: dict[str, ast.Module | None]) -> tuple[Any, ...]:
    return tuple((path, None if tree is None else weakref.ref(tree)) for path, tree in read.items())


def _key_of(function: Callable[..., Any], args: Sequence[Any]) -> tuple[Any, list[ast.AST]] | None:
    """The memo key of a call and the trees in its arguments; None when there is no tree or
    an argument cannot be part of a key."""
    trees: list[ast.AST] = []
    try:
        key = (function, *(_frozen(arg, trees) for arg in args))
        hash(key)
    except TypeError:
        return None
    return (key, trees) if trees else None


def _known(key: Any, trees: list[ast.AST]) -> tuple[Any, Any] | None:
    """(files read, result) kept for `key`, when each tree of the key is still the one it
    was kept for."""
    with _DERIVED_LOCK:
        known = _DERIVED.get(trees[0], {}).get(key)
    if known is None:
        return None
    refs, reads, result = known
    if not all(ref() is tree for ref, tree in zip(refs, trees, strict=True)):
        return None
    return reads, result


def _keep(key: Any, trees: list[ast.AST], reads: Any, result: Any) -> None:
    with _DERIVED_LOCK:
        _DERIVED.setdefault(trees[0], {})[key] = (tuple(map(weakref.ref, trees)), reads, result)


def _same(tree: ast.Module | None, ref: weakref.ref[ast.Module] | None) -> bool:
    if ref is None:
        return tree is None
    return tree is not None and ref() is tree


def _frozen(arg: Any, trees: list[ast.AST]) -> Any:
    """`arg` as part of a key: a tree by identity (and noted in `trees`), containers by
    content."""
    if isinstance(arg, ast.AST):
        trees.append(arg)
        return ("tree", id(arg))
    if isinstance(arg, dict):
        return ("dict", *((k, _frozen(v, trees)) for k, v in arg.items()))
    if isinstance(arg, list | tuple):
        return (type(arg).__name__, *(_frozen(item, trees) for item in arg))
    if isinstance(arg, set | frozenset):
        return ("set", *sorted(map(repr, arg)))
    return arg


_STATEMENT_INDEX: weakref.WeakKeyDictionary[ast.Module, dict[type, list[ast.AST]]] = (
    weakref.WeakKeyDictionary()
)
_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


# Fields that never hold a node, and `ctx` (Load/Store/Del: a marker, nothing to read).
_LEAF_FIELDS = frozenset({"ctx", "id", "attr", "arg", "name", "module", "level", "kind"})
_LEAF_FIELDS |= {"type_comment", "is_async", "conversion", "simple"}
_NODE_FIELDS: dict[type, tuple[str, ...]] = {}


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """`ast.iter_child_nodes` without expression contexts, as a list: the walks below take
    a third fewer nodes and no generator per node (most of a collection's time in `ast`)."""
    kind = type(node)
    fields = _NODE_FIELDS.get(kind)
    if fields is None:
        fields = _NODE_FIELDS[kind] = tuple(f for f in kind._fields if f not in _LEAF_FIELDS)
    found: list[ast.AST] = []
    for name in fields:
        value = getattr(node, name, None)
        if type(value) is list:
            found.extend(item for item in value if isinstance(item, ast.AST))
        elif isinstance(value, ast.AST):
            found.append(value)
    return found


def walk(node: ast.AST) -> Iterator[ast.AST]:
    """Every node under `node` (itself first), in `ast.walk`'s breadth-first order, without
    expression contexts."""
    level = [node]
    while level:
        yield from level
        level = [child for parent in level for child in child_nodes(parent)]


def _statements(tree: ast.Module) -> list[ast.AST]:
    """The module and every statement in it, nested ones included, without descending into
    expressions: a fraction of a full `ast.walk`."""
    found: list[ast.AST] = [tree]
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        for name in _BODIES:
            children = getattr(node, name, None)
            if children:
                found.extend(child for child in children if isinstance(child, ast.stmt))
                stack.extend(children)
    return found


def _index_within(tree: ast.AST, limit: int) -> bool:
    """Whether the tree nests at most `limit` levels. The walk, level by level, visits
    nodes in `ast.walk`'s order: its index is kept, so a later `nodes` walks nothing."""
    index: dict[type, list[ast.AST]] = {}
    level: list[ast.AST] = [tree]
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return False
        for node in level:
            if node is not tree:  # (a tree in its own index, a weak key's value, never dies)
                index.setdefault(type(node), []).append(node)
        level = [child for node in level for child in child_nodes(node)]
    if isinstance(tree, ast.Module):
        _INDEX[tree] = index
    return True


def nodes(tree: ast.Module | None, *types: type[ast.AST]) -> list[ast.AST]:
    """All nodes of these types in the tree, from one memoized walk. Statement types (and
    the module) come from a walk over statements only; expression types need the full one."""
    if tree is None:
        return []
    statements_only = all(issubclass(kind, ast.stmt | ast.Module) for kind in types)
    cache = _STATEMENT_INDEX if statements_only else _INDEX
    index = cache.get(tree)
    if index is None:
        index = {}
        for node in _statements(tree) if statements_only else walk(tree):
            if node is not tree:  # the index is the tree's weak key's value: not the tree
                index.setdefault(type(node), []).append(node)
        cache[tree] = index

    def of(kind: type[ast.AST]) -> list[ast.AST]:
        return [tree] if kind is type(tree) or kind is ast.Module else index.get(kind, [])

    if len(types) == 1:
        return of(types[0])
    return [node for kind in types for node in of(kind)]


@per_tree
def public_names(tree: ast.Module | None) -> frozenset[str]:
    """Top-level public functions and classes."""
    if tree is None:
        return frozenset()
    return frozenset(
        node.name
        for node in tree.body
        if isinstance(node, Definition) and not node.name.startswith("_")
    )


@per_tree
def definition_of(tree: ast.Module, qualname: str) -> tuple[str, int] | None:
    """What `qualname` is in the module (`find`'s way) and its line: ("class", 3),
    ("def", 10), ("async def", 12); None when the module does not define it."""
    node = find(tree, qualname)
    if node is None:
        return None
    kind = {ast.ClassDef: "class", ast.FunctionDef: "def"}.get(type(node), "async def")
    return kind, node.lineno


@per_tree
def identifiers(tree: ast.Module | None) -> frozenset[str]:
    """Every name the module mentions: names, attributes, imported names (last part), and
    the functions and classes it defines."""
    if tree is None:
        return frozenset()
    found = {n.id for n in nodes(tree, ast.Name) if isinstance(n, ast.Name)}
    found |= {n.attr for n in nodes(tree, ast.Attribute) if isinstance(n, ast.Attribute)}
    found |= {(i.asname or i.name or i.module).rsplit(".", 1)[-1] for i in imports(tree)}
    found |= {
        n.name
        for n in nodes(tree, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        if isinstance(n, Definition)
    }
    return frozenset(found)


@per_tree
def imports(tree: ast.Module | None) -> list[Import]:
    """Every import in the module, nested ones included, in source order."""
    if tree is None:
        return []
    found = []
    for node in nodes(tree, ast.ImportFrom, ast.Import):
        if isinstance(node, ast.ImportFrom) and node.module:
            found += [Import(node.module, a.name, a.asname, node.lineno) for a in node.names]
        elif isinstance(node, ast.Import):
            found += [Import(a.name, "", a.asname, node.lineno) for a in node.names]
    found.sort(key=lambda item: item.line)
    return found


def import_map(tree: ast.Module | None) -> dict[str, str]:
    """Local name → dotted origin, from the module's `from x import y [as z]` imports."""
    return {
        item.asname or item.name: f"{item.module}.{item.name}"
        for item in imports(tree)
        if item.name
    }
