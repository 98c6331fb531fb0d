"""Reading input files safely: one place for every rule about files a user hands us.

Every eval file, skill/agent file and attached file goes through here, so that each bad
input ends as one :class:`~agentsproof.core.errors.InputError` naming the file and the field:

- **regular files only**: a FIFO, a device (``/dev/zero``) or a directory is refused
  before a byte is read, so nothing hangs or reads forever;
- **size caps**, with the limit in the message;
- **confinement**: a file an eval refers to must stay inside the eval's project
  (:mod:`agentsproof.core.project`): no absolute paths, no ``..`` and no symlink leading out;
- **strict parsing**: YAML and JSON with duplicate keys are refused, nesting is bounded,
  and numbers are finite and of bounded size (no 5,000-digit integers, no ``.inf``).
"""

from __future__ import annotations

import copy
import json
import math
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

import yaml

from agentsproof.core.errors import InputError
from agentsproof.core.jsondepth import json_depth
from agentsproof.core.project import display as display  # re-exported: every reader names files through it
from agentsproof.core.project import eval_root as eval_root

MAX_EVAL_FILE_BYTES = 1_000_000
"""eval.yaml, evals.json and other description files."""
MAX_SOURCE_FILE_BYTES = 1_000_000
"""A SKILL.md or agent file (the system prompt of the with-arm)."""
MAX_ATTACHED_FILE_BYTES = 200_000
"""One file attached to a prompt."""
MAX_DEPTH = 64
"""Nesting of mappings and lists in an input file."""
MAX_NUMBER_DIGITS = 30
"""Digits of one number in an input file."""
MAX_NODES = 200_000
"""Values in one input file, counted with YAML aliases expanded."""


def _is_absolute_ref(ref: str) -> bool:
    return PurePosixPath(ref).is_absolute() or PureWindowsPath(ref).is_absolute() or ref.startswith("~")


MAX_REPO_LEVELS = 8
"""How many folders above an eval file :func:`repo_root` looks for a ``.git``."""


def repo_root(eval_file: Path) -> Path | None:
    """The repository an eval file is in (the nearest folder above it, within
    :data:`MAX_REPO_LEVELS`, holding ``.git``), or None."""
    folder = eval_file.resolve().parent
    for candidate in (folder, *list(folder.parents)[:MAX_REPO_LEVELS]):
        if (candidate / ".git").exists():
            return candidate
    return None


def confined(ref: str, eval_file: Path, field: str, *, root: Path | None = None) -> Path:
    """``ref`` (as written in ``eval_file``) resolved relative to it, inside ``root`` (default:
    the eval's project, :func:`agentsproof.core.project.project_root`), or InputError."""
    from agentsproof.core.project import resolve_ref

    return resolve_ref(ref, eval_file, field, root=root, must_exist=False)


def read_regular(path: Path, *, source: str, field: str | None, max_bytes: int, what: str = "file") -> bytes:
    """The bytes of a regular file of at most ``max_bytes``; InputError otherwise.

    ``source``/``field`` name where the reference was written (for the message)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise InputError(source, field, f"{what} {display(path)!r} not found" if field else "file not found") from None
    except OSError as err:
        raise InputError(source, field, f"cannot read {display(path)!r}: {err.strerror or err}") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(source, field, f"{display(path)!r} is a directory, expected a {what}")
    if not stat.S_ISREG(st.st_mode):
        raise InputError(source, field, f"{display(path)!r} is not a regular file (a FIFO, socket or device); refusing to read it")
    if st.st_size > max_bytes:
        raise InputError(source, field, f"{display(path)!r} is {st.st_size:,} bytes; the limit is {max_bytes:,}")
    try:
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as err:
        raise InputError(source, field, f"cannot read {display(path)!r}: {err.strerror or err}") from None
    if len(data) > max_bytes:
        raise InputError(source, field, f"{display(path)!r} is over {max_bytes:,} bytes, the limit")
    return data


def decode_text(data: bytes, *, source: str, field: str | None, name: str) -> str:
    """``data`` as UTF-8 text; InputError naming ``name`` when it is not."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(source, field, f"{name} is not UTF-8 text") from None


def read_text(path: Path, *, source: str, field: str | None, max_bytes: int, what: str = "file") -> str:
    """A regular file of at most ``max_bytes`` as UTF-8 text; InputError otherwise (see :func:`read_regular`)."""
    data = read_regular(path, source=source, field=field, max_bytes=max_bytes, what=what)
    return decode_text(data, source=source, field=field, name=f"{display(path)!r}" if field else "the file")


