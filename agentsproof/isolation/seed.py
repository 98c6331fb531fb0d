"""Workspace seeds: the eval's ``workspace:`` folder, checked at load, copied per trial.

A seed is walked without following a symlink, both when the eval is loaded
(:func:`check_seed_folder`, an input error on the first problem) and when it is copied into
a trial's workspace (:func:`copy_seed`, which re-checks as it goes: the folder may have
changed since), both by the one tree copier, :mod:`agentsproof.core.treecopy`. What a
seed may hold:

* folders and regular files, readable by the user;
* symlinks that resolve to a place inside the seed. They are copied **as symlinks**
  (rewritten relative, so that in the workspace they lead to the same place in the copy),
  never followed: a link to a folder, or a loop such as ``a -> .``, costs one entry, not a
  second copy of what it leads to;
* at most :data:`MAX_SEED_FILES` entries (files, folders and links, counted as copied) and
  :data:`MAX_SEED_BYTES` of file content.

Refused: a symlink leading out of the seed (it would hand the agent a path into the
user's files), a broken symlink or a link loop that resolves to nothing, devices, pipes
and sockets, and anything that cannot be read.
"""

from __future__ import annotations

import os
from pathlib import Path

from agentsproof.core.errors import InputError
from agentsproof.core.treecopy import MAX_TREE_BYTES as MAX_SEED_BYTES
from agentsproof.core.treecopy import MAX_TREE_ENTRIES as MAX_SEED_FILES
from agentsproof.core.treecopy import TreeEntry as SeedEntry
from agentsproof.core.treecopy import TreeProblem as SeedProblem
from agentsproof.core.treecopy import copy_tree as copy_seed
from agentsproof.core.treecopy import walk_tree as walk_seed

__all__ = ["MAX_SEED_BYTES", "MAX_SEED_FILES", "SeedEntry", "SeedProblem", "check_seed_folder", "copy_seed", "walk_seed"]


def check_seed_folder(folder: Path, source: str, field: str) -> Path:
    """``folder`` resolved, if it is a directory fit to copy into workspaces; InputError
    (one line naming the file, the field and the entry) otherwise."""
    from agentsproof.core.inputs import display

    if not folder.exists():
        raise InputError(source, field, f"folder {display(folder)!r} not found")
    if not folder.is_dir():
        raise InputError(source, field, f"{display(folder)!r} is not a folder")
    base = folder.resolve()
    if not os.access(base, os.R_OK | os.X_OK):
        raise InputError(source, field, f"folder {display(folder)!r} cannot be read (permission denied)")
    try:
        for _entry in walk_seed(base):
            pass
    except SeedProblem as err:
        text = str(err)
        raise InputError(source, field, f"{display(folder)!r} {text}" if text.startswith("holds") else f"{text} in {display(folder)!r}") from None
    return base
