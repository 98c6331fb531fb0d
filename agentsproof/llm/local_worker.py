"""The worker process of the ``local`` provider: loads the GGUF model once, serves calls.

Run as ``python -m agentsproof.llm.local_worker --parent-pid PID`` by
:mod:`agentsproof.llm.local_pool`, never by hand. A native fault in llama.cpp (SIGSEGV,
SIGILL, an abort) or an OOM kill ends only this process; the parent turns the call it was
serving into an errored trial and starts a new worker.

Protocol: length-prefixed JSON frames (4-byte big-endian length, then UTF-8 JSON) on
stdin (requests) and on the original stdout (replies). File descriptor 1 is re-pointed at
stderr so that nothing llama.cpp prints can corrupt a frame.

1. parent -> ``{"model_path", "n_ctx", "threads", "slot", "spawn"}`` (the settings)
2. worker -> ``{"ok": true, "ready": true, "pid", "load_s"}`` after loading the model and
   running a few tokens through it (a build that cannot run on this CPU faults here, at
   start-up, rather than in a trial), or ``{"ok": false, "kind": "load_failed", "error"}``
3. then, one at a time: ``{"messages", "params"}`` -> ``{"ok": true, "text", "usage",
   "latency_s"}`` or ``{"ok": false, "kind", "error"}``.

The worker exits on stdin EOF, dies with its parent (``PR_SET_PDEATHSIG``) and ignores
SIGINT (a Ctrl-C reaches the whole process group; the parent shuts workers down). Its
process name shows its state: ``apw:loading``, ``apw:idle``, ``apw:busy``.

This module imports only the standard library and, once the settings arrive, llama_cpp:
none of the harness (pydantic, the runner, the graders).

Test hook (for the crash tests only, not a setting): ``AGENTSPROOF_LOCAL_WORKER_FAULT`` is a
comma-separated list of ``segv-at-start``, ``ill-at-start``, ``exit-at-start`` (every
worker process faults after loading the model), ``segv-on-call:N`` and ``hang-on-call:N``
(the first process of each pool slot faults / sleeps forever during its N-th call).
"""

from __future__ import annotations

import json
import os
import signal
import struct
import sys
import time
from typing import IO, TYPE_CHECKING, Any, BinaryIO, cast

if TYPE_CHECKING:
    from llama_cpp.llama_types import ChatCompletionRequestMessage

ENV_FAULT = "AGENTSPROOF_LOCAL_WORKER_FAULT"
MAX_FRAME = 256 * 1024 * 1024
_HEADER = struct.Struct(">I")
_PR_SET_PDEATHSIG = 1
_PR_SET_NAME = 15
# A prompt-sized batch (~30 tokens), so the warm-up takes the same matrix kernels as a call.
_WARM_UP = b"You are a helpful assistant. Answer the customer's question about the parcel that arrived late, politely and briefly."
# Per-message overhead of a chat template, used only when a GGUF has no template of its own.
_FALLBACK_TOKENS_PER_MESSAGE = 8


def read_frame(stream: IO[bytes]) -> Any | None:
    """The next frame's JSON value, or None at end of file (also for a truncated frame)."""
    header = _read_exactly(stream, _HEADER.size)
    if header is None:
        return None
    (size,) = _HEADER.unpack(header)
    if size > MAX_FRAME:
        raise ValueError(f"frame of {size} bytes exceeds {MAX_FRAME}")
    body = _read_exactly(stream, size)
    return None if body is None else json.loads(body)


def _read_exactly(stream: IO[bytes], n: int) -> bytes | None:
    chunks = []
    while n:
        chunk = stream.read(n)
        if not chunk:
            return None
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def encode_frame(value: Any) -> bytes:
    """``value`` as one frame: its 4-byte big-endian length, then its UTF-8 JSON."""
    body = json.dumps(value, ensure_ascii=False).encode("utf-8")
    return _HEADER.pack(len(body)) + body


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _prctl(option: int, arg: Any) -> None:
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(option, arg, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux
        pass


def _die_with_parent(parent_pid: int) -> None:
    _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)  # elsewhere stdin EOF still ends the worker
    if parent_pid and os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(0)


def set_state(state: str) -> None:
    """Show the worker's state as its process name (``ps``, ``top``, /proc/PID/comm):
    ``apw:loading``, ``apw:idle`` or ``apw:busy`` (generating a reply)."""
    _prctl(_PR_SET_NAME, f"apw:{state}".encode()[:15])


class _Faults:
    """The test hook described in the module docstring."""

    def __init__(self, spec: str, first_spawn: bool):
        self.at_start: str | None = None
        self.on_call: dict[int, str] = {}
        for part in filter(None, (p.strip() for p in spec.split(","))):
            what, _, n = part.partition(":")
            if what.endswith("-at-start"):
                self.at_start = what[: -len("-at-start")]
            elif what.endswith("-on-call") and first_spawn:
                self.on_call[int(n or 1)] = what[: -len("-on-call")]

    @staticmethod
    def fire(what: str | None) -> None:
        if what == "segv":
            os.kill(os.getpid(), signal.SIGSEGV)
        elif what == "ill":
            os.kill(os.getpid(), signal.SIGILL)
        elif what == "exit":
            os._exit(3)
        elif what == "hang":
            while True:
                time.sleep(3600)


