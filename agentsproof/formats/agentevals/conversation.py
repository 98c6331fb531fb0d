"""agentv's multi-turn tests, as agentsproof's multi-turn cases.

::

    tests:
      - id: context-retention
        mode: conversation            # optional; the only mode turns have
        assert: [Keeps the context]   # graded on every reply (turn: all)
        turns:
          - input: What is 15% of 200?
            assert: [Calculates 30]   # graded on this turn's reply (turn: 1)
          - input: Now double that.
            assert: [{type: contains, value: "60"}]
        vars:
          input: [{role: system, content: You are a math tutor.}]

The first turn's input is the case's prompt (after the system messages of ``vars.input``);
each later turn's is a follow-up message sent in the same session, after the reply before it
(:class:`agentsproof.model.items.Case` ``turns``). A turn's assertions grade that turn's reply
(their graders' ``turn: N``), the test's own assertions every reply joined (``turn: all``);
an assertion whose grader reads the whole trial (a script, tool calls) cannot be scoped to a
turn and is refused by name there. ``aggregation: mean`` (agentv's default) is the
assertions' weighted mean; ``min`` (the weakest turn) makes every turn's assertion required:
a trial fails when one of them does not pass in full; ``on_turn_failure: stop`` does the same
(every turn is still sent, the conversation is graded after its last). ``max`` and
``window_size`` are refused by name.

A conversation *history* in ``input`` (user and assistant messages, the last one the
user's) is sent as one user message that quotes the earlier turns (see
:func:`history_prompt`): the chat target and the agents start a fresh session per trial.
"""

from __future__ import annotations

from typing import Any

from agentsproof.core.errors import InputError

CONVERSATION_KEYS = {"turns", "mode", "aggregation", "on_turn_failure"}
"""The test keys of a multi-turn test (``window_size`` is refused by name)."""
TURN_KEYS = {"input", "assert", "assertions", "expected_output", "criteria"}
TURN_MARK = "__turn__"
"""The key an assertion of a turn carries while the test's graders are built (its turn number)."""


def lift(src: str, at: str, raw: dict[str, Any]) -> tuple[dict[str, Any], tuple[Any, ...], list[tuple[str, Any]]]:
    """``raw`` with its turns folded in: the first turn's input as the test's input (after the
    system messages of ``vars.input``), every turn's assertions marked with their turn, and the
    later turns' inputs returned as follow-ups (texts, rendered by the caller), then the turns'
    assertions with their field paths.
    A test without ``turns`` comes back as it is; InputError naming what cannot be honoured."""
    if not (CONVERSATION_KEYS | {"window_size"}) & raw.keys():
        return raw, (), []
    raw = dict(raw)
    if "window_size" in raw:
        raise InputError(src, f"{at}.window_size", "is not supported: each trial keeps the whole conversation in one session")
    turns = raw.pop("turns", None)
    mode = raw.pop("mode", "conversation")
    if mode != "conversation":
        raise InputError(src, f"{at}.mode", f"{mode!r}: the only mode is 'conversation' (with turns)")
    if not isinstance(turns, list) or not turns:
        raise InputError(src, f"{at}.turns", "must be a non-empty list of turns, each with an input")
    aggregation = raw.pop("aggregation", "mean")
    if aggregation not in ("mean", "min"):
        raise InputError(src, f"{at}.aggregation", f"{aggregation!r} is not supported: turns combine by their weighted mean (mean) or each must pass (min)")
    weakest = aggregation == "min"
    failure = raw.pop("on_turn_failure", "continue")
    if failure not in ("continue", "stop"):
        raise InputError(src, f"{at}.on_turn_failure", f"{failure!r}: expected continue or stop")
    weakest = weakest or failure == "stop"  # stop: a failed turn fails the conversation (every turn is still sent)
    if "input" in raw:
        raise InputError(src, f"{at}.input", "give the first message as turns[0].input (system messages in vars.input)")
    variables = dict(raw.get("vars") or {})
    system = variables.pop("input", [])
    if isinstance(system, str) or not isinstance(system, list) or any(not isinstance(m, dict) or m.get("role") != "system" for m in system):
        raise InputError(src, f"{at}.vars.input", "with turns, holds only system messages (the user's come from turns[].input)")
    key = "assertions" if "assertions" in raw else "assert"
    own = [_whole(a) for a in (raw.get(key) or [])]
    follow: list[Any] = []
    scoped: list[tuple[str, Any]] = []
    for n, turn in enumerate(turns, start=1):
        where = f"{at}.turns[{n - 1}]"
        if not isinstance(turn, dict) or "input" not in turn:
            raise InputError(src, f"{where}.input", "required field is missing")
        extra = sorted(str(k) for k in turn if k not in TURN_KEYS)
        if extra:
            raise InputError(src, f"{where}.{extra[0]}", f"unknown key; expected one of {', '.join(sorted(TURN_KEYS))}")
        for k in ("expected_output", "criteria"):
            if k in turn:
                raise InputError(src, f"{where}.{k}", "is not graded per turn; write it as this turn's assert (a criterion)")
        text = turn["input"]
        if isinstance(text, list) and len(text) == 1 and isinstance(text[0], dict) and text[0].get("role") == "user":
            text = text[0].get("content")
        if not isinstance(text, str) or not text.strip():
            raise InputError(src, f"{where}.input", "must be the user's message (text)")
        if n == 1:
            raw["input"] = [*system, {"role": "user", "content": text}]
        else:
            follow.append(text)
        tkey = "assertions" if "assertions" in turn else "assert"
        entries = turn.get(tkey) or []
        if not isinstance(entries, list):
            raise InputError(src, f"{where}.{tkey}", "must be a list")
        scoped += [(f"{where}.{tkey}[{i}]", _scoped(e, n, required=weakest)) for i, e in enumerate(entries)]
    raw["vars"] = variables
    raw[key] = own
    return raw, tuple(follow), scoped