# ---------------------------------------------------------------------------------------
# Strict YAML and JSON


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys, deep nesting and oversized numbers."""

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, Any] = {}
            for key_node, _ in node.value:
                try:
                    key = self.construct_object(key_node, deep=True)
                    hash(key)
                except (TypeError, yaml.constructor.ConstructorError):
                    continue  # the base class reports unhashable keys
                if key in seen:
                    raise _Problem(f"line {key_node.start_mark.line + 1}", f"duplicate key {key!r}")
                seen[key] = True
        return super().construct_mapping(node, deep=deep)


class _Problem(Exception):
    def __init__(self, where: str, message: str):
        super().__init__(message)
        self.where = where
        self.message = message


def _check_numbers_scalar(node: Any) -> None:
    value = node.value
    digits = sum(ch.isdigit() for ch in value)
    if digits > MAX_NUMBER_DIGITS:
        raise _Problem(f"line {node.start_mark.line + 1}", f"number with {digits} digits; at most {MAX_NUMBER_DIGITS} are allowed")


def _children(node: Any) -> list[Any]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def _check_tree(root: Any) -> None:
    """Depth, size and number checks on the YAML node graph, iteratively (no recursion).

    Aliases share nodes, so the size counted is the size once expanded: a "billion laughs"
    document is refused here instead of expanding in memory; an alias to itself too."""
    sizes: dict[int, int] = {}
    visiting: set[int] = set()
    stack: list[tuple[Any, int, bool]] = [(root, 1, False)]
    while stack:
        node, depth, post = stack.pop()
        nid = id(node)
        line = f"line {node.start_mark.line + 1}"
        if post:
            sizes[nid] = 1 + sum(sizes[id(k)] for k in _children(node))
            visiting.discard(nid)
            if sizes[nid] > MAX_NODES:
                raise _Problem(line, f"expands to more than {MAX_NODES:,} values (aliases included)")
            continue
        if depth > MAX_DEPTH:
            raise _Problem(line, f"nested deeper than {MAX_DEPTH} levels")
        if nid in sizes:
            continue
        if nid in visiting:
            raise _Problem(line, "an alias refers to the node that contains it")
        if isinstance(node, yaml.ScalarNode):
            if node.tag in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float"):
                _check_numbers_scalar(node)
            sizes[nid] = 1
            continue
        visiting.add(nid)
        stack.append((node, depth, True))
        stack.extend((child, depth + 1, False) for child in _children(node))


def load_yaml_text(text: str, source: str) -> Any:
    """Parse YAML strictly; InputError (naming ``source``) on any problem."""
    loader = _StrictLoader(text)
    try:
        try:
            node = loader.get_single_node()
            if node is None:
                return None
            _check_tree(node)
            data = loader.construct_document(node)
        finally:
            loader.dispose()
    except _Problem as p:
        raise InputError(source, p.where, p.message) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "YAML"
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(source, where, f"invalid YAML: {problem}") from None
    except RecursionError:
        raise InputError(source, None, f"invalid YAML: nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:  # e.g. int() of a huge literal
        raise InputError(source, None, f"invalid YAML: {exc}") from None
    _check_values(data, source)
    return data


def _json_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise _Problem("", f"duplicate key {k!r}")
        out[k] = v
    return out


def _json_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_NUMBER_DIGITS:
        raise _Problem("", f"number with {len(text.lstrip('-'))} digits; at most {MAX_NUMBER_DIGITS} are allowed")
    return int(text)


def _json_float(text: str) -> float:
    if sum(ch.isdigit() for ch in text) > MAX_NUMBER_DIGITS:
        raise _Problem("", f"number with more than {MAX_NUMBER_DIGITS} digits")
    return float(text)


def _json_const(name: str) -> Any:
    raise _Problem("", f"{name} is not a valid JSON number")


def json_depth_ok(text: str, limit: int = MAX_DEPTH) -> bool:
    """True when brackets outside strings nest at most ``limit`` deep (linear, no recursion;
    the same scan that guards provider replies)."""
    return json_depth(text.encode("utf-8", "surrogatepass")) <= limit


def load_json_text(text: str, source: str, *, allow_nul: bool = False) -> Any:
    """Parse JSON strictly (duplicate keys, depth, number size, no NaN/Infinity; no NUL in
    a string unless ``allow_nul``: a recorded trajectory may hold one)."""
    if not json_depth_ok(text):
        raise InputError(source, None, f"invalid JSON: nested deeper than {MAX_DEPTH} levels")
    try:
        data = json.loads(text, object_pairs_hook=_json_pairs, parse_int=_json_int, parse_float=_json_float, parse_constant=_json_const)
    except _Problem as p:
        raise InputError(source, None, f"invalid JSON: {p.message}") from None
    except json.JSONDecodeError as exc:
        raise InputError(source, f"line {exc.lineno}", f"invalid JSON: {exc.msg}") from None
    except (ValueError, RecursionError) as exc:
        raise InputError(source, None, f"invalid JSON: {exc}") from None
    _check_values(data, source, allow_nul=allow_nul)
    return data


def _check_values(data: Any, source: str, *, allow_nul: bool = False, where: str = "") -> None:
    """Non-finite floats anywhere (YAML's .inf / .nan) are refused, naming the field; so
    is a NUL character in any text or key (an instruction, a prompt, an env value: no
    process argument, environment or C string can hold one) unless ``allow_nul``."""
    stack: list[tuple[Any, str]] = [(data, where)]
    seen: set[int] = set()
    while stack:
        value, where = stack.pop()
        if isinstance(value, (dict, list)):
            if id(value) in seen:
                continue
            seen.add(id(value))
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(source, where or None, f"{value} is not a finite number")
        if isinstance(value, str) and not allow_nul and "\x00" in value:
            raise InputError(source, where or None, "holds a NUL character (no prompt, command argument or environment value can)")
        if isinstance(value, dict):
            for k, v in value.items():
                name = str(k).replace("\x00", "\\0")
                if not allow_nul and "\x00" in str(k):
                    raise InputError(source, f"{where}.{name}" if where else name, "the key holds a NUL character")
                stack.append((v, f"{where}.{k}" if where else str(k)))
        elif isinstance(value, list):
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(value))


def check_values(data: Any, source: str, where: str = "") -> None:
    """The checks every parsed input file gets (finite numbers, no NUL), for a value parsed
    elsewhere (a line of a JSON Lines file); ``where`` prefixes the field named."""
    _check_values(data, source, where=where)


_READ_ONCE: ContextVar[dict[tuple[str, int], Any] | None] = ContextVar("agentsproof_read_once", default=None)


@contextmanager
def read_once() -> Iterator[None]:
    """Within this block a YAML file is read and parsed once: a format's detection (an
    EVAL.yaml is told apart by its keys) and its loader share the parse."""
    token = _READ_ONCE.set({})
    try:
        yield
    finally:
        _READ_ONCE.reset(token)


_PARSED: ContextVar[dict[str, Any] | None] = ContextVar("agentsproof_parsed_as", default=None)


@contextmanager
def parsed_as(path: Path, data: Any) -> Iterator[None]:
    """Within this block, reading ``path`` as YAML or JSON gives a copy of ``data`` instead
    of the file's parse (nothing is written): lint loads a file again with the fields its
    loader refused taken out, to find the file's other problems in the same run."""
    token = _PARSED.set({os.path.realpath(path): data})
    try:
        yield
    finally:
        _PARSED.reset(token)


