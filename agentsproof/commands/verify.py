"""``agentsproof verify REPORT.json`` (or a bundle from ``agentsproof bundle``): is this report
what it says it is?

Every number is derived again from the recorded trials (:mod:`agentsproof.executor.verify`);
the manifest's digest of the trials and its exit code are checked; ``--files DIR`` checks the
files the manifest names against the ones on disk; ``--allowed-signers FILE`` checks the
report's SSH signature (``<report>.sig``, :mod:`agentsproof.commands.signing`); ``--regrade``
runs the deterministic graders again on the recorded answers and workspaces. Exit 0 when all
hold, 1 when something differs, 30 for an unreadable input.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentsproof.commands.signing import SignatureCheck
from agentsproof.core.errors import EXIT_FAILED, EXIT_OK, InputError
from agentsproof.executor.verify import Difference

if TYPE_CHECKING:
    from agentsproof.model.results import RunResult


@dataclass
class Verified:
    """What ``verify`` found."""

    report: str
    kind: str
    """``run`` or ``activation``."""
    trials: int = 0
    differences: list[Difference] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    """Files of the manifest that changed or are missing (``--files``)."""
    files_checked: int = 0
    signature: SignatureCheck | None = None
    regraded: list[Difference] = field(default_factory=list)
    regrade_note: str | None = None

    @property
    def ok(self) -> bool:
        """Everything checked holds."""
        return not self.differences and not self.files and not self.regraded and (self.signature is None or self.signature.ok)

    @property
    def exit_code(self) -> int:
        """0 when all hold, 1 otherwise."""
        return EXIT_OK if self.ok else EXIT_FAILED

    def lines(self) -> list[str]:
        """The outcome, one finding a line, the verdict last."""
        out = [f"DIFFERS {d.line()}" for d in self.differences]
        out += [f"FILE {f}" for f in self.files]
        out += [f"REGRADE {d.line()}" for d in self.regraded]
        if self.signature is not None:
            out.append(("signature: " if self.signature.ok else "BAD SIGNATURE: ") + self.signature.message)
        if self.regrade_note:
            out.append(f"regrade: {self.regrade_note}")
        if self.files_checked:
            out.append(f"files: {self.files_checked} checked, {len(self.files)} differ")
        verdict = "verified" if self.ok else "NOT verified"
        out.append(f"{self.report}: {verdict} ({self.kind} report, {self.trials} trials; {len(self.differences)} number(s) differ)")
        return out


def verify(path: Path, *, files_dir: Path | None = None, allowed_signers: Path | None = None, regrade: bool = False) -> Verified:
    """Check the report (or bundle) at ``path``; InputError (exit 30) when it cannot be read."""
    from agentsproof.commands.bundle import is_bundle, opened

    with _collector_paused() if not regrade else nullcontext():  # --regrade runs graders (asyncio's cycles): collected as usual
        if is_bundle(path):
            with opened(path) as (report, files):
                return _verify(report, files_dir or files, allowed_signers, regrade, shown=str(path))
        return _verify(Path(path), files_dir, allowed_signers, regrade, shown=str(path))


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector paused while a report is checked (then as it was):
    a report read is millions of new dicts and lists, none of them in a cycle, and the
    collector's passes over them were about a tenth of verify's CPU (docs/benchmarks.md)."""
    import gc

    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _verify(path: Path, files_dir: Path | None, allowed: Path | None, regrade: bool, shown: str) -> Verified:
    from agentsproof.report.saved import load_report_data

    data = load_report_data(path, depth_check=False)
    if "items" in data:
        found, _run = _verify_run(path, data, shown, regrade)
    elif str(data.get("schema", "")).startswith("agentsproof-ablation/"):
        found = _verify_ablation(path, data, shown, regrade)
    elif "trial_log" in data and "skills" in data:
        found = _verify_activation(data, shown)
    else:
        raise InputError(shown, None, "not an agentsproof report (no 'items' nor 'trial_log')")
    manifest = data.get("manifest") if isinstance(data.get("manifest"), dict) else None
    if files_dir is not None:
        if manifest is None:
            raise InputError(shown, "manifest", "--files: the report has no manifest to check the files against")
        found.files, found.files_checked = check_files(manifest, files_dir)
    if allowed is not None:
        from agentsproof.commands.signing import check_signature, sig_path

        found.signature = check_signature(path.read_bytes(), sig_path(path), allowed)
    return found


