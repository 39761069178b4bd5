"""GitHub's REST JSON shapes for the local server's world: a user, a comment, an issue or
pull request, a workflow, a run, a job, the rate limit — as GitHub writes them."""

from __future__ import annotations

from datetime import datetime

from scout_tui.sandbox.github.world import (
    Account,
    Comment,
    Issue,
    Job,
    Repository,
    Run,
    Workflow,
    World,
    now,
)


def stamp(moment: datetime | None) -> str | None:
    return moment.isoformat().replace("+00:00", "Z") if moment else None


def user_json(world: World, login: str, base: str) -> dict:
    account = world.account(login) or Account(login=login, id=0)
    return {
        "login": account.login,
        "id": account.id,
        "node_id": account.node_id,
        "type": account.type,
        "site_admin": False,
        "url": f"{base}/users/{account.login}",
        "html_url": f"{base}/{account.login}",
    }


def comment_json(world: World, repo: Repository, issue: Issue, comment: Comment, base: str) -> dict:
    html = f"{base}/{repo.full_name}/issues/{issue.number}#issuecomment-{comment.id}"
    return {
        "id": comment.id,
        "node_id": f"IC_kwDO{comment.id}",
        "body": comment.body,
        "user": user_json(world, comment.user, base),
        "html_url": html,
        "url": f"{base}/repos/{repo.full_name}/issues/comments/{comment.id}",
        "issue_url": f"{base}/repos/{repo.full_name}/issues/{issue.number}",
        "created_at": stamp(comment.created_at),
        "updated_at": stamp(comment.updated_at),
        "author_association": "MEMBER",
    }


def issue_json(world: World, repo: Repository, issue: Issue, base: str) -> dict:
    kind = "pull" if issue.pull else "issues"
    data = {
        "id": issue.id,
        "node_id": f"I_kwDO{issue.id}",
        "number": issue.number,
        "title": issue.title,
        "body": issue.body,
        "state": issue.state,
        "user": user_json(world, issue.user, base),
        "labels": [{"name": n} for n in issue.labels],
        "comments": len(issue.comments),
        "created_at": stamp(issue.created_at),
        "updated_at": stamp(issue.updated_at),
        "closed_at": stamp(issue.closed_at),
        "url": f"{base}/repos/{repo.full_name}/issues/{issue.number}",
        "html_url": f"{base}/{repo.full_name}/{kind}/{issue.number}",
        "repository_url": f"{base}/repos/{repo.full_name}",
        "draft": issue.draft,
    }
    if issue.pull:
        data["pull_request"] = {
            "url": f"{base}/repos/{repo.full_name}/pulls/{issue.number}",
            "merged_at": stamp(issue.merged_at),
        }
    return data


def pull_json(world: World, repo: Repository, issue: Issue, base: str) -> dict:
    data = issue_json(world, repo, issue, base)
    data.update(
        {
            "url": f"{base}/repos/{repo.full_name}/pulls/{issue.number}",
            "merged": issue.merged_at is not None,
            "merged_at": stamp(issue.merged_at),
            "requested_reviewers": [user_json(world, r, base) for r in issue.requested_reviewers],
            "head": {"sha": issue.head_sha, "ref": f"branch-{issue.number}"},
            "base": {"ref": repo.default_branch, "sha": "0" * 40},
        }
    )
    return data


def workflow_json(repo: Repository, workflow: Workflow, base: str) -> dict:
    return {
        "id": workflow.id,
        "node_id": f"W_kwDO{workflow.id}",
        "name": workflow.name,
        "path": workflow.path,
        "state": workflow.state,
        "url": f"{base}/repos/{repo.full_name}/actions/workflows/{workflow.id}",
        "html_url": f"{base}/{repo.full_name}/blob/main/{workflow.path}",
        "badge_url": f"{base}/{repo.full_name}/workflows/{workflow.name}/badge.svg",
        "created_at": stamp(now()),
        "updated_at": stamp(now()),
    }


def run_json(repo: Repository, run: Run, base: str) -> dict:
    api = f"{base}/repos/{repo.full_name}/actions/runs/{run.id}"
    return {
        "id": run.id,
        "name": next((w.name for w in repo.workflows if w.id == run.workflow_id), ""),
        "node_id": f"WFR_kwLO{run.id}",
        "head_branch": run.head_branch,
        "head_sha": run.head_sha,
        "event": run.event,
        "status": run.status,
        "conclusion": run.conclusion,
        "workflow_id": run.workflow_id,
        "run_number": run.run_number,
        "run_attempt": 1,
        "created_at": stamp(run.created_at),
        "updated_at": stamp(run.updated_at),
        "run_started_at": stamp(run.created_at),
        "url": api,
        "html_url": f"{base}/{repo.full_name}/actions/runs/{run.id}",
        "jobs_url": f"{api}/jobs",
        "logs_url": f"{api}/logs",
        "workflow_url": f"{base}/repos/{repo.full_name}/actions/workflows/{run.workflow_id}",
        "repository": {"full_name": repo.full_name, "id": repo.id},
    }


def job_json(repo: Repository, run: Run, job: Job, base: str) -> dict:
    return {
        "id": job.id,
        "run_id": run.id,
        "name": job.name,
        "status": job.status,
        "conclusion": job.conclusion,
        "head_sha": run.head_sha,
        "started_at": stamp(job.started_at),
        "completed_at": stamp(job.completed_at),
        "url": f"{base}/repos/{repo.full_name}/actions/jobs/{job.id}",
        "html_url": f"{base}/{repo.full_name}/actions/runs/{run.id}/job/{job.id}",
        "run_url": f"{base}/repos/{repo.full_name}/actions/runs/{run.id}",
        "steps": [],
    }


def rate_limit_json(world: World) -> dict:
    core = {
        "limit": 5000,
        "remaining": world.rate_limit,
        "used": 5000 - world.rate_limit,
        "reset": int(now().timestamp()) + 3600,
    }
    return {
        "resources": {"core": core, "search": {**core, "limit": 30}, "graphql": core},
        "rate": core,
    }
