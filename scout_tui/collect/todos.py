"""TODO unblock detection (SPEC §2.1 item 2).

Every TODO/FIXME/HACK/XXX in the experiment's Python files, found fresh each run. Those
with an upstream reference or a named API get a finding each; the rest (owned or plain)
are one FYI list, so forty TODOs do not become forty findings.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import git

from scout_tui.analysis.python.experiment_tests import disabled_entries, skipped_tests
from scout_tui.analysis.python.torch_api import TorchIndex
from scout_tui.analysis.text.markdown import code
from scout_tui.analysis.text.todos import Reference, Todo, find_todos
from scout_tui.collect.base import (
    Collector,
    CollectorContext,
    Kind,
    Lifetime,
    Need,
    Progress,
    Unchecked,
)
from scout_tui.errors import scrub
from scout_tui.github.api import GitHubError, IssueState, RateLimited, as_of
from scout_tui.model import Evidence, FileRef, Finding, Section, fingerprint

BLAME_PROCESSES = 4


@dataclass(frozen=True)
class Blame:
    author: str
    when: datetime
    commit: str


def _blame_all(
    ctx: CollectorContext, found: list[tuple[str, list[Todo]]], replayed: dict
) -> dict[str, dict[int, Blame]]:
    """Author and date of each TODO line, from the forward pass over history; a file the
    pass cannot vouch for (edited in the work tree, merges) gets `git blame`."""
    head = ctx.head_commit
    result: dict[str, dict[int, Blame]] = {}
    fallback = []
    for path, todos in found:
        origins = replayed.get(path)
        text = ctx.source.read(path) or ""
        committed = ctx.source.read_at(head, path) if head else None
        lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
        if origins is None or committed != text or len(origins) != lines:
            fallback.append((path, todos))
            continue
        result[path] = {
            todo.line: Blame(
                origins[todo.line - 1].author,
                datetime.fromtimestamp(origins[todo.line - 1].time, UTC),
                origins[todo.line - 1].commit,
            )
            for todo in todos
        }
    # `git blame` is a process per file and waits on disk: a few at once.
    with ThreadPoolExecutor(max_workers=BLAME_PROCESSES) as pool:
        futures = [
            pool.submit(_blame, ctx, path, [t.line for t in todos]) for path, todos in fallback
        ]
        for (path, _), future in zip(fallback, futures, strict=True):
            result[path] = future.result()
    return result


def _blame(ctx: CollectorContext, path: str, lines: list[int]) -> dict[int, Blame]:
    """Author and date of each line, from one `git blame` per file."""
    args = ["--line-porcelain"]
    for line in lines:
        args += ["-L", f"{line},{line}"]
    try:  # a process of its own: no need to hold the source tree's lock
        out = ctx.source.repo.git.blame(*args, "--", path)
    except git.GitCommandError:
        return {}
    result: dict[int, Blame] = {}
    author, when, final, sha = "", None, 0, ""
    for row in out.splitlines():
        if row and len(row.split(" ")[0]) == 40 and not row.startswith("\t"):
            fields = row.split(" ")
            sha = fields[0]
            if len(fields) >= 3 and fields[2].isdigit():
                final = int(fields[2])
        elif row.startswith("author "):
            author = scrub(row[7:])  # git output: may hold a token or escapes
        elif row.startswith("author-time "):
            when = datetime.fromtimestamp(int(row[12:]), UTC)
        elif row.startswith("\t") and when is not None:
            result[final] = Blame(author, when, sha)
    return result


_GUARD = re.compile(
    r"hasattr\(|getattr\([^)]*,\s*None\)|\bis (?:not )?None\b|"
    r"except\s*\(?\s*(?:ImportError|AttributeError|ModuleNotFoundError)|__version__"
)
GUARD_LINES = 5


def _nearby(ctx: CollectorContext, todo: Todo) -> str:
    lines = ctx.source.lines(todo.path)
    return "\n".join(lines[max(0, todo.line - 1 - GUARD_LINES) : todo.line + GUARD_LINES])


def _days(delta: timedelta) -> str:
    return "1 day" if delta.days == 1 else f"{delta.days} days"


def _age(ctx: CollectorContext, origin: Blame, logins: dict[str, str]) -> str:
    """As of the run's day; unknown for a line from where a shallow clone's history is cut.
    A commit of the day can hold lines authored after it (a rebase, a cherry-pick: git keeps
    the author's date): those have no age as of then. The author by GitHub login when known
    (in code, so the report pings nobody)."""
    who = code("@" + logins[origin.commit]) if origin.commit in logins else origin.author
    if origin.commit in ctx.shallow_roots:  # written at the cut or before it
        return f"age unknown (shallow clone), by {who}"
    if origin.when >= ctx.until:
        return f"added after {ctx.as_of.isoformat()}, by {who}"
    return f"{_days(ctx.until - origin.when)} old, by {who}"


def _logins(ctx: CollectorContext, commits: list[str]) -> dict[str, str]:
    """Commit → GitHub login of its author, as torchtitan's own todo_debt_tracker maps them
    (a commit never changes: the client keeps each answer for good)."""
    if ctx.github is None:
        return {}
    found = {}
    for commit in dict.fromkeys(c for c in commits if c):
        try:
            login = ctx.github.commit_author(ctx.config.project.repo, commit)
        except RateLimited:
            raise  # the collector is skipped: asking on would only hit the limit again
        except GitHubError:
            continue  # not pushed, or GitHub does not know the author: the git name stays
        if login:
            found[commit] = login
    return found


def _short(ctx: CollectorContext, path: str) -> str:
    """The path inside the experiment: `graph_pp/utils.py`, not a bare `utils.py`."""
    prefix = ctx.config.project.experiment.rstrip("/") + "/"
    return path[len(prefix) :] if path.startswith(prefix) else path


def _item(ctx: CollectorContext, todo: Todo) -> str:
    """A readable, line-free name for one TODO inside a grouped finding."""
    text = " ".join(todo.text.split())
    suffix = f" #{todo.ordinal + 1}" if todo.ordinal else ""
    return f"{_short(ctx, todo.path)}: {text[:60]}{suffix}"


def _items(ctx: CollectorContext, todos: list[Todo]) -> list[str]:
    """One item per TODO: two whose shortened words are the same (they differ past the cut)
    are told apart by their order in the file, so the count of items is the count of TODOs."""
    named: dict[str, int] = {}
    items = []
    for todo in sorted(todos, key=lambda t: (t.path, t.line)):
        item = _item(ctx, todo)
        named[item] = named.get(item, 0) + 1
        items.append(item if named[item] == 1 else f"{item} (#{named[item]} alike)")
    return sorted(items)


def _related(blocked: list[tuple[Finding, Todo, str]], own_repo: str) -> list[list[Finding]]:
    """Blocked TODOs that are one piece of work: those waiting on the same thing, and those
    one author wrote in one file that say they wait ("once", "until") on upstream (another
    repository's) issues — related as far as the cached data can tell, which has no links
    between issues."""
    parent = list(range(len(blocked)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first_of: dict[tuple[str, ...], int] = {}
    for index, (finding, todo, author) in enumerate(blocked):
        keys = [("waits", *finding.items)]
        upstream = all(item.split("#", 1)[0] != own_repo for item in finding.items)
        if author and upstream and todo.waits:
            keys.append(("by", finding.files[0].path, author))
        for key in keys:
            parent[root(index)] = root(first_of.setdefault(key, index))
    groups: dict[int, list[Finding]] = {}
    for index, (finding, _, _) in enumerate(blocked):
        groups.setdefault(root(index), []).append(finding)
    return list(groups.values())


def _one_blocker(group: list[Finding]) -> Finding:
    """TODOs in several places waiting on the same thing (or on related upstream issues):
    one finding naming every place, under the first one's key (the others' markers still
    match)."""
    first = group[0]
    places = ", ".join(
        code(f"{f.files[0].path.rsplit('/', 1)[-1]}:{f.files[0].line}") for f in group
    )
    items = list(dict.fromkeys(item for f in group for item in f.items))
    return first.model_copy(
        update={
            "title": f"{len(group)} TODOs blocked on {', '.join(items)}: {places}",
            "body": "\n\n".join(f.body for f in group),
            "items": items,
            "files": [file for f in group for file in f.files],
            "aliases": sorted({*first.aliases, *(f.fingerprint for f in group[1:])}),
        }
    )


def _key(todo: Todo) -> tuple[str, ...]:
    return (todo.path, todo.key_text, str(todo.ordinal))


def _awaits_api(ctx: CollectorContext, todo: Todo) -> bool:
    """An awaited API counts only beside code that feature-detects it (a fallback for older
    torch); a name merely mentioned in a TODO is context, not a blocker."""
    return bool(todo.apis) and _GUARD.search(_nearby(ctx, todo)) is not None


def _context(ctx: CollectorContext, todo: Todo) -> str:
    lines = ctx.source.lines(todo.path)
    around = ctx.config.todos.context_lines
    start = max(0, todo.line - 1 - around)
    end = min(len(lines), todo.line + around + 3)
    return "\n".join(f"{n + 1:>5} {lines[n]}" for n in range(start, end))


class TodoCollector(Collector):
    name = "todos"
    title = "TODO unblock detection"
    section = Section.ACTION_ITEMS
    shares, cost = "history", 10  # cost: tenths of a second on torchtitan, measured
    needs = frozenset({Need.REPO})
    kinds = (
        Kind("todo_blocked"),
        Kind("todo_blocked_test"),
        Kind("todo_unblocked", Lifetime.NEWS, follows_up=True),
        Kind("todo_api_available"),
        Kind("todo_unclassified"),
        Kind("todo_upstream_unlinked"),
    )
    # It reads GitHub when it can (blocker states, authors' logins): then it runs in a thread
    # of the parent process, never in a forked one.
    uses_github = True

    def collect(self, ctx: CollectorContext) -> Iterator[Finding | Progress | Unchecked]:
        markers = ctx.config.todos.markers
        torch = TorchIndex(ctx.torch_root) if ctx.torch_root else None
        candidates = [
            path
            for path in ctx.source.glob(ctx.config.project.experiment, "*.py")
            if any(marker in (ctx.source.read(path) or "") for marker in markers)
        ]
        # History is read by git processes while this thread tokenizes: start it first.
        with ThreadPoolExecutor(max_workers=1) as pool:
            head = ctx.head_commit
            replay = pool.submit(ctx.source.blame_many, candidates, head) if head else None
            found = self._find(ctx, candidates)
            replayed = replay.result() if replay else {}
        blames = _blame_all(ctx, found, replayed)
        logins = _logins(ctx, [b.commit for lines in blames.values() for b in lines.values()])
        fyi: list[tuple[Todo, str, bool]] = []  # the TODO, its age, written in the window
        blocked: list[tuple[Finding, Todo, str]] = []  # each with its author
        for done, (path, todos) in enumerate(found, 1):
            blame = blames.get(path, {})
            for todo in todos:
                origin = blame.get(todo.line)
                age = _age(ctx, origin, logins) if origin else ""
                finding = self._finding(ctx, todo, torch, age)
                if finding is None and torch is None and _awaits_api(ctx, todo):
                    # Only torch could say whether the API is there now: neither found nor gone.
                    yield Unchecked(_key(todo), ("todo_api_available",))
                if finding is None:
                    fyi.append(
                        (
                            todo,
                            age,
                            origin is not None
                            and origin.when >= ctx.since
                            and origin.commit not in ctx.shallow_roots,
                        )
                    )
                elif finding.kind == "todo_blocked":
                    blocked.append((finding, todo, origin.author if origin else ""))
                else:
                    yield finding
            if done % 10 == 0:
                yield Progress(self.name, done, len(found), path)
        reasons = _switch_reasons(ctx, {todo.path for _, todo, _ in blocked})
        todo_of = {f.fingerprint: todo for f, todo, _ in blocked}
        for group in _related(blocked, ctx.config.project.repo):
            finding = group[0] if len(group) == 1 else _one_blocker(group)
            if all(_is_switch_reason(todo_of[f.fingerprint], reasons) for f in group):
                # The reason a test is switched off: the switched-off tests say it (and a
                # blocker that closes is still news, `todo_unblocked`).
                key = _key(todo_of[group[0].fingerprint])
                finding = finding.model_copy(
                    update={
                        "kind": "todo_blocked_test",
                        "fingerprint": fingerprint("todo_blocked_test", *key),
                        "aliases": sorted({*finding.aliases, finding.fingerprint}),
                    }
                )
            yield finding
        upstream = [entry for entry in fyi if entry[0].upstream]
        others = [entry for entry in fyi if not entry[0].upstream]
        if upstream:
            yield self._fyi_list(
                ctx,
                upstream,
                torch is None,
                "todo_upstream_unlinked",
                "TODOs waiting on upstream with no link to what",
            )
        if others:
            yield self._fyi_list(ctx, others, torch is None)

    @staticmethod
    def _find(ctx: CollectorContext, paths: list[str]) -> list[tuple[str, list[Todo]]]:
        config = ctx.config.todos
        found = []
        for path in paths:
            text = ctx.source.read(path) or ""
            todos = find_todos(
                path,
                text,
                ctx.source.parse(path),
                config.markers,
                config.bare_ref_repo,
                config.named_refs,
            )
            if todos:
                found.append((path, todos))
        return found

    def _finding(
        self, ctx: CollectorContext, todo: Todo, torch: TorchIndex | None, age: str
    ) -> Finding | None:
        ref = FileRef(path=todo.path, line=todo.line)
        short = _short(ctx, todo.path)
        key = _key(todo)
        evidence = Evidence(context=_context(ctx, todo))
        where = f"{code(todo.path)}" + (f" ({age})" if age else "")
        if todo.references:
            refs = ", ".join(str(r) for r in todo.references)
            evidence.urls = [f"{ctx.web_url}/{r.repo}/issues/{r.number}" for r in todo.references]
            states = [(r, *_state(ctx, r)) for r in todo.references]
            merged = [(r, s) for r, s, _ in states if s is not None and s.merged]
            if merged:
                names = ", ".join(
                    f"{r} (merged {s.merged_at:%Y-%m-%d})" for r, s in merged if s.merged_at
                )
                return ctx.finding(
                    self.name,
                    "todo_unblocked",
                    key,
                    f"TODO in {code(short)} likely unblocked: {refs} merged",
                    f"{where} waits on {names}.\n\n{code(todo.text)}",
                    suggested_fix="Check that the merged change is in the nightly the "
                    "experiment uses, then drop the workaround (or re-word the TODO if more "
                    "is missing).",
                    files=[ref],
                    items=[str(r) for r in todo.references],
                    evidence=evidence,
                    aliases=[fingerprint("todo_blocked", *key)],  # what it was until the merge
                )
            said = "; ".join(_said(r, s, why) for r, s, why in states)
            # What the TODO says broke it is context, never what it waits on.
            broke = (
                f" It names {', '.join(str(c) for c in todo.causes)} as what broke it."
                if todo.causes
                else ""
            )
            return ctx.finding(
                self.name,
                "todo_blocked",
                key,
                f"TODO in {code(short)} blocked on {refs}",
                f"{where} waits on {said}.{broke}\n\n{code(todo.text)}",
                files=[ref],
                items=[str(r) for r in todo.references],
                evidence=evidence,
            )
        index = torch if torch is not None and _awaits_api(ctx, todo) else None
        present = [api for api in todo.apis if index is not None and index.has_name(api)]
        if present:
            names = ", ".join(code(api) for api in present)
            return ctx.finding(
                self.name,
                "todo_api_available",
                key,
                f"TODO in {code(short)} likely unblocked: the installed torch has {names}",
                f"{where} waits for {names}, which the installed torch "
                f"(`{ctx.torch_root}`) now defines:\n\n{code(todo.text)}",
                suggested_fix="Drop the workaround and use the upstream API, or bump the "
                "minimum nightly.",
                files=[ref],
                items=present,
                evidence=evidence,
            )
        return None

    def _fyi_list(
        self,
        ctx: CollectorContext,
        todos: list[tuple[Todo, str, bool]],
        no_torch: bool,
        kind: str = "todo_unclassified",
        what: str = "TODOs with no upstream blocker",
    ) -> Finding:
        """One line a day for a group of TODOs: their count, and only those written since
        the baseline (the same text in several places: one line). The TODOs that wait on
        an upstream project without a link ("once the PyTorch nightly includes…") are a
        group of their own: blocked upstream, and a link would let scout follow them."""
        owned = sum(1 for todo, _, _ in todos if todo.owner)
        places: dict[str, list[tuple[Todo, str]]] = {}
        for todo, age, new in todos:
            if new:
                places.setdefault(todo.text, []).append((todo, age))
        lines = []
        for text, where in places.items():
            todo, age = where[0]
            who = f"owned by {todo.owner}" if todo.owner else "no owner"
            spots = ", ".join(code(f"{t.path}:{t.line}") for t, _ in where)
            lines.append(f"- {spots} ({who}{', ' + age if age else ''}): {code(text[:120])}")
        count = f"{len(todos)} {what} ({owned} with a named owner)"
        fresh = sum(len(where) for where in places.values())
        title = (
            f"{count}: {fresh} new {ctx.since_words()}"
            if fresh
            else f"{count}, none new {ctx.since_words()}"
        )
        body = (
            ("Written since the baseline:\n\n" + "\n".join(lines))
            if lines
            else f"None of them was written {ctx.since_words()}."
        )
        if kind == "todo_upstream_unlinked":
            body += (
                "\n\nA link to the upstream issue or PR (`pytorch/pytorch#N`) lets scout "
                "say when it lands."
            )
        older = [todo for todo, _, new in todos if not new]
        if older:
            # Where they are, in one line: enough to check the count, not a list to re-read.
            spots = ", ".join(code(f"{t.path.rsplit('/', 1)[-1]}:{t.line}") for t in older[:12])
            more = f" and {len(older) - 12} more" if len(older) > 12 else ""
            body += (
                f"\n\n{len(older)} older one{'s' if len(older) != 1 else ''}, unchanged: "
                f"{spots}{more}."
            )
        note = f"\n\nNamed APIs not checked: skipped — {ctx.torch_reason}." if no_torch else ""
        experiment = ctx.config.project.experiment
        return ctx.finding(
            self.name,
            kind,
            (experiment,),
            title,
            body + note,
            files=[
                FileRef(path=t.path, line=t.line) for where in places.values() for t, _ in where
            ],
            items=_items(ctx, [todo for todo, _, _ in todos]),
        )


def _state(ctx: CollectorContext, reference: Reference) -> tuple[IssueState | None, str]:
    """The referenced pull request's or issue's state, or why it is unknown."""
    if ctx.github is None:
        return None, f"not looked up: {ctx.github_reason}"
    try:
        return as_of(ctx.github.issue_state(reference.repo, reference.number), ctx.until), ""
    except RateLimited:
        raise
    except GitHubError as exc:
        return None, f"not looked up: {exc}"


def _said(reference: Reference, state: IssueState | None, why: str) -> str:
    if state is None:
        return f"{reference} ({why})"
    kind = "pull request" if state.is_pull else "issue"
    if state.state == "open":
        return f"{reference}, an open {kind}"
    closed = f" on {state.closed_at:%Y-%m-%d}" if state.closed_at else ""
    verb = "closed without merging" if state.is_pull else "closed"
    return f"{reference}, a {kind} {verb}{closed}: the TODO may need another way"


def _switch_reasons(ctx: CollectorContext, paths: set[str]) -> dict[str, list[str]]:
    """Per file, the reasons its switched-off tests give (the comment above the switch, the
    skip's message), whitespace folded."""
    found: dict[str, list[str]] = {}
    for path in paths:
        text, tree = ctx.source.read(path) or "", ctx.source.parse(path)
        off = [*disabled_entries(path, text, tree), *skipped_tests(path, tree, text)]
        found[path] = [" ".join(d.reason.split()).lower() for d in off if d.reason]
    return found


def _is_switch_reason(todo: Todo, reasons: dict[str, list[str]]) -> bool:
    """Whether a TODO's words are what a switched-off test gives as its reason."""
    words = re.sub(r"^(?:TODO|FIXME|HACK|XXX)(?:\([^)]*\))?:?\s*", "", todo.text, flags=re.I)
    said = " ".join(words.split()).lower()[:60]
    return bool(said) and any(said in reason for reason in reasons.get(todo.path, []))
