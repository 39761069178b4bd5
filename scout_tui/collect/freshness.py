"""Code freshness and technical debt (SPEC §2.1 item 4).

Monkey-patches against the current upstream signature, private torch APIs (and whether
the installed torch now has a public name for them), duplicated logic between configured
file pairs, and how the config converter treats each base-config field.
"""

from __future__ import annotations

from collections.abc import Iterator

from scout_tui.analysis.python import shapes
from scout_tui.analysis.python.freshness import (
    Patch,
    monkey_patches,
    private_imports,
    public_candidates,
    signature_mismatch,
    similar_functions,
    still_reached,
    torch_attributes,
    upstream_signature,
)
from scout_tui.analysis.python.torch_api import TorchIndex
from scout_tui.analysis.text.markdown import code
from scout_tui.collect.base import Collector, CollectorContext, Kind, Need, Progress, Unchecked
from scout_tui.collect.config_converter import config_conflicts, config_drift
from scout_tui.model import Evidence, FileRef, Finding, Section


def _module_path(ctx: CollectorContext, dotted_module: str) -> str | None:
    base = dotted_module.replace(".", "/")
    for candidate in (f"{base}.py", f"{base}/__init__.py"):
        if ctx.source.exists(candidate):
            return candidate
    return None


class FreshnessCollector(Collector):
    name = "freshness"
    title = "Code freshness and technical debt"
    section = Section.ACTION_ITEMS
    shares, cost = "experiment", 5  # cost: tenths of a second on torchtitan, measured
    needs = frozenset({Need.REPO})
    kinds = (
        Kind("stale_monkey_patch"),
        Kind("monkey_patch_stable"),
        Kind("private_api"),
        Kind("private_api_public_alt"),
        Kind("duplicated_logic"),
        Kind("config_drift"),
        Kind("config_overrides"),
        Kind("config_conflict"),
        Kind("config_mismatch"),
    )

    def collect(self, ctx: CollectorContext) -> Iterator[Finding | Progress | Unchecked]:
        config = ctx.config
        tests_dir = config.experiment_path(config.ci.tests_dir) + "/"
        files = [
            p
            for p in ctx.source.glob(config.project.experiment, "*.py")
            if not p.startswith(tests_dir)
        ]
        yield Progress(self.name, 1, 4, "monkey-patches")
        stable: list[Finding] = []
        for path in files:
            for patch in monkey_patches(path, ctx.source.parse(path)):
                finding = self._patch(ctx, patch)
                if isinstance(finding, Unchecked):
                    yield finding
                elif finding is not None and finding.kind == "monkey_patch_stable":
                    stable.append(finding)
                elif finding is not None:
                    yield finding
        if stable:  # an inventory: one All Clear line, not one per patch every day
            titles = list(dict.fromkeys(f.title.removesuffix(" patch") for f in stable))
            yield ctx.finding(
                self.name,
                "monkey_patch_stable",
                (config.project.experiment,),
                f"{len(titles)} monkey-patch{'es' if len(titles) != 1 else ''} of upstream "
                "still fit",
                "Each wraps the original or matches the upstream signature: "
                + ", ".join(code(t) for t in titles)
                + ".",
                files=[file for f in stable for file in f.files][:50],
                items=sorted(titles),
            )
        yield Progress(self.name, 2, 4, "private APIs")
        yield from self._private(ctx, files)
        yield Progress(self.name, 3, 4, "duplicated logic")
        for left, right in config.freshness.duplicate_pairs:
            finding = self._duplicates(ctx, left, right)
            if finding is not None:
                yield finding
        yield Progress(self.name, 4, 4, "config drift")
        yield from config_conflicts(ctx, self.name)
        finding = config_drift(ctx, self.name)
        if finding is not None:
            yield finding

    def _upstream_path(self, ctx: CollectorContext, patch: Patch) -> str | None:
        module = patch.target.rsplit(".", 1)[0]
        path = _module_path(ctx, module)
        if path is not None:
            return path
        for configured in ctx.config.freshness.monkey_patches:
            where, _, qualname = configured.partition("::")
            if qualname == patch.label:
                return where
        return None

    def _patch(self, ctx: CollectorContext, patch: Patch) -> Finding | Unchecked | None:
        upstream_path = self._upstream_path(ctx, patch)
        if upstream_path is None:
            return None  # patching something outside this repository (torch, say)
        key = (patch.label,)
        files = [FileRef(path=patch.path, line=patch.line), FileRef(path=upstream_path)]
        upstream_tree = ctx.source.parse(upstream_path)
        if ctx.source.unreadable(upstream_path):
            return Unchecked(key)  # not known to be stale or fit: the warning names the file
        current = upstream_signature(upstream_tree, patch.label) if upstream_tree else None
        if current is None:
            return ctx.finding(
                self.name,
                "stale_monkey_patch",
                key,
                f"Monkey-patch of {code(patch.label)} targets a method that no longer exists",
                f"{code(patch.path)} patches {code(patch.label)}, which {code(upstream_path)} "
                "no longer defines: the patch silently adds a method nobody calls.",
                files=files,
                items=["target missing"],
            )
        if patch.wraps_original:
            return ctx.finding(
                self.name,
                "monkey_patch_stable",
                key,
                f"{patch.label} patch",
                "wraps the original, signature-independent",
            )
        if patch.function is None:
            return None
        problems = signature_mismatch(list(patch.signature), list(current))
        if not problems:
            return ctx.finding(
                self.name, "monkey_patch_stable", key, f"{patch.label} patch", "signature-stable"
            )
        diff = (
            f"upstream: {shapes.format_signature(patch.label, list(current))}\n"
            "patch:    " + shapes.format_signature(patch.function, list(patch.signature))
        )
        return ctx.finding(
            self.name,
            "stale_monkey_patch",
            key,
            f"Monkey-patch of {code(patch.label)} is stale: {problems[0]}",
            "\n".join(f"- {problem}" for problem in problems),
            suggested_fix=f"Update {code(patch.function)} in {code(patch.path)} to the "
            "current upstream signature.",
            files=files,
            items=problems,
            evidence=Evidence(diff=diff),
        )

    def _private(self, ctx: CollectorContext, files: list[str]) -> Iterator[Finding | Unchecked]:
        configured = ctx.config.freshness.private_apis
        uses: dict[str, list] = {}
        chains: set[str] = set()  # `torch.…` reached by attribute access
        for path in files:
            tree = ctx.source.parse(path)
            for use in private_imports(path, tree, configured):
                uses.setdefault(use.dotted, []).append(use)
            chains |= torch_attributes(tree)
        if not uses:
            return
        experiment = ctx.config.project.experiment
        torch = TorchIndex(ctx.torch_root) if ctx.torch_root else None
        # Private dotted name → (its public name, the deprecated shim it came through).
        alternatives: dict[str, tuple[str, str | None]] = {}
        if torch is not None:
            for dotted, found in uses.items():
                use = found[0]
                home = torch.shim_home(use.module)
                if home is not None and (not use.name or use.name in torch.exports(home)):
                    alternatives[dotted] = (f"{home}.{use.name}" if use.name else home, use.module)
                    continue
                for candidate in public_candidates(use):
                    module = candidate.rsplit(".", 1)[0]
                    if torch.reexports(module, use.name, use.module):
                        alternatives[dotted] = (candidate, None)
                        break
        note = ""
        if torch is None:
            note = f"\n\nPublic alternatives not checked: skipped — {ctx.torch_reason}."
            # Only torch could say whether a public name exists now: neither found nor gone.
            yield Unchecked((experiment,), ("private_api_public_alt",))
        # A fixed list repeated every day is noise: what changed since the baseline is news.
        before = self._private_at_baseline(ctx, configured)
        count = f"{len(uses)} private torch API{'s' if len(uses) != 1 else ''} in use"
        if before is None:
            title, shown = count, sorted(uses)
            head = "Private names can change in any nightly (no baseline to compare with):"
        else:
            added = sorted(set(uses) - before)
            # No longer imported, and no longer reached as `torch._x.y` either.
            gone = sorted(d for d in before - set(uses) if not still_reached(d, chains))
            since = ctx.since.date()
            title = (
                f"{count}: {len(added)} new {ctx.since_words()}"
                if added
                else f"{count}, none new {ctx.since_words()}"
            )
            shown = added
            head = (
                (f"New since the baseline ({since}); private names can change in any nightly:")
                if added
                else (
                    f"No private torch API newly used "
                    f"{ctx.since_words()}; the {len(uses)} in use are "
                    "unchanged."
                )
            )
            if gone:
                note = "\n\nNo longer used: " + ", ".join(code(d) for d in gone) + "." + note
            others = len(uses) - len(added)
            if others and added:
                note += (
                    f"\n\n{others} other{'s' if others != 1 else ''}, in use since before "
                    f"{since}, unchanged."
                )
        rows = "\n".join(
            f"- {code(dotted)} in "
            + ", ".join(code(f"{u.path.rsplit('/', 1)[-1]}:{u.line}") for u in uses[dotted][:3])
            + (f" and {len(uses[dotted]) - 3} more" if len(uses[dotted]) > 3 else "")
            for dotted in shown
        )
        yield ctx.finding(
            self.name,
            "private_api",
            (experiment,),
            title,
            head + ("\n\n" + rows if rows else "") + note,
            files=[FileRef(path=u.path, line=u.line) for d in shown for u in uses[d]][:50],
            items=sorted(uses),
        )
        if alternatives:
            rows = "\n".join(
                f"- {code(a)} → {code(b)}"
                + (f" ({code(shim)} is a deprecated shim: it moved)" if shim else "")
                for a, (b, shim) in sorted(alternatives.items())
            )
            yield ctx.finding(
                self.name,
                "private_api_public_alt",
                (experiment,),
                f"{len(alternatives)} private torch import{'s' if len(alternatives) != 1 else ''}"
                " now " + ("have" if len(alternatives) != 1 else "has") + " a public name",
                f"The installed torch exports these publicly:\n\n{rows}",
                suggested_fix="Import from the public location.",
                files=[FileRef(path=u.path, line=u.line) for a in alternatives for u in uses[a]],
                items=sorted(alternatives),
            )

    @staticmethod
    def _private_at_baseline(ctx: CollectorContext, configured: list[str]) -> set[str] | None:
        base = ctx.baseline_commit
        if base is None:
            return None
        config = ctx.config
        tests_dir = config.experiment_path(config.ci.tests_dir) + "/"
        found: set[str] = set()
        for path in ctx.source.python_files_at(base, config.project.experiment):
            if not path.startswith(tests_dir):
                found.update(
                    use.dotted
                    for use in private_imports(path, ctx.source.parse_at(base, path), configured)
                )
        return found

    def _duplicates(self, ctx: CollectorContext, left: str, right: str) -> Finding | None:
        pairs = similar_functions(
            ctx.source.parse(left),
            ctx.source.parse(right),
            ctx.config.thresholds.duplicate_similarity,
        )
        if not pairs:
            return None
        rows = "\n".join(
            f"- {code(p.left)} ({left.rsplit('/', 1)[-1]}:{p.left_line}) ~ {code(p.right)} "
            f"({right.rsplit('/', 1)[-1]}:{p.right_line}), {p.ratio:.0%} alike"
            for p in pairs
        )
        return ctx.finding(
            self.name,
            "duplicated_logic",
            (left, right),
            f"{code(left.rsplit('/', 1)[-1])} duplicates logic of {code(right)}",
            f"Functions with the same shape (names aside):\n\n{rows}",
            suggested_fix=f"Reuse {code(right)} where the logic really is the same.",
            files=[FileRef(path=left), FileRef(path=right)],
            items=[f"{p.left}~{p.right}" for p in pairs],
        )