class Model:
    """One llama.cpp instance and the prompt-length check of the provider."""

    def __init__(self, model_path: str, n_ctx: int, threads: int):
        from llama_cpp import Llama

        # n_ctx 0: llama.cpp reads the context the model was trained for from the GGUF
        self.llm = Llama(model_path=model_path, n_ctx=n_ctx, n_threads=threads, n_threads_batch=threads, verbose=False)
        self.n_ctx = self.llm.n_ctx()
        self._formatter = _chat_formatter(self.llm)

    def warm_up(self) -> None:
        """Run a few tokens through every layer, so a CPU fault happens now, not in a trial."""
        self.llm.eval(self.llm.tokenize(_WARM_UP, add_bos=True))
        self.llm.reset()

    def prompt_tokens(self, messages: list[dict[str, str]]) -> int:
        """Prompt length in tokens, formatted with the model's own chat template."""
        llm = self.llm
        if self._formatter is not None:
            text = self._formatter(messages=messages).prompt
            return len(llm.tokenize(text.encode("utf-8"), add_bos=False, special=True))
        total = 0
        for msg in messages:
            total += len(llm.tokenize(str(msg.get("content", "")).encode("utf-8"), add_bos=False, special=False))
            total += _FALLBACK_TOKENS_PER_MESSAGE
        return total

    def complete(self, messages: list[dict[str, str]], params: dict[str, Any]) -> dict[str, Any]:
        """One chat completion as a reply frame: text, usage and latency, or ``ok: false`` with a kind (``context_overflow`` when the prompt does not fit)."""
        n_ctx = self.n_ctx
        n_prompt = self.prompt_tokens(messages)
        if n_prompt >= n_ctx:
            return _fail(
                "context_overflow",
                f"context overflow: {n_prompt} prompt tokens > n_ctx {n_ctx} (raise AGENTSPROOF_LOCAL_N_CTX)",
            )
        room = n_ctx - n_prompt
        if room < min(int(params.get("max_tokens") or 16), 16):
            return _fail(
                "context_overflow",
                f"context overflow: {n_prompt} prompt tokens leave {room} of n_ctx {n_ctx} for the reply (raise AGENTSPROOF_LOCAL_N_CTX)",
            )
        t0 = time.perf_counter()
        try:
            out = self.llm.create_chat_completion(messages=cast("list[ChatCompletionRequestMessage]", messages), **params)
        except ValueError as exc:
            # llama-cpp-python's own check ("Requested tokens (N) exceed context window of M")
            return _fail("context_overflow", f"context overflow: {exc} (raise AGENTSPROOF_LOCAL_N_CTX)")
        except RuntimeError as exc:
            return _fail("error", f"llama.cpp failed: {exc}")
        latency = time.perf_counter() - t0
        if not isinstance(out, dict):  # a stream: only returned when stream=True, which is never asked for
            return _fail("error", "llama.cpp returned a stream")
        usage: dict[str, Any] = dict(out.get("usage") or {})
        return {
            "ok": True,
            "text": out["choices"][0]["message"].get("content") or "",
            "usage": {k: int(usage.get(k, 0)) for k in ("prompt_tokens", "completion_tokens", "total_tokens")},
            "latency_s": latency,
        }


def _fail(kind: str, error: str) -> dict[str, Any]:
    return {"ok": False, "kind": kind, "error": error}


def _chat_formatter(llm: Any) -> Any | None:
    """The Jinja chat formatter llama-cpp-python uses for this GGUF, when it uses the GGUF's template."""
    template = llm.metadata.get("tokenizer.chat_template")
    if not template or llm.chat_format != "chat_template.default":
        return None
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    model = llm._model
    eos_id, bos_id = llm.token_eos(), llm.token_bos()
    return Jinja2ChatFormatter(
        template=template,
        eos_token=model.token_get_text(eos_id) if eos_id != -1 else "",
        bos_token=model.token_get_text(bos_id) if bos_id != -1 else "",
        stop_token_ids=[eos_id],
    )


def _serve(requests: BinaryIO, reply_fd: int) -> int:
    set_state("loading")
    init = read_frame(requests)
    if init is None:
        return 0
    faults = _Faults(os.environ.get(ENV_FAULT, ""), first_spawn=int(init.get("spawn", 0)) == 0)
    t0 = time.perf_counter()
    try:
        model = Model(str(init["model_path"]), int(init["n_ctx"]), int(init["threads"]))
    except ImportError as exc:
        _write_all(reply_fd, encode_frame(_fail("load_failed", f"llama-cpp-python could not be imported ({exc})")))
        return 1
    except (ValueError, RuntimeError, OSError) as exc:
        _write_all(reply_fd, encode_frame(_fail("load_failed", f"could not load model {init['model_path']}: {exc}")))
        return 1
    faults.fire(faults.at_start)
    model.warm_up()
    set_state("idle")  # before each reply: "busy" always means a reply is still owed
    _write_all(reply_fd, encode_frame({"ok": True, "ready": True, "pid": os.getpid(), "load_s": time.perf_counter() - t0}))
    calls = 0
    while True:
        req = read_frame(requests)
        if req is None:
            return 0
        set_state("busy")
        calls += 1
        faults.fire(faults.on_call.get(calls))
        try:
            reply = model.complete(req["messages"], req["params"])
        except Exception as exc:  # noqa: BLE001 - any Python-level failure is this call's error, not the worker's
            reply = _fail("error", f"llama.cpp failed: {type(exc).__name__}: {exc}")
        set_state("idle")
        _write_all(reply_fd, encode_frame(reply))


def main(argv: list[str]) -> int:
    """The worker's entry point (``--parent-pid PID``): serves frames until stdin ends; its exit status."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent_pid = int(argv[argv.index("--parent-pid") + 1]) if "--parent-pid" in argv else 0
    _die_with_parent(parent_pid)
    reply_fd = os.dup(1)
    os.dup2(2, 1)  # stray prints (ours or llama.cpp's) go to stderr, never into a frame
    sys.stdout = sys.stderr
    try:
        return _serve(sys.stdin.buffer, reply_fd)
    except BrokenPipeError:  # the parent went away
        return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
