"""``agentsproof bundle REPORT.json``: one archive a reader can check on another machine.

``<report>.bundle.tar.gz`` holds ``report/`` (the JSON report, its signature when signed, its
journal and its recorded files ``<report>.files/``: the trajectories and workspace files a
re-grade reads) and ``files/`` (every file the manifest names: the eval and skill files,
targets.yaml, Dockerfiles), with ``bundle.json`` saying which is which. ``agentsproof verify
BUNDLE`` opens it in a private temporary folder (only regular files and folders, nothing
outside it) and checks the report against those files. ``--sign KEY`` signs the archive too
(``<bundle>.sig``).
"""

from __future__ import annotations

import contextlib
import io
import json
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path

from agentsproof.core.errors import InputError

INDEX = "bundle.json"
BUNDLE_FORMAT = "agentsproof-bundle/1"
MAX_MEMBER_BYTES = 1 << 32
MAX_MEMBERS = 1_000_000


def bundle_path(report: Path) -> Path:
    """``<report>.bundle.tar.gz`` beside the report."""
    return report.with_name(report.name.removesuffix(".json") + ".bundle.tar.gz")


def make_bundle(report: Path, out: Path | None = None, sign: Path | None = None) -> Path:
    """Write the bundle of ``report`` (default beside it); the archive's path. InputError on a report that cannot be read."""
    from agentsproof.commands.signing import check_key, sig_path, sign_file
    from agentsproof.core.inputs import display
    from agentsproof.core.safepath import Staged, refuse_overwrite
    from agentsproof.executor.journal import journal_path
    from agentsproof.executor.recorder import store_dir
    from agentsproof.report.saved import load_report_data

    check_key(sign)
    report = Path(report)
    data = load_report_data(report)
    manifest = data.get("manifest")
    if not isinstance(manifest, dict):
        raise InputError(display(report), "manifest", "the report has no manifest (made by an older agentsproof); run it again to bundle it")
    target = Path(out) if out is not None else bundle_path(report)
    refuse_overwrite(target, [report], "command line", "--out")
    name = report.name
    staged = Staged(target.parent, target.name)
    try:
        with tarfile.open(fileobj=_Writer(staged), mode="w:gz") as tar:
            index = {"format": BUNDLE_FORMAT, "report": f"report/{name}", "files": "files"}
            _add_bytes(tar, INDEX, (json.dumps(index, indent=2) + "\n").encode())
            tar.add(report, arcname=f"report/{name}", recursive=False)
            for extra in (sig_path(report), journal_path(report)):
                if extra.is_file():
                    tar.add(extra, arcname=f"report/{extra.name}", recursive=False)
            store = store_dir(report)
            if store.is_dir() and not store.is_symlink():
                _add_tree(tar, store, f"report/{store.name}")
            root = Path(str(manifest.get("root") or "."))
            for rel in sorted(manifest.get("files") or {}):
                src = Path(rel) if Path(rel).is_file() else root / rel  # relative to where the run ran, when bundled from elsewhere
                if src.is_file() and not src.is_symlink():
                    tar.add(src, arcname=f"files/{rel.lstrip('/')}", recursive=False)
        staged.commit(durable=True)
    except BaseException:
        staged.discard()
        raise
    if sign is not None:
        sign_file(target, sign)
    return target


class _Writer(io.RawIOBase):
    """A file object over a :class:`Staged` file (tarfile writes through it)."""

    def __init__(self, staged: object):
        self.staged = staged

    def writable(self) -> bool:
        return True

    def write(self, b: bytes) -> int:  # type: ignore[override]
        data = bytes(b)
        self.staged.write(data)  # type: ignore[attr-defined]
        return len(data)


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = 0o644
    tar.addfile(info, io.BytesIO(data))


def _add_tree(tar: tarfile.TarFile, root: Path, arc: str) -> None:
    for path in sorted(root.rglob("*")):
        if path.is_symlink():
            continue
        if path.is_file():
            tar.add(path, arcname=f"{arc}/{path.relative_to(root).as_posix()}", recursive=False)


def is_bundle(path: Path) -> bool:
    """``path`` is a gzip'd tar (a bundle), by its first bytes."""
    try:
        with open(path, "rb") as fh:
            return fh.read(2) == b"\x1f\x8b"
    except OSError:
        return False


@contextlib.contextmanager
def opened(path: Path) -> Iterator[tuple[Path, Path]]:
    """The bundle unpacked in a private temporary folder: (its report, its files folder).
    Only regular files and folders are taken, each below the folder; InputError otherwise."""
    from agentsproof.core.inputs import display

    src = display(path)
    with tempfile.TemporaryDirectory(prefix="agentsproof-bundle-") as tmp:
        root = Path(tmp)
        try:
            with tarfile.open(path, mode="r:gz") as tar:
                members = tar.getmembers()
                if len(members) > MAX_MEMBERS:
                    raise InputError(src, None, "not an agentsproof bundle (too many members)")
                for m in members:
                    if not (m.isfile() or m.isdir()) or m.name.startswith("/") or ".." in Path(m.name).parts or m.size > MAX_MEMBER_BYTES:
                        raise InputError(src, m.name, "not an agentsproof bundle member (only plain files and folders below the bundle)")
                tar.extractall(root, members=members, filter="data")
        except (tarfile.TarError, OSError, EOFError) as err:
            raise InputError(src, None, f"not a readable bundle: {err}") from None
        try:
            index = json.loads((root / INDEX).read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            raise InputError(src, INDEX, f"not an agentsproof bundle: {err}") from None
        if not isinstance(index, dict) or index.get("format") != BUNDLE_FORMAT or not isinstance(index.get("report"), str):
            raise InputError(src, INDEX, f"not an agentsproof bundle (format {BUNDLE_FORMAT!r} expected)")
        report = root / index["report"]
        if ".." in Path(index["report"]).parts or not report.is_file():
            raise InputError(src, f"{INDEX}.report", "names no report in the bundle")
        yield report, root / str(index.get("files") or "files")
