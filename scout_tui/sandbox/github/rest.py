"""The REST endpoints of the local server, in GitHub's JSON shapes: the user, rate limit,
issues and their comments (edit: author only, 403 otherwise, as GitHub), search, pull
requests and reviews, workflows, runs, jobs, and job logs (a 302 to a plain-text URL)."""

from __future__ import annotations

import functools
import operator
import re
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from scout_tui.sandbox.github.responses import Response, paginate
from scout_tui.sandbox.github.rest_json import (
    comment_json,
    issue_json,
    job_json,
    pull_json,
    rate_limit_json,
    run_json,
    stamp,
    user_json,
    workflow_json,
)
from scout_tui.sandbox.github.world import (
    Comment,
    Issue,
    Repository,
    Run,
    Token,
    Workflow,
    World,
    now,
)

DOCS = "https://docs.github.com/rest"
# GitHub refuses a comment body longer than this (characters, not bytes).
BODY_LIMIT = 65_536
Query = dict[str, list[str]]


def _not_found() -> Response:
    return Response(404, {"message": "Not Found", "documentation_url": DOCS})


_DATES = {
    "merged": "merged_at",
    "updated": "updated_at",
    "created": "created_at",
    "closed": "closed_at",
}


def _date_filter(value: str) -> Callable[[datetime | None], bool] | None:
    """`>=2026-12-01`, `<2026-11-19T06:00:00Z` and the like, as GitHub's search takes them."""
    for op in (">=", "<=", ">", "<"):
        if value.startswith(op):
            try:
                when = datetime.fromisoformat(value[len(op) :].replace("Z", "+00:00"))
            except ValueError:
                return None
            if when.tzinfo is None:
                when = when.replace(tzinfo=now().tzinfo)
            compare = {">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt}[op]
            return functools.partial(_compared, compare, when)
    return None


def _compared(
    compare: Callable[[datetime, datetime], bool], when: datetime, moment: datetime | None
) -> bool:
    return moment is not None and compare(moment, when)


def _search(world: World, terms: str) -> list[tuple[Repository, Issue]]:
    """GitHub's issue search, for what scout asks: repo:, is:pr / is:issue, is:open /
    is:closed / is:merged, merged: / updated: / created: / closed: dates, words."""
    repos, kind, state, merged, words = [], None, None, False, []
    dates: list[tuple[str, Callable[[datetime | None], bool]]] = []
    for term in terms.split():
        key, _, value = term.partition(":")
        if key in _DATES and (test := _date_filter(value)) is not None:
            dates.append((_DATES[key], test))
        elif key == "repo" and value:
            repos.append(value.lower())
        elif key == "is" and value in ("pr", "issue"):
            kind = value
        elif key == "is" and value in ("open", "closed"):
            state = value
        elif key == "is" and value == "merged":
            merged = True
        elif key in ("in", "sort", "order", "type"):
            continue
        else:
            words.append(term.lower())
    found = []
    for repo in world.repositories:
        if repos and repo.full_name.lower() not in repos:
            continue
        for issue in repo.issues:
            if (kind == "pr" and not issue.pull) or (kind == "issue" and issue.pull):
                continue
            if (state and issue.state != state) or (merged and issue.merged_at is None):
                continue
            if not all(test(getattr(issue, attribute)) for attribute, test in dates):
                continue
            text = f"{issue.title}\n{issue.body}".lower()
            if all(word in text for word in words):
                found.append((repo, issue))
    return found


Handler = Callable[..., Response]
_ROUTES: list[tuple[str, re.Pattern[str], Handler]] = []


def _route(method: str, pattern: str) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        _ROUTES.append((method, re.compile("^" + pattern + "$"), handler))
        return handler

    return register


REPO = r"/repos/(?P<repo>[^/]+/[^/]+)"


def route(
    world: World, token: Token, method: str, path: str, query: Query, payload: Any, base: str
) -> Response:
    path = path.rstrip("/") or "/"
    if path.startswith("/api/v3/"):  # GitHub Enterprise's prefix
        path = path[len("/api/v3") :]
    for verb, pattern, handler in _ROUTES:
        match = pattern.match(path)
        if match and verb == method:
            args = match.groupdict()
            if "repo" in args:
                repo = world.repository(args.pop("repo"))
                if repo is None:
                    return _not_found()
                args["repo"] = repo
            return handler(
                world=world,
                token=token,
                query=query,
                payload=payload,
                base=base,
                url=f"{base}{path}",
                **args,
            )
    if any(pattern.match(path) for _, pattern, _ in _ROUTES):
        return Response(404, {"message": "Not Found", "documentation_url": DOCS})
    return _not_found()


@_route("GET", "/user")
def get_user(world: World, token: Token, base: str, **_: Any) -> Response:
    if token.installation:
        return Response(
            403,
            {
                "message": "Resource not accessible by integration",
                "documentation_url": f"{DOCS}/users/users",
            },
        )
    return Response(200, {**user_json(world, token.login, base), "name": token.login})


@_route("GET", "/rate_limit")
def get_rate_limit(world: World, **_: Any) -> Response:
    return Response(200, rate_limit_json(world), cost=False)


@_route("GET", REPO)
def get_repo(world: World, repo: Repository, base: str, **_: Any) -> Response:
    owner = repo.full_name.split("/")[0]
    return Response(
        200,
        {
            "id": repo.id,
            "node_id": f"R_kgDO{repo.id}",
            "full_name": repo.full_name,
            "name": repo.full_name.split("/")[1],
            "owner": user_json(world, owner, base),
            "private": repo.private,
            "default_branch": repo.default_branch,
            "url": f"{base}/repos/{repo.full_name}",
            "html_url": f"{base}/{repo.full_name}",
        },
    )


def _issue_or_404(repo: Repository, number: str) -> Issue | None:
    return repo.issue(int(number))


@_route("GET", REPO + r"/issues/(?P<number>\d+)")
def get_issue(world: World, repo: Repository, number: str, base: str, **_: Any) -> Response:
    issue = _issue_or_404(repo, number)
    return Response(200, issue_json(world, repo, issue, base)) if issue else _not_found()


@_route("GET", REPO + r"/issues/(?P<number>\d+)/comments")
def list_comments(
    world: World, repo: Repository, number: str, query: Query, base: str, url: str, **_: Any
) -> Response:
    issue = _issue_or_404(repo, number)
    if issue is None:
        return _not_found()
    comments = issue.comments
    if query.get("since"):
        since = datetime.fromisoformat(query["since"][0].replace("Z", "+00:00"))
        comments = [c for c in comments if c.updated_at >= since]
    return paginate([comment_json(world, repo, issue, c, base) for c in comments], query, url)


@_route("POST", REPO + r"/issues/(?P<number>\d+)/comments")
def create_comment(
    world: World, token: Token, repo: Repository, number: str, payload: Any, base: str, **_: Any
) -> Response:
    issue = _issue_or_404(repo, number)
    if issue is None:
        return _not_found()
    if not _can_write(token):
        return _forbidden()
    body = payload.get("body") if isinstance(payload, dict) else None
    if not isinstance(body, str) or not body.strip():
        return Response(
            422,
            {
                "message": "Validation Failed",
                "errors": [{"resource": "IssueComment", "code": "missing_field", "field": "body"}],
            },
        )
    if len(body) > BODY_LIMIT:
        return _too_long()
    comment = Comment(id=world.new_id(), user=token.login, body=body)
    issue.comments.append(comment)
    issue.updated_at = comment.created_at
    return Response(201, comment_json(world, repo, issue, comment, base))


def _find_comment(repo: Repository, comment_id: str) -> tuple[Issue, Comment] | None:
    for issue in repo.issues:
        for comment in issue.comments:
            if comment.id == int(comment_id):
                return issue, comment
    return None


@_route("GET", REPO + r"/issues/comments/(?P<comment_id>\d+)")
def get_comment(world: World, repo: Repository, comment_id: str, base: str, **_: Any) -> Response:
    found = _find_comment(repo, comment_id)
    return Response(200, comment_json(world, repo, *found, base)) if found else _not_found()


@_route("PATCH", REPO + r"/issues/comments/(?P<comment_id>\d+)")
def edit_comment(
    world: World, token: Token, repo: Repository, comment_id: str, payload: Any, base: str, **_: Any
) -> Response:
    found = _find_comment(repo, comment_id)
    if found is None:
        return _not_found()
    issue, comment = found
    if comment.user != token.login:  # GitHub: only the author (or an admin) edits
        return Response(
            403,
            {"message": "Must be the author of the comment to edit it.", "documentation_url": DOCS},
        )
    body = payload.get("body") if isinstance(payload, dict) else None
    if not isinstance(body, str) or not body.strip():
        return Response(422, {"message": "Validation Failed"})
    if len(body) > BODY_LIMIT:
        return _too_long()
    comment.body, comment.updated_at = body, now()
    return Response(200, comment_json(world, repo, issue, comment, base))


@_route("DELETE", REPO + r"/issues/comments/(?P<comment_id>\d+)")
def delete_comment(
    world: World, token: Token, repo: Repository, comment_id: str, **_: Any
) -> Response:
    found = _find_comment(repo, comment_id)
    if found is None:
        return _not_found()
    issue, comment = found
    if comment.user != token.login:
        return Response(
            403,
            {
                "message": "Must be the author of the comment to delete it.",
                "documentation_url": DOCS,
            },
        )
    issue.comments.remove(comment)
    return Response(204, None)


def _too_long() -> Response:
    return Response(
        422,
        {
            "message": "Validation Failed",
            "errors": [
                {
                    "resource": "IssueComment",
                    "code": "unprocessable",
                    "field": "data",
                    "message": f"Body is too long (maximum is {BODY_LIMIT} characters)",
                }
            ],
            "documentation_url": f"{DOCS}/issues/comments",
        },
    )


def _can_write(token: Token) -> bool:
    return token.scopes is None or bool({"repo", "public_repo"} & set(token.scopes))


def _forbidden() -> Response:
    return Response(
        403,
        {"message": "Resource not accessible by personal access token", "documentation_url": DOCS},
    )


@_route("GET", "/search/issues")
def search_issues(world: World, query: Query, base: str, url: str, **_: Any) -> Response:
    found = _search(world, (query.get("q") or [""])[0])
    items = [issue_json(world, repo, issue, base) for repo, issue in found]
    return paginate(
        items,
        query,
        url,
        wrap=lambda chunk: {"total_count": len(items), "incomplete_results": False, "items": chunk},
    )


@_route("GET", REPO + r"/commits/(?P<sha>[0-9a-f]{7,40})")
def get_commit(world: World, repo: Repository, sha: str, base: str, **_: Any) -> Response:
    full = next((known for known in repo.commit_authors if known.startswith(sha)), None)
    if full is None:
        return Response(
            422, {"message": f"No commit found for SHA: {sha}", "documentation_url": DOCS}
        )
    login = repo.commit_authors[full]
    return Response(
        200,
        {
            "sha": full,
            "author": user_json(world, login, base),
            "commit": {"author": {"name": login}},
            "html_url": f"{base}/{repo.full_name}/commit/{full}",
        },
    )


@_route("GET", REPO + r"/compare/(?P<old>[0-9a-f]{7,40})\.\.\.(?P<new>[0-9a-f]{7,40})")
def compare(world: World, repo: Repository, old: str, new: str, base: str, **_: Any) -> Response:
    """The commits reachable from `new` and not from `old` (a linear history here)."""

    def at(sha: str) -> int | None:
        return next((n for n, known in enumerate(repo.history) if known.startswith(sha)), None)

    first, last = at(old), at(new)
    if first is None or last is None:
        return Response(404, {"message": "Not Found", "documentation_url": DOCS})
    ahead = max(0, last - first)
    return Response(
        200,
        {
            "status": "ahead" if ahead else "identical",
            "ahead_by": ahead,
            "behind_by": 0,
            "total_commits": ahead,
            "html_url": f"{base}/{repo.full_name}/compare/{old}...{new}",
        },
    )


@_route("GET", REPO + r"/pulls/(?P<number>\d+)")
def get_pull(world: World, repo: Repository, number: str, base: str, **_: Any) -> Response:
    issue = _issue_or_404(repo, number)
    if issue is None or not issue.pull:
        return _not_found()
    return Response(200, pull_json(world, repo, issue, base))


@_route("GET", REPO + r"/pulls/(?P<number>\d+)/reviews")
def list_reviews(
    world: World, repo: Repository, number: str, query: Query, base: str, url: str, **_: Any
) -> Response:
    issue = _issue_or_404(repo, number)
    if issue is None or not issue.pull:
        return _not_found()
    reviews = [
        {
            "id": r.id,
            "user": user_json(world, r.user, base),
            "state": r.state,
            "submitted_at": stamp(r.submitted_at),
        }
        for r in issue.reviews
    ]
    return paginate(reviews, query, url)


@_route("GET", REPO + r"/actions/workflows")
def list_workflows(
    world: World, repo: Repository, query: Query, base: str, url: str, **_: Any
) -> Response:
    items = [workflow_json(repo, w, base) for w in repo.workflows]
    return paginate(
        items, query, url, wrap=lambda chunk: {"total_count": len(items), "workflows": chunk}
    )


def _workflow_by(repo: Repository, key: str) -> Workflow | None:
    return next(
        (w for w in repo.workflows if str(w.id) == key or w.path.rsplit("/", 1)[-1] == key), None
    )


@_route("GET", REPO + r"/actions/workflows/(?P<key>[^/]+)")
def get_workflow(world: World, repo: Repository, key: str, base: str, **_: Any) -> Response:
    workflow = _workflow_by(repo, key)
    return Response(200, workflow_json(repo, workflow, base)) if workflow else _not_found()


@_route("GET", REPO + r"/actions/workflows/(?P<key>[^/]+)/runs")
def list_runs(
    world: World, repo: Repository, key: str, query: Query, base: str, url: str, **_: Any
) -> Response:
    workflow = _workflow_by(repo, key)
    if workflow is None:
        return _not_found()
    runs = [r for r in repo.runs if r.workflow_id == workflow.id]
    for name, attribute in (("branch", "head_branch"), ("event", "event")):
        if query.get(name):
            runs = [r for r in runs if getattr(r, attribute) == query[name][0]]
    if query.get("status"):
        wanted = query["status"][0]
        runs = [r for r in runs if wanted in (r.status, r.conclusion)]
    runs.sort(key=lambda r: r.created_at, reverse=True)  # newest first, as GitHub
    items = [run_json(repo, r, base) for r in runs]
    return paginate(
        items, query, url, wrap=lambda chunk: {"total_count": len(items), "workflow_runs": chunk}
    )


def _run_by(repo: Repository, run_id: str) -> Run | None:
    return next((r for r in repo.runs if r.id == int(run_id)), None)


@_route("GET", REPO + r"/actions/runs/(?P<run_id>\d+)")
def get_run(world: World, repo: Repository, run_id: str, base: str, **_: Any) -> Response:
    run = _run_by(repo, run_id)
    return Response(200, run_json(repo, run, base)) if run else _not_found()


@_route("GET", REPO + r"/actions/runs/(?P<run_id>\d+)/jobs")
def list_jobs(
    world: World, repo: Repository, run_id: str, query: Query, base: str, url: str, **_: Any
) -> Response:
    run = _run_by(repo, run_id)
    if run is None:
        return _not_found()
    items = [job_json(repo, run, job, base) for job in run.jobs]
    return paginate(
        items, query, url, wrap=lambda chunk: {"total_count": len(items), "jobs": chunk}
    )


@_route("GET", REPO + r"/actions/jobs/(?P<job_id>\d+)")
def get_job(world: World, repo: Repository, job_id: str, base: str, **_: Any) -> Response:
    for run in repo.runs:
        for job in run.jobs:
            if job.id == int(job_id):
                return Response(200, job_json(repo, run, job, base))
    return _not_found()


@_route("GET", REPO + r"/actions/jobs/(?P<job_id>\d+)/logs")
def job_logs(world: World, repo: Repository, job_id: str, base: str, **_: Any) -> Response:
    for run in repo.runs:
        if any(job.id == int(job_id) for job in run.jobs):
            # GitHub answers with a short-lived URL of the plain-text log.
            return Response(302, None, {"Location": f"{base}/_logs/{job_id}"})
    return _not_found()


def job_log(world: World, path: str) -> Response:
    job_id = path.rsplit("/", 1)[-1]
    for repo in world.repositories:
        for run in repo.runs:
            for job in run.jobs:
                if str(job.id) == job_id:
                    if job.log_file:
                        return Response(200, Path(job.log_file), cost=False)
                    return Response(200, job.log, cost=False)
    return Response(404, "Not Found", cost=False)