def _parsed(path: Path) -> tuple[bool, Any]:
    given = _PARSED.get()
    key = os.path.realpath(path)
    if given is not None and key in given:
        return True, copy.deepcopy(given[key])
    return False, None


def read_yaml_file(path: Path, *, max_bytes: int = MAX_EVAL_FILE_BYTES) -> Any:
    """A YAML file read through :func:`read_text` and parsed strictly; inside :func:`read_once`, parsed once (each caller gets its own copy)."""
    substituted, data = _parsed(path)
    if substituted:
        return data
    memo = _READ_ONCE.get()
    key = (os.path.realpath(path), max_bytes)
    if memo is not None and key in memo:
        return copy.deepcopy(memo[key])
    src = display(path)
    data = load_yaml_text(read_text(path, source=src, field=None, max_bytes=max_bytes), src)
    if memo is not None:
        memo[key] = copy.deepcopy(data)
    return data


def read_json_file(path: Path, *, max_bytes: int = MAX_EVAL_FILE_BYTES, allow_nul: bool = False) -> Any:
    """A JSON file read through :func:`read_text` and parsed strictly (:func:`load_json_text`)."""
    substituted, data = _parsed(path)
    if substituted:
        return data
    src = display(path)
    return load_json_text(read_text(path, source=src, field=None, max_bytes=max_bytes), src, allow_nul=allow_nul)


# ---------------------------------------------------------------------------------------
# Names that become file names


def safe_name(name: str, fallback: str = "item") -> str:
    """``name`` as one safe path component: letters, digits, ``.``, ``_``, ``-``; never
    empty, never ``.``/``..``, no separators, no undecodable bytes, at most 100 chars."""
    out = []
    for ch in name:
        if ch.isalnum() or ch in "._-":
            try:
                ch.encode("utf-8")
            except UnicodeEncodeError:
                ch = "-"
            out.append(ch)
        else:
            out.append("-")
    text = "".join(out).strip("-.")
    while "--" in text:
        text = text.replace("--", "-")
    return text[:100] or fallback
