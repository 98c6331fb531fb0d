"""Script grader: a command run in the trial's workspace after the agent finished.

The command runs with the workspace as its current folder (a chat trial, which has none,
gets a temporary folder holding only the answer file), stdin empty, and agentsproof's environment plus
``AGENTSPROOF_WORKSPACE`` (that folder) and ``AGENTSPROOF_ANSWER_FILE`` (the final answer,
UTF-8, in a temporary folder outside the workspace so that it is not one of the trial's
files). It runs in its own process group, as a command target's agent does (see
:func:`agentsproof.core.procgroup.run_group`): when it exits, times out or grading is
cancelled, every process it started is stopped (SIGTERM, then SIGKILL), and so is one that
left the group but still holds its output (what was printed until then counts). Of its
output, the first and the last MB of stdout and the last 40 lines of stderr are kept, so
the score line at the end of a long output is still read.

Exit 0 passes (score 1) and any other exit fails (score 0), with the end of stderr (or
stdout) as evidence; but when the last non-empty line of stdout (or the whole of it, when
it was all kept) is a JSON object with a ``score``, that score counts, with its ``details``
and ``checks`` (skillgrade's format). A score that is not a number from 0 to 1, a command that cannot be
started and a timeout error the grader.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import shlex
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_validator

from agentsproof.core import confine
from agentsproof.core.units import seconds
from agentsproof.grading.agentv_payload import with_score
from agentsproof.grading.base import GradeInput, GraderEntry
from agentsproof.grading.context import TrialContext
from agentsproof.grading.hooks import ConvertCase, Finding, LintCase, LintFact
from agentsproof.grading.judge import Judge
from agentsproof.model.graders import MAX_WEIGHT, FieldError, Strict, script_path
from agentsproof.model.results import CheckResult, GraderResult

MAX_SCRIPT_TIMEOUT = 3600.0


SCRIPT_INTERPRETERS = {".py": "python3", ".sh": "sh", ".bash": "bash", ".js": "node", ".mjs": "node", ".cjs": "node"}
"""How a ``script:`` file is run, by extension; other files are run directly (executable)."""


class ScriptGrader(Strict):
    """A command run in the trial's workspace after the agent finished.

    Accepted forms (exactly one of them)::

        run: pytest -q tests/          # a shell command (sh -c), skillgrade's form
        run: [python3, check.py]       # an argv list, no shell
        command: ...                   # the same as run
        script: checks/verify.py       # a file in the workspace, run by its extension:
                                       # .py python3, .sh sh, .bash bash, .js/.mjs/.cjs node,
                                       # anything else directly (it must be executable)

    skillgrade's deterministic grader (``type: deterministic`` with ``run:`` and no
    ``checks``) is read as this grader.

    Exit 0 = pass (score 1), other exits = fail (score 0), unless stdout's last non-empty
    line (or all of stdout) is a JSON object with a ``score`` from 0 to 1, which is then the
    score, with optional ``details`` (text) and ``checks`` (``[{"name", "passed",
    "message"}]``, skillgrade's output). A score outside 0..1 or a run past the timeout
    errors the grader. The command gets env ``AGENTSPROOF_WORKSPACE`` (its working folder)
    and ``AGENTSPROOF_ANSWER_FILE`` (the final answer, in a file outside the workspace);
    ``stdin: answer`` also gives it the answer on stdin (EVAL.yaml's code-grader), ``stdin:
    json`` agentv's payload ``{"output": ..., "answer": ..., "config": ...}`` (``config`` when given).
    Relative paths in ``run`` and ``script`` are relative to the workspace, so a checker
    file comes from the eval's ``workspace:`` folder (or an absolute path).
    """

    type: Literal["script"]
    run: str | list[Annotated[str, Field(min_length=1)]] | None = Field(None, description="A shell command (run with sh -c), or an argv list. Alias: command.")
    script: str | None = Field(
        None, description="A script file relative to the workspace, run by its extension (.py with python3, .sh with sh, .js with node)."
    )
    stdin: Literal["none", "answer", "json"] = Field(
        "none", description="What the command reads on stdin: nothing, the answer, or agentv's JSON payload {output, answer}."
    )
    timeout: float = Field(
        60.0,
        gt=0,
        le=MAX_SCRIPT_TIMEOUT,
        strict=False,
        allow_inf_nan=False,
        description="Seconds; capped by the trial's timeout. The command and all it started are stopped then.",
    )
    weight: float = Field(1.0, gt=0, le=MAX_WEIGHT, strict=True, allow_inf_nan=False, description="Relative weight in the trial score.")
    payload: dict[str, Any] | None = Field(
        None, description="With stdin: json, more top-level keys of the payload (agentv's composite aggregator reads 'results'); a key set to null is left out."
    )
    config: dict[str, Any] | None = Field(None, description="With stdin: json, given to the command as the payload's 'config' (agentv's script-grader config).")
    provider_calls: int | None = Field(
        None,
        ge=0,
        le=10_000,
        strict=True,
        description="agentv's provider proxy (its 'provider: {max_calls: N}'): the script may call the run's judge model up to N times (grading/provider_proxy.py).",
    )

    @model_validator(mode="before")
    @classmethod
    def _command_alias(cls, data: Any) -> Any:
        if isinstance(data, dict) and "command" in data:
            if "run" in data:
                raise FieldError("command", "is the same as 'run'; keep one")
            data = {("run" if k == "command" else k): v for k, v in data.items()}
        return data

    @field_validator("run")
    @classmethod
    def _not_empty(cls, value: str | list[str] | None) -> str | list[str] | None:
        if (isinstance(value, str) and not value.strip()) or (isinstance(value, list) and not value):
            raise ValueError("is empty; give the command to run")
        return value

    @field_validator("script")
    @classmethod
    def _script_path(cls, value: str | None) -> str | None:
        return None if value is None else script_path(value)

    @model_validator(mode="after")
    def _one_form(self) -> ScriptGrader:
        if self.run is None and self.script is None:
            raise FieldError("run", "required field is missing; give 'run' (a command) or 'script' (a file)")
        if self.run is not None and self.script is not None:
            raise FieldError("script", "give 'run' or 'script', not both")
        return self

    def argv(self, eval_dir: Path | None = None) -> list[str]:
        """What is executed, with the workspace as the working folder. A ``script:`` found
        beside the eval file runs from there (out of the agent's sight); otherwise it is
        looked up in the workspace."""
        if isinstance(self.run, str):
            return ["sh", "-c", self.run]
        if isinstance(self.run, list):
            return list(self.run)
        assert self.script is not None
        beside_eval = eval_dir is not None and (eval_dir / self.script).is_file()
        path = str((eval_dir / self.script).resolve()) if beside_eval and eval_dir is not None else self.script
        interpreter = SCRIPT_INTERPRETERS.get(PurePosixPath(self.script).suffix.lower())
        if interpreter:
            return [interpreter, path]
        return [path if path.startswith(("/", "./")) else "./" + path]

    def shown(self) -> str:
        """The command as written, on one line, for reports."""
        if isinstance(self.run, str):
            text = " ".join(self.run.split())
        elif isinstance(self.run, list):
            text = shlex.join(self.run)
        else:
            text = f"script {self.script}"
        return text if len(text) <= 200 else text[:199] + "…"


def _skillgrade_forms(value: Any) -> Any:
    """skillgrade's script grader (``type: deterministic`` with ``run:``) is our ``script``."""
    if isinstance(value, dict) and value.get("type") == "deterministic" and "checks" not in value and ("run" in value or "command" in value):
        return {**value, "type": "script"}
    return value


ANSWER_FILE = "answer.txt"
TAIL_BYTES = 1024 * 1024
"""Of a stdout longer than the first MB kept: its last bytes, where the score line is."""
EVIDENCE_LINES = 15
EVIDENCE_CHARS = 1_500
MAX_SCRIPT_CHECKS = 100
_TEXT = 500


def _errored(spec: ScriptGrader, reason: str) -> GraderResult:
    return GraderResult(type="script", weight=spec.weight, errored=True, error=reason)


def _tail(text: str) -> str:
    lines = [line.rstrip() for line in text.strip().splitlines()][-EVIDENCE_LINES:]
    out = "\n".join(lines)
    return out if len(out) <= EVIDENCE_CHARS else "…" + out[-EVIDENCE_CHARS:]


def _clip(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= _TEXT else text[: _TEXT - 1] + "…"


def _verdict(stdout: str, whole: bool = True) -> dict[str, Any] | None:
    """The JSON object with a ``score`` (or agentv's ``pass`` / ``checks`` that give one) the script ended
    its output with, if any: its last non-empty line, or (``whole``: all of stdout was read) the whole of it."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    candidates = [lines[-1]] if lines else []
    if whole and stdout.strip().startswith("{") and len(lines) > 1:
        candidates.append(stdout)
    for text in candidates:
        try:
            obj = json.loads(text)
        except (ValueError, RecursionError):
            continue
        if isinstance(obj, dict) and (found := with_score(obj)) is not None:
            return found
    return None


def _script_checks(raw: Any) -> list[CheckResult]:
    """skillgrade's ``checks``: ``[{"name", "passed", "message"}]`` (agentv's ``assertions``:
    ``[{"text", "passed", "evidence"}]``); other entries are skipped."""
    if not isinstance(raw, list):
        return []
    checks = []
    for i, item in enumerate(raw[:MAX_SCRIPT_CHECKS]):
        if not isinstance(item, dict):
            continue
        name = item.get("name", item.get("text"))
        checks.append(
            CheckResult(
                kind="script",
                target=_clip(name) if name not in (None, "") else f"check {i + 1}",
                passed=item.get("passed", item.get("pass")) is True,
                evidence=_clip(item.get("message") or item.get("details") or item.get("evidence") or item.get("reason") or ""),
            )
        )
    return checks


def _stdin(spec: ScriptGrader, answer: str, ctx: TrialContext | None = None) -> str | None:
    if spec.stdin == "answer":
        return answer
    if spec.stdin == "json":  # agentv's script-grader payload
        from agentsproof.grading.agentv_payload import trial_fields

        payload: dict[str, Any] = {"output": answer, "answer": answer}
        if ctx is not None:
            payload.update(trial_fields(ctx, answer))
        if spec.config is not None:
            payload["config"] = spec.config
        payload.update(spec.payload or {})
        payload = {k: v for k, v in payload.items() if v is not None or k not in (spec.payload or {})}  # a None in payload: left out
        return json.dumps(payload, ensure_ascii=False, default=str)
    return None


def _exit_text(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit {code}"


def _from_json(spec: ScriptGrader, obj: dict[str, Any], code: int) -> GraderResult:
    score = obj["score"]
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score) or not 0 <= score <= 1:
        return _errored(spec, f"the script printed score {_clip(score)}; a score must be a number from 0 to 1")
    why = next((obj[k] for k in ("details", "reason", "reasoning") if obj.get(k) not in (None, "")), None)  # agentv: reason
    details = _clip(why) if why is not None else ""
    checks = _script_checks(obj.get("checks", obj.get("assertions")))
    if not checks:
        evidence = f"score {score:g}" + (f": {details}" if details else "") + f" ({_exit_text(code)})"
        checks = [CheckResult(kind="script", target=spec.shown(), passed=score >= 1, evidence=evidence)]
    return GraderResult(type="script", weight=spec.weight, score=float(score), checks=checks, reasoning=details or None)


def _from_exit(spec: ScriptGrader, code: int, stdout: str, stderr: str, cut_note: str = "") -> GraderResult:
    output = _tail(stderr) or _tail(stdout)
    evidence = _exit_text(code) + (f": {output}" if output else " (no output)") + cut_note
    check = CheckResult(kind="script", target=spec.shown(), passed=code == 0, evidence=evidence)
    return GraderResult(type="script", weight=spec.weight, score=1.0 if code == 0 else 0.0, checks=[check])


async def grade_script(spec: ScriptGrader, ctx: TrialContext, judge: Judge | None = None) -> GraderResult:
    """The script's verdict on the trial's workspace (a JSON verdict on stdout, else its exit code); errored when it cannot run or times out.
    With ``provider_calls`` and a ``judge``, the script reaches the judge through agentv's provider proxy."""
    from agentsproof.core import bun
    from agentsproof.core.errors import TargetError
    from agentsproof.core.procgroup import run_group
    from agentsproof.core.rmtree import remove_tree
    from agentsproof.grading.provider_proxy import proxy_for

    timeout = spec.timeout if ctx.timeout is None else min(spec.timeout, ctx.timeout)
    if ctx.environment is not None:
        return await _in_container(spec, ctx, timeout)
    try:
        tmp = tempfile.mkdtemp(prefix="agentsproof-grader-")
    except OSError as err:  # a full or unwritable temp folder
        return _errored(spec, f"cannot prepare the script's answer file in {tempfile.gettempdir()}: {err.strerror or err}")
    try:
        answer = Path(tmp) / ANSWER_FILE
        answer.write_text(ctx.answer, encoding="utf-8", errors="replace")
        folder = ctx.workspace if ctx.workspace is not None else Path(tmp)
        if folder.is_symlink():
            return _errored(spec, "the trial's workspace was replaced by a symlink; the script was not run there")
        if not folder.is_dir():
            return _errored(spec, f"the trial's workspace {folder} is gone")
        folder = folder.resolve()
        env = {**os.environ, "AGENTSPROOF_WORKSPACE": str(folder), "AGENTSPROOF_ANSWER_FILE": str(answer), "AGENTV_WORKSPACE_PATH": str(folder)}
        if ctx.eval_dir is not None:
            env["AGENTSPROOF_EVAL_DIR"] = str(ctx.eval_dir)
        # off the event loop: bun and the project are looked up, the payload reads the trial's files
        env, command, readable, stdin = await asyncio.to_thread(_prepare, spec, ctx, env)
        missing = await asyncio.to_thread(bun.missing_reason, command[0])
        if missing is not None:
            return _errored(spec, f"{missing} (from {spec.shown()})")
        try:
            # confined as a command target is: it reads the project, writes only its workspace (core/confine.py)
            await asyncio.to_thread(confine.bwrap)  # probed once, off the event loop
            argv = confine.confined_argv(command, cwd=folder, writable=[folder, Path(tmp)], readable=readable)
            async with proxy_for(spec.provider_calls, judge, Path(tmp)) as proxy:
                if proxy is not None:
                    env.update(proxy.env())
                run = await run_group(argv, cwd=folder, env=env, stdin_text=stdin, timeout=timeout, keep_tail=TAIL_BYTES)
        except TargetError as err:
            return _errored(spec, f"{err} (from {spec.shown()})")
        if proxy is not None and proxy.failure is not None:
            return _errored(spec, proxy.failure)
    except OSError as err:  # no room for the answer file
        return _errored(spec, f"cannot prepare the script's answer file in {tempfile.gettempdir()}: {err.strerror or err}")
    finally:
        remove_tree(Path(tmp))  # the script may have left anything there: never followed, nothing outside changed
    result = _verdict_of(spec, run, timeout)
    return result if proxy is None else result.model_copy(update={"usage": proxy.usage})


def _prepare(spec: ScriptGrader, ctx: TrialContext, env: dict[str, str]) -> tuple[dict[str, str], list[str], list[Path], str | None]:
    """(env with bun and our agentv module, the command, what it must read, its stdin): blocking, run in a thread."""
    from agentsproof.core import bun

    command = bun.resolve(without_uv(spec.argv(ctx.eval_dir)))
    return bun.runtime_env(env), command, [*_readable(ctx), bun.SDK_DIR], _stdin(spec, ctx.answer, ctx)


def _readable(ctx: TrialContext) -> list[Path]:
    """What a confined script must read besides its own files (everywhere else is readable already; this
    matters under the masked /tmp): the eval's folder and its project (core/project.py's root too)."""
    if ctx.eval_dir is None:
        return []
    from agentsproof.core.project import project_root

    return [ctx.eval_dir, confine.project_of(ctx.eval_dir), project_root(ctx.eval_dir / "eval")]  # a TypeScript grader imports ../lib


GRADER_DIR = "/var/tmp/agentsproof-grader"
"""In a trial's container: where the answer file and a ``script:`` from beside the eval file are copied."""


async def _in_container(spec: ScriptGrader, ctx: TrialContext, timeout: float) -> GraderResult:
    """The script run in the trial's container, in its workdir (the eval's ``script:`` file and the answer copied in first)."""
    from agentsproof.core.errors import IsolationError, TargetError
    from agentsproof.core.procgroup import MAX_OUTPUT_BYTES
    from agentsproof.core.rmtree import remove_tree
    from agentsproof.core.safepath import copy_file, write_file

    box = ctx.environment
    assert box is not None
    tmp = Path(tempfile.mkdtemp(prefix="agentsproof-grader-"))
    try:
        write_file(tmp, ANSWER_FILE, ctx.answer.encode("utf-8", "replace"))
        argv = spec.argv(ctx.eval_dir)
        if spec.script is not None and ctx.eval_dir is not None and (ctx.eval_dir / spec.script).is_file():
            name = PurePosixPath(spec.script).name
            copy_file(ctx.eval_dir / spec.script, tmp, name, cap=MAX_OUTPUT_BYTES * 64)
            argv = [*argv[:-1], f"{GRADER_DIR}/{name}"]
        env = {"AGENTSPROOF_WORKSPACE": box.workdir, "AGENTSPROOF_ANSWER_FILE": f"{GRADER_DIR}/{ANSWER_FILE}", "AGENTSPROOF_EVAL_DIR": GRADER_DIR}
        stdin = _stdin(spec, ctx.answer, ctx)
        try:
            await box.copy_in(tmp, GRADER_DIR)
            res = await box.exec(argv, env=env, timeout=timeout, stdin=stdin.encode("utf-8") if stdin is not None else None)
        except (TargetError, IsolationError) as err:
            return _errored(spec, f"{err} (from {spec.shown()})")
    finally:
        remove_tree(tmp)
    if res.limit:
        return _errored(spec, f"the trial's container hit a limit while the script ran: {res.limit}")
    if res.timed_out:
        return _errored(spec, f"timed out after {seconds(timeout)}; the container was stopped")
    if res.returncode in (126, 127) and not res.stdout:
        return _errored(spec, f"the script could not be run in the container ({_exit_text(res.returncode)}: {_tail(res.stderr.decode('utf-8', 'replace'))})")
    stdout = res.stdout.decode("utf-8", errors="replace")
    obj = _verdict(stdout)
    if obj is not None:
        return _from_json(spec, obj, res.returncode)
    return _from_exit(spec, res.returncode, stdout, res.stderr.decode("utf-8", errors="replace"))


def _verdict_of(spec: ScriptGrader, run: Any, timeout: float) -> GraderResult:
    """The grader's result from a finished host run (:class:`~agentsproof.core.procgroup.Outcome`)."""
    from agentsproof.core.procgroup import MAX_OUTPUT_BYTES

    if run.timed_out:
        return _errored(spec, f"timed out after {seconds(timeout)}; the command and every process it started were stopped")
    if run.stdout_cut:  # the score is on the last line: read it from the tail
        tail = run.stdout_tail.decode("utf-8", errors="replace").split("\n", 1)[-1]
        obj = _verdict(tail, whole=False)
        note = f" (stdout was {run.stdout_bytes:,} bytes; its first {MAX_OUTPUT_BYTES:,} and last {len(run.stdout_tail):,} were kept)"
        if obj is not None:
            return _from_json(spec, obj, run.returncode)
        return _from_exit(spec, run.returncode, tail, "\n".join(line for _, line in run.stderr), note)
    stdout = run.stdout.decode("utf-8", errors="replace")
    obj = _verdict(stdout)
    if obj is not None:
        return _from_json(spec, obj, run.returncode)
    return _from_exit(spec, run.returncode, stdout, "\n".join(line for _, line in run.stderr))


async def grade(spec: ScriptGrader, given: GradeInput) -> GraderResult:
    """The script grader's hook: the command run in the trial's workspace (with agentv's provider proxy to the judge when asked)."""
    return await grade_script(spec, given.context, given.judge)


LINT_INTERPRETERS = ("python", "python3", "sh", "bash", "node", "pytest")
"""Commands lint recognises as running a script file named next (``python3 check.py``)."""


def _run_file(run: str | list[str]) -> str | None:
    """The script a ``run:`` command runs with an interpreter (``python3 check.py``), if any."""
    try:
        argv = shlex.split(run) if isinstance(run, str) else list(run)
    except ValueError:
        return None
    if len(argv) >= 2 and Path(argv[0]).name in LINT_INTERPRETERS and not argv[1].startswith("-"):
        target = argv[1]
        if Path(target).suffix in (".py", ".sh", ".bash", ".js", ".mjs", ".cjs") and not Path(target).is_absolute() and "$" not in target:
            return target
    return None


def lint(spec: ScriptGrader, case: LintCase) -> Iterator[LintFact]:
    """Its script must be beside the eval file or in the workspace seed, and readable; a
    ``run:`` command's script file must be in the seed of an agent eval."""
    where, seed = case.where, case.workspace
    if spec.script is None:
        rel = _run_file(spec.run) if spec.run is not None else None
        if rel is not None and case.agent_mode and not (seed is not None and (seed / rel).is_file()):
            yield Finding(
                f"{where}.run",
                "missing-file",
                f"runs {rel!r} in the workspace, and the workspace seed has no such file: the grader fails unless the agent writes it",
                "add it to the workspace: folder, or use 'script:' with the file beside the eval file",
            )
        return
    beside = case.eval_path.parent / spec.script
    seeded = seed / spec.script if seed is not None else None
    found = beside if beside.is_file() else seeded if seeded is not None and seeded.is_file() else None
    if found is None:
        places = f"beside {case.eval_path.name}" + (f" or in the workspace folder {seed.name}/" if seed else " (and the eval has no workspace: folder)")
        yield Finding(f"{where}.script", "missing-file", f"{spec.script!r} is not {places}", "add the script there or correct the path")
    elif not os.access(found, os.R_OK):
        yield Finding(f"{where}.script", "unreadable-file", f"{spec.script!r} cannot be read", f"make {found.name} readable (chmod +r)")


def to_agentevals(spec: ScriptGrader, case: ConvertCase) -> list[Any]:
    """A ``run:`` command becomes a code-grader; a ``script:`` file has no EVAL.yaml form."""
    if spec.run is None:
        return case.left_out(spec.type)
    case.warn(f"{case.where}: a code-grader runs in the trial's workspace with the answer on stdin; check the command still fits")
    provider = {"provider": {"max_calls": spec.provider_calls}} if spec.provider_calls is not None else {}
    return [{"type": "code-grader", "command": spec.run, **provider, **case.weight}]


GRADER = GraderEntry(
    type="script",
    config=ScriptGrader,
    grade=grade,
    runs_last=True,
    rewrite=_skillgrade_forms,
    lint=lint,
    to_agentevals=to_agentevals,
    reads_workspace=True,
    asks_judge=lambda spec: spec.provider_calls is not None,
)


def without_uv(argv: list[str]) -> list[str]:
    """``uv run [python] X.py ARGS`` (agentv's examples run their Python graders so) as
    ``python3 X.py ARGS`` when uv is not installed: the same script on the Python at hand (a
    script that needs packages uv would install fails on its import, as an errored grader)."""
    import shutil

    if len(argv) < 3 or Path(argv[0]).name != "uv" or argv[1] != "run" or shutil.which("uv") is not None:
        return argv
    rest = argv[2:]
    if rest and Path(rest[0]).name in ("python", "python3"):
        rest = rest[1:]
    if not rest or rest[0].startswith("-") or not rest[0].endswith(".py"):
        return argv
    return [shutil.which("python3") or "python3", *rest]
