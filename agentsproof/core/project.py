"""The project an eval file belongs to: the one boundary for every file it names.

An eval file may name files anywhere inside its **project root**, never outside it and
never through a symlink that leads out (a path is resolved, links and all, before it is
checked). The root is, in this order:

1. the folder given with ``--root`` (every command that reads eval files has it; env
   ``AGENTSPROOF_ROOT``);
2. the nearest folder at or above the eval file holding ``.git``, ``.agentv/`` or
   ``promptfooconfig.yaml`` (a repository, an agentv project, a promptfoo project);
3. the current folder, when the eval file is inside it (agentv's own fallback when there is
   no repository: it resolves files from the folder it runs in) — never ``/`` nor the home
   folder itself;
4. else the eval's own folder, or the folder above it when it is an ``evals/`` folder
   (agentv and skill-creator keep prompts, fixtures and the skill beside ``evals/``).

:func:`resolve_ref` resolves a reference the way its owning tool does: relative to the
eval file; with ``search_up`` (agentv), when not found there, relative to each folder
above the eval file up to the project root, then to the current folder, and a leading
``/`` means "from those folders" (agentv's ``/plugins/x`` is read from the repository
root), never the file system's root. Every format's loader uses it, directly or through
:func:`agentsproof.core.inputs.confined`.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath, PureWindowsPath

from agentsproof.core.errors import InputError

MARKERS = (".git", ".agentv", "promptfooconfig.yaml")
"""What makes a folder a project root (the nearest one above the eval file wins)."""
ROOT_SETTING = "AGENTSPROOF_ROOT"
MAX_LEVELS = 32
"""How many folders above an eval file the markers are looked for in."""


def display(path: Path | str) -> str:
    """A path as text that is safe to print and to encode (undecodable bytes as \\x..)."""
    text = str(path)
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def eval_root(eval_file: Path) -> Path:
    """The folder an eval file may refer into: its own folder, or the skill folder when the
    eval file sits in that skill's ``evals/`` folder (``skills/x/evals/evals.json`` naming
    ``../SKILL.md``, the layout other tools use)."""
    folder = eval_file.resolve().parent
    if folder.name == "evals" and (folder.parent / "SKILL.md").is_file():
        return folder.parent
    return folder


_ROOT: list[Path | None] = [None]
"""``--root`` for this process (a command reads its eval files in threads too)."""


def set_root(folder: Path | None) -> None:
    """The folder ``--root`` names (None: found from each eval file)."""
    _ROOT[0] = Path(folder).resolve() if folder is not None else None


def given_root() -> Path | None:
    """``--root``, else ``AGENTSPROOF_ROOT``, resolved; None when neither is set."""
    given = _ROOT[0]
    if given is not None:
        return given
    from agentsproof.core.envcfg import env_text

    text = env_text(ROOT_SETTING)
    if text:
        folder = Path(text).expanduser().resolve()
        if not folder.is_dir():
            raise InputError("environment", ROOT_SETTING, f"folder {text!r} not found")
        return folder
    return None


def marked_root(eval_file: Path) -> Path | None:
    """The nearest folder at or above ``eval_file`` holding a project marker, or None."""
    folder = Path(eval_file).resolve().parent
    for candidate in (folder, *list(folder.parents)[:MAX_LEVELS]):
        if any((candidate / m).exists() for m in MARKERS):
            return candidate
    return None


def _never_projects() -> set[Path]:
    """Folders the current folder never makes a project of: the file system's root and the home folder."""
    return {Path("/"), Path.home().resolve()}


def project_root(eval_file: Path) -> Path:
    """The folder every file ``eval_file`` names must stay in (see the module's rules)."""

    real = Path(eval_file).resolve()
    given = given_root()
    if given is not None and real.is_relative_to(given):
        return given
    marked = marked_root(real)
    if marked is not None:
        return marked
    cwd = Path.cwd().resolve()
    if real.is_relative_to(cwd) and cwd not in _never_projects():
        return cwd
    return _fallback(real)


def _fallback(real: Path) -> Path:
    """The eval's own folder, or the folder above it when it is an ``evals/`` folder."""

    folder = eval_root(real)
    return folder.parent if folder.name == "evals" else folder


def _absolute(ref: str) -> bool:
    return PurePosixPath(ref).is_absolute() or PureWindowsPath(ref).is_absolute() or ref.startswith("~")


def _describe(root: Path, eval_file: Path) -> str:
    """How the limit is named in a message."""

    if root == given_root():
        return f"the project root {display(root)} (--root / {ROOT_SETTING})"
    if root in (eval_root(Path(eval_file).resolve()), _fallback(Path(eval_file).resolve())):
        return f"the eval's folder {display(root)}"
    return f"the project {display(root)} (the nearest folder with .git, .agentv/ or promptfooconfig.yaml, the current folder, or --root)"


def search_folders(eval_file: Path, root: Path) -> list[Path]:
    """agentv's search roots: the eval file's folder and each folder above it up to the
    project root, then the current folder when it is inside the project."""
    folder = Path(eval_file).resolve().parent
    out = [folder]
    if folder.is_relative_to(root):
        out += [p for p in folder.parents if p.is_relative_to(root)]
    cwd = Path.cwd().resolve()
    if cwd.is_relative_to(root) and cwd not in out:
        out.append(cwd)
    return out


def resolve_ref(
    ref: str,
    eval_file: Path,
    field: str,
    *,
    search_up: bool = False,
    root: Path | None = None,
    must_exist: bool = True,
    what: str = "file",
) -> Path:
    """``ref`` (as written in ``eval_file``'s ``field``) resolved inside the project root;
    InputError naming the file and field when it leads out, through a link or not, or (with
    ``must_exist``) names nothing there.

    ``search_up``: agentv's rule (see the module). Without it a reference is relative to the
    eval file and an absolute one is refused."""

    src = display(eval_file)
    if "\x00" in ref:
        raise InputError(src, field, "contains a NUL character")
    limit = (root or project_root(eval_file)).resolve()
    absolute = _absolute(ref)
    if absolute and not (search_up and ref.startswith("/") and not ref.startswith("//")):
        raise InputError(src, field, f"{ref!r} is an absolute path; give a path relative to {display(Path(eval_file).parent)}")
    rel = ref.lstrip("/") if absolute else ref
    bases = search_folders(eval_file, limit) if search_up else [Path(eval_file).resolve().parent]
    if absolute and limit not in bases:  # agentv: '/x' is read from the folders above the file, the project root among them
        bases.append(limit)
    first_out: str | None = None
    candidates: list[Path] = []
    for base in bases:
        lexical = Path(os.path.normpath(base / rel))
        target = (base / rel).resolve()
        if not target.is_relative_to(limit):
            if first_out is None:
                how = "a symlink leads" if lexical.is_relative_to(limit) else "it leads"
                first_out = f"{ref!r} is outside {_describe(limit, eval_file)} ({how} out of it)"
            continue
        if target.exists():
            return target
        candidates.append(target)
    if not candidates or (first_out is not None and not search_up):
        raise InputError(src, field, first_out or f"{what} {ref!r} not found")
    if not must_exist:
        return candidates[0]
    tried = ", ".join(display(c) for c in candidates[:4])
    raise InputError(src, field, f"{what} {ref!r} not found" + (f" (looked for {tried})" if len(candidates) > 1 else ""))