def _scoped(entry: Any, turn: int | str, required: bool = False) -> Any:
    """An assertion marked with the reply it grades (a plain criterion as a one-outcome rubric);
    ``required`` (aggregation: min) makes it a gate the trial fails below."""
    gate = {"required": True} if required else {}
    if isinstance(entry, str):
        return {"type": "rubrics", "criteria": [{"outcome": entry, **gate} if gate else entry], TURN_MARK: turn}
    if isinstance(entry, dict):
        return {**gate, **entry, TURN_MARK: turn}
    return entry


def _whole(entry: Any) -> Any:
    """A test-level assertion of a conversation: every reply joined, where its grader reads replies."""
    return _scoped(entry, "all")


def unmark(asserts: list[tuple[str, Any]]) -> tuple[list[tuple[str, Any]], dict[str, int | str]]:
    """The assertions without their turn marks, and each marked one's turn by its field path."""
    marks = {w: e[TURN_MARK] for w, e in asserts if isinstance(e, dict) and TURN_MARK in e}
    return [(w, {k: v for k, v in e.items() if k != TURN_MARK} if w in marks else e) for w, e in asserts], marks


def mark_of(marks: dict[str, int | str], where: str) -> int | str | None:
    """The turn of the assertion at ``where`` (a member of an assert-set: its set's), None for a test's own."""
    return next((t for w, t in marks.items() if where == w or where.startswith(w + ".")), None)


def scope(src: str, where: str, graders: list[Any], start: int, turn: int | str) -> None:
    """Scope ``graders[start:]`` (one assertion's) to the reply of ``turn`` (``all``: every reply);
    a grader that reads the whole trial stays as it is for ``all`` and is refused for one turn."""
    for i in range(start, len(graders)):
        g = graders[i]
        if "turn" in type(g).model_fields:
            graders[i] = g.model_copy(update={"turn": turn})
        elif turn != "all":
            raise InputError(src, f"{where}.type", f"a {g.type!r} check grades the whole trial, not one turn's reply; put it in the test's assert")


def history_prompt(turns: list[tuple[str, str]]) -> str:
    """A conversation history (role, text; the last the user's) as the one message a fresh
    session is sent: the earlier turns quoted, then the user's last message."""
    *earlier, (_, last) = turns
    lines = ["Earlier in this conversation:"]
    lines += [f"\n{'User' if role == 'user' else 'Assistant'}: {text.strip()}" for role, text in earlier]
    return "\n".join(lines) + "\n\nThe user now says:\n" + last