def _verify_run(path: Path, data: dict[str, Any], shown: str, regrade: bool) -> tuple[Verified, RunResult]:
    """What verify finds in a run report, and the report as it read it."""
    from concurrent.futures import ThreadPoolExecutor

    from pydantic import ValidationError

    from agentsproof.core.validation import format_validation_error
    from agentsproof.executor.proof import data_trials_digest
    from agentsproof.executor.verify import check_manifest, item_grader, rederive
    from agentsproof.executor.verify_ablation import rederive_ablation
    from agentsproof.model.results import ItemResult, RunResult

    def validated(value: dict[str, Any]) -> RunResult:
        try:
            return RunResult.model_validate(value)
        except ValidationError as err:
            name, message = format_validation_error(err)
            raise InputError(shown, name, message) from None

    source = data if regrade else _light(data)
    with ThreadPoolExecutor(max_workers=3) as pool:
        # the trials' digest on a thread of its own, and each item graded again on another as
        # soon as it is read: the statistics' numpy work (which releases the GIL) overlaps the
        # reading of the next items and the digest
        digest = pool.submit(data_trials_digest, data)
        raw_items = source.get("items")
        derived = None
        if regrade or not isinstance(raw_items, list):
            run = validated(source)
        else:
            run = validated({**source, "items": []})
            grade = item_grader(run.settings, run.incomplete)
            items, pending = [], []
            for raw in raw_items:
                try:
                    it = ItemResult.model_validate(raw)
                except ValidationError:
                    validated(source)  # the whole report, for the error as it names it (items[i]....)
                    raise
                items.append(it)
                pending.append(pool.submit(grade, it))
            run.items = items
            derived = [job.result() for job in pending]
        found = Verified(shown, "run")
        found.trials = sum(len(a.trials) for it in run.items for a in (it.with_arm, it.without_arm, it.plugin_arm) if a is not None)
        found.differences = rederive(run, derived=derived) + rederive_ablation(run)
        digested = _digested(digest)
    found.differences += check_manifest(run, data, digested)
    if regrade:
        found.regraded, found.regrade_note = regrade_differences(path, run)
    return found, run


def _digested(digest: Any) -> tuple[int, str] | None:
    """The digest the thread took; None when it failed (a trial that cannot be encoded: taken again, and named, by check_manifest)."""
    try:
        return digest.result()  # type: ignore[no-any-return]
    except (TypeError, ValueError, AttributeError):
        return None


_HEAVY = ("log", "response", "replies", "tool_calls", "files", "trajectory", "workspace")
"""What a trial records that no number is derived from: left out of the model verify builds
(the trials' digest is taken of the whole trial as read; ``--regrade`` reads them all)."""


