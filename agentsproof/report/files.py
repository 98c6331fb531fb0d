"""Where reports go and how they are written.

Report names are made safe path components, so every report lies inside ``--output``;
the folders are checked before the first model call; every format is rendered into a
temporary file beside its target (piece by piece where the format allows: a large run's
report never exists as one string in memory), and only when all are rendered are they
renamed into place.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path

from agentsproof.core.safepath import Staged
from agentsproof.core.scrub import scrub
from agentsproof.model.results import RunResult


def _render(chunks: Iterable[str], path: Path) -> Staged:
    """The pieces of a report written to a temporary file beside ``path`` (not yet in place)."""
    staged = Staged(path.parent, path.name)
    try:
        for piece in chunks:
            # Undecodable bytes from file names (surrogates) become "?" instead of failing;
            # every piece passes the scrubber (the trials were scrubbed already: this is
            # the last guard, for text a report adds of its own).
            staged.write(scrub(piece).encode("utf-8", "replace"))
    except BaseException:
        staged.discard()
        raise
    return staged


def write_reports(run: RunResult, targets: dict[str, Path], *, failed_run: bool = False) -> dict[str, Path]:
    """Write each format to its path: ``{"html": Path(...), ...}``. Returns what was written.

    Every run's reports are kept in a run folder of its own beside them, and ``latest`` links
    to it (:mod:`agentsproof.report.runs`); ``failed_run`` (a run stopped by a failure every
    trial would repeat) writes them there only, leaving the last good reports as they are.

    Every format is rendered (into a temporary file beside its target) before any report
    is put in place; each file appears atomically. A format that cannot be written does not
    stop the others: OutputError afterwards names what was lost and why. Every file goes
    through :mod:`agentsproof.core.safepath` (the history copy too: a ``history`` that is
    a symlink is refused, never written through)."""
    from agentsproof.core.errors import OutputError
    from agentsproof.core.inputs import display
    from agentsproof.report.runs import keep_run, run_folder_name, run_targets
    from agentsproof.report.stream import stream_writers

    folder = run_folder_name(run.created_at)
    if failed_run:
        targets = run_targets(targets, folder)
    streams = stream_writers()
    for fmt in targets:
        if fmt not in streams and fmt not in _writers():
            raise ValueError(f"unknown report format {fmt!r}; known: {', '.join(_writers())}")
    staged: dict[str, Staged] = {}
    failed: list[str] = []
    try:
        for fmt, path in targets.items():
            chunks = streams[fmt](run) if fmt in streams else [_writers()[fmt](run)]
            try:
                staged[fmt] = _render(chunks, path)
            except OSError as err:
                failed.append(f"{display(path)}: {err.strerror or err}")
    except BaseException:
        for st in staged.values():
            st.discard()
        raise
    written: dict[str, Path] = {}
    for fmt, st in staged.items():
        path = targets[fmt]
        try:
            st.commit(durable=True)
            written[fmt] = path
        except OSError as err:
            failed.append(f"{display(path)}: {err.strerror or err}")
    if "json" in written and not failed_run:
        try:
            _copy_to_history(written["json"], run.created_at)
        except OSError as err:
            failed.append(f"history copy: {err.strerror or err}")
    try:
        keep_run(written, folder)
    except OSError as err:
        failed.append(f"run folder {folder}: {err.strerror or err}")
    if failed:
        kept = f" (written: {', '.join(display(p) for p in written.values())})" if written else ""
        raise OutputError(f"could not write {'; '.join(failed)}{kept}")
    return written


def _copy_to_history(json_report: Path, created_at: str) -> Path:
    """The JSON report copied to ``history/<stamp>/`` beside it (a new folder when that one
    has it already); never through a link planted there."""
    from agentsproof.core.safepath import copy_file

    folder = json_report.parent
    for _ in range(1000):
        dest = history_path(json_report, created_at)
        try:
            copy_file(json_report, folder, dest.relative_to(folder), cap=1 << 40, exist="fail")
            return dest
        except FileExistsError:
            continue
    raise OSError(f"{dest}: too many runs at the same second")


def report_targets(command: str, output: Path, plugin: str, stem: str, kind: str | None = None) -> dict[str, Path]:
    """Where each command writes (see README 'Outputs'). Names are made safe path
    components, so every target lies inside ``output``; and no two commands of one plugin
    write the same file: a skill named like its plugin gets ``<name>-skill-eval.*`` (the
    plugin's eval-all page is ``<plugin>-eval.html``), an agent ``<name>-agent-eval.*``."""
    from agentsproof.core.inputs import safe_name

    plugin = safe_name(plugin, "plugin")
    stem = safe_name(stem, "item")
    if command == "eval":
        base = output / plugin
        if kind == "agent":
            stem = f"{stem}-agent"
        elif stem == plugin:
            stem = f"{stem}-skill"
        return {f: base / f"{stem}-eval.{f}" for f in ("md", "json", "html")}
    if command == "eval-all":
        base = output / plugin
        return {
            "html": base / f"{plugin}-eval.html",
            "md": base / "eval-all-summary.md",
            "json": base / "eval-all-summary.json",
        }
    if command == "tc-eval":
        base = output / stem
        return {f: base / f"{stem}-tc-eval.{f}" for f in ("html", "md", "json")}
    raise ValueError(command)


def history_path(json_report: Path, created_at: str) -> Path:
    """``<report folder>/history/<UTC time>/<report>.json``: every run's JSON is kept there
    too, so earlier runs survive the next one and can be compared."""
    stamp = "".join(ch for ch in created_at if ch.isdigit())[:14] or "run"
    stamp = f"{stamp[:8]}T{stamp[8:]}Z" if len(stamp) == 14 else stamp
    folder = json_report.parent / "history" / stamp
    n = 2
    while os.path.lexists(folder / json_report.name):
        folder = json_report.parent / "history" / f"{stamp}-{n}"
        n += 1
    return folder / json_report.name


def prepare_output(output: Path, targets: dict[str, Path]) -> None:
    """Before the first model call: every report folder lies inside ``output`` (no symlink
    leads out) and can be created and written. Creates nothing (a run that fails to start
    leaves no folders behind); OutputError otherwise, so no results are lost to an
    unwritable folder at the end of a run."""
    from agentsproof.core.errors import OutputError
    from agentsproof.core.inputs import display

    root = output.resolve()
    for folder in sorted({p.parent for p in targets.values()}):
        if not folder.resolve().is_relative_to(root):
            raise OutputError(f"{display(folder)}: --output: leads out of {display(output)} (a symlink); refusing to write there")
        probe = folder
        while not probe.exists():
            if probe.is_symlink():
                raise OutputError(f"{display(probe)}: --output: is a dangling symlink")
            probe = probe.parent
        if not probe.is_dir():
            raise OutputError(f"{display(probe)}: --output: is a file, not a folder")
        if not os.access(probe, os.W_OK | os.X_OK):
            raise OutputError(f"{display(probe)}: --output: not writable")
    for path in targets.values():
        if path.is_dir():
            raise OutputError(f"{display(path)}: --output: is a directory where a report file goes")


def _writers() -> dict:
    from agentsproof.report.render import WRITERS

    return WRITERS


def write_outputs(run: RunResult, targets: dict[str, Path], *, failed_run: bool = False) -> dict[str, Path]:
    """Every report and export of the run, then the CI summary (``failed_run``: see :func:`write_reports`)."""
    from agentsproof.report.exports import append_step_summary

    written = write_reports(run, targets, failed_run=failed_run)
    append_step_summary(run)
    return written


# ------------------------------------------------------------------ one run per report set


def lock_path(json_report: Path) -> Path:
    """``<report>.lock`` beside the JSON report: held by the run writing that report set."""
    return json_report.with_name(json_report.name.removesuffix(".json") + ".lock")


class ReportLock:
    """An exclusive lock on a report set (its reports, journal and kept workspaces), held
    for the whole run: a second run writing the same reports is refused in one line naming
    the holder. The lock is ``flock`` on ``<report>.lock``; it ends with its process, so the
    file of a run that died is simply taken over."""

    def __init__(self, json_report: Path):
        self.path = lock_path(json_report)
        self.fd: int | None = None
        self._made: list[Path] = []
        """Folders the lock created (removed again when empty: a run that fails to start leaves none)."""

    def acquire(self) -> ReportLock:
        """Take the lock (creating its folder) and record the holder in it; OutputError when another run holds it."""
        import fcntl
        import socket
        import time

        from agentsproof.core.errors import OutputError
        from agentsproof.core.inputs import display

        missing = [p for p in [self.path.parent, *self.path.parent.parents] if not p.exists()]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._made = missing
        for _ in range(20):
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o600)
            except OSError as err:
                raise OutputError(f"{display(self.path)}: cannot lock the report set: {err.strerror or err}") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = _read_holder(fd)
                os.close(fd)
                raise OutputError(
                    f"{display(self.path)}: another run is writing these reports ({holder}); wait for it to finish or give another --output"
                ) from None
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(self.path, follow_symlinks=False))
            except OSError:
                same = False
            if not same:  # the file was removed by the run that held it: lock the new one
                os.close(fd)
                continue
            started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            self.fd = fd
            try:
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"pid {os.getpid()} on {socket.gethostname()}, started {started}\n".encode(), 0)
            except OSError as err:
                self.release()
                raise OutputError(f"{display(self.path)}: cannot lock the report set: {err.strerror or err}") from None
            return self
        raise OutputError(f"{display(self.path)}: cannot lock the report set (it keeps changing)")

    def release(self) -> None:
        """Remove the lock file and let go of it, then the folders it created when empty; a no-op when not held."""
        fd, self.fd = self.fd, None
        if fd is None:
            return
        with contextlib.suppress(OSError):
            os.unlink(self.path)  # while still held: a run waiting on this file retries on the new one
        os.close(fd)
        for folder in self._made:  # innermost first
            try:
                folder.rmdir()
            except OSError:
                break

    def __enter__(self) -> ReportLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _read_holder(fd: int) -> str:
    try:
        text = os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
    except OSError:
        text = ""
    return " ".join(text.split()) or "holder unknown"