def _light(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with the trials' text and trajectories left out (shallow copies; ``data`` unchanged),
    and each grader result and token count validated once however many trials record it (:class:`_Shared`)."""
    shared = _Shared()
    items = []
    for it in data.get("items") or []:
        if not isinstance(it, dict):
            items.append(it)
            continue
        it = dict(it)
        for key in ("with_arm", "without_arm", "plugin_arm"):
            arm = it.get(key)
            if isinstance(arm, dict) and isinstance(arm.get("trials"), list):
                it[key] = {**arm, "trials": [shared.trial(t) if isinstance(t, dict) else t for t in arm["trials"]]}
        items.append(it)
    return {**data, "items": items}


def _verify_ablation(path: Path, data: dict[str, Any], shown: str, regrade: bool) -> Verified:
    """An ablation's own JSON file: the run report it names (beside it) verified, and the
    file's numbers and manifest checked against that report's (:mod:`agentsproof.executor.verify_ablation`)."""
    from agentsproof.executor.verify_ablation import against_run
    from agentsproof.report.saved import load_report_data

    name = data.get("run_report")
    if not isinstance(name, str) or not name or "/" in name or "\\" in name or name.startswith("."):
        raise InputError(shown, "run_report", "names no run report beside the ablation (made by an older agentsproof?)")
    run_path = path.parent / name
    run_data = load_report_data(run_path, depth_check=False)
    found, run = _verify_run(run_path, run_data, shown, regrade)
    found.kind = "ablation"
    found.differences += against_run(data, run)
    return found


class _Shared:
    """One model object for every trial that records the same grader result or the same token
    count (the JSON value's ``repr`` as the key: equal only for equal values of equal types).
    Most trials of an item share them (the same checks, the same evidence), and validating
    each only once is most of the report's validation saved. Nothing verify does changes
    them. A value that does not validate is left as read: the report's own validation then
    names it where it is (``items[i]....``)."""

    def __init__(self) -> None:
        from agentsproof.model.results import GraderResult, Usage

        self._models: dict[str, tuple[type[Any], dict[str, Any]]] = {"graders": (GraderResult, {}), "usage": (Usage, {})}

    def _one(self, field: str, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        from pydantic import ValidationError

        model, seen = self._models[field]
        key = repr(value)
        hit = seen.get(key)
        if hit is None:
            try:
                hit = seen[key] = model.model_validate(value)
            except ValidationError:
                return value
        return hit

    def trial(self, t: dict[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in t.items() if k not in _HEAVY}
        if "usage" in out:
            out["usage"] = self._one("usage", out["usage"])
        graders = out.get("graders")
        if isinstance(graders, list):
            out["graders"] = [self._one("graders", g) for g in graders]
        return out


def _verify_activation(data: dict[str, Any], shown: str) -> Verified:
    from agentsproof.executor.verify import rederive_activation

    found = Verified(shown, "activation")
    log = data.get("trial_log")
    if not isinstance(log, list) or not all(isinstance(r, dict) and isinstance(r.get("prompt"), dict) for r in log):
        raise InputError(shown, "trial_log", "must be a list of trials, each with its prompt")
    found.trials = len(log)
    try:
        found.differences = rederive_activation(data)
    except (TypeError, KeyError, ValueError, AttributeError) as err:
        raise InputError(shown, "trial_log", f"a trial cannot be read: {err}") from None
    return found


def check_files(manifest: dict[str, Any], root: Path) -> tuple[list[str], int]:
    """(files that changed or are missing below ``root``, files checked): each manifest path
    is read relative to ``root`` (an absolute path with its leading '/' taken off)."""
    from agentsproof.executor.proof import file_sha256

    files = manifest.get("files")
    if not isinstance(files, dict):
        return ["manifest.files: not a table of files"], 0
    out: list[str] = []
    for name, row in sorted(files.items()):
        row = row if isinstance(row, dict) else {}
        rel = Path(name.lstrip("/"))
        if ".." in rel.parts:
            out.append(f"{name}: a path that leaves --files (not checked)")
            continue
        where = Path(root) / rel
        if not where.is_file():
            out.append(f"{name}: missing (the manifest names it, {row.get('role', 'file')})")
            continue
        digest = file_sha256(where)
        if digest != row.get("sha256"):
            out.append(f"{name}: changed since the run (sha256 {digest} ≠ {row.get('sha256')})")
    return out, len(files)


def regrade_differences(path: Path, run: Any) -> tuple[list[Difference], str | None]:
    """The deterministic graders run again on the recorded answers and workspaces: each
    grader result that comes out differently. Graders that call a judge are left out (said)."""
    import asyncio

    from agentsproof.commands.rerun import retry_items
    from agentsproof.executor.recorder import FileStore, store_dir
    from agentsproof.executor.regrade import regrade_trial
    from agentsproof.executor.verify import same
    from agentsproof.grading.registry import entry

    def judged(name: str) -> bool:
        try:
            return bool(entry(name).judged)
        except Exception:  # noqa: BLE001 - a grader type this install does not know: not re-run, counted
            return True

    items, _after = retry_items(run, path, None)
    folder = store_dir(Path(path))
    store = FileStore(folder) if folder.is_dir() else None
    out: list[Difference] = []
    skipped = 0

    async def go() -> None:
        nonlocal skipped
        for i, it in enumerate(run.items):
            item = items.get(it.id)
            if item is None:
                continue
            for name, arm in (("with_arm", it.with_arm), ("without_arm", it.without_arm)):
                for n, t in enumerate(arm.trials):
                    if t.status != "scored":
                        continue
                    again = await regrade_trial(item, t, store, None)
                    for k, (before, after) in enumerate(zip(t.graders, again.graders, strict=False)):
                        asked = before.usage.prompt_tokens or before.usage.completion_tokens  # a script through agentv's provider proxy too
                        if judged(before.type) or asked:
                            skipped += 1
                            continue
                        if before.type != after.type or not same(before.score, after.score):
                            out.append(Difference(f"items[{i}].{name}.trials[{n}].graders[{k}].score", before.score, after.score))

    asyncio.run(go())
    return out, (f"{skipped} judged grader result(s) not re-run (they call a model)" if skipped else None)
