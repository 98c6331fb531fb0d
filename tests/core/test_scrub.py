"""The scrubber (agentsproof.core.scrub): every form of a registered secret masked, before
any cut, fragments left at a string's ends by a cut elsewhere masked too."""

from __future__ import annotations

import html
import json
import sys
from urllib.parse import quote, quote_plus

from agentsproof.core import scrub as s
from agentsproof.model.results import LogEvent, TrialResult

TOKEN = "tok-SECRET-0123456789\r"


def test_every_form_of_a_registered_secret_is_masked() -> None:
    s.register(TOKEN)
    for shown in (TOKEN, TOKEN.strip(), repr(TOKEN)[1:-1], json.dumps(TOKEN)[1:-1], quote(TOKEN, safe=""), quote_plus(TOKEN),
                  html.escape(TOKEN), json.dumps(repr(TOKEN)[1:-1])[1:-1]):
        assert s.scrub(f"before {shown} after") == "before *** after", shown


def test_nothing_is_masked_before_a_secret_is_registered_and_short_values_never() -> None:
    assert s.scrub("tok-SECRET-0123456789") == "tok-SECRET-0123456789"
    s.register("abc", "", None)
    assert not s.active() and s.scrub("abc abc") == "abc abc"


def test_clip_masks_before_it_cuts() -> None:
    s.register(TOKEN)
    text = "x" * 290 + TOKEN.strip() + " tail"
    assert s.clip(text, 300) == "x" * 290 + "*** tail"
    cut = text[:299] + "…"  # the old order: cut first, then mask
    assert s.scrub(cut) == cut and "tok-SECRE" in cut
    assert s.scrub_string(cut) == "x" * 290 + "***…"
    assert s.scrub_string("0123456789\r and more").startswith("***")  # a tail kept by a cut from the left
    assert s.scrub_string("ends with tok-S") == "ends with tok-S", "fragments shorter than 6 characters stay"


def test_scrub_model_masks_every_string_in_a_trial_in_place() -> None:
    s.register(TOKEN)
    trial = TrialResult(index=0, arm="with", status="errored", error="boom " + TOKEN, response=TOKEN.strip(),
                        log=[LogEvent(t=0, role="info", text="stderr: " + repr(TOKEN))],
                        tool_calls=[{"name": "get", "arguments": json.dumps({"auth": TOKEN})}])
    assert s.scrub_model(trial) is trial
    assert "SECRET" not in trial.model_dump_json()
    assert trial.error == "boom ***" and trial.response == "***"


def test_expanded_vars_are_digested_with_a_salt_never_kept_as_values_in_the_digest() -> None:
    s.register_var("MY_KEY", "value-one-1234")
    one = s.var_digests("salt-a", ["MY_KEY", "UNUSED"])
    assert list(one) == ["MY_KEY"] and "value-one" not in json.dumps(one)
    assert s.var_digests("salt-b", ["MY_KEY"]) != one, "the salt changes the digest"
    s.register_var("MY_KEY", "value-two-1234")
    assert s.var_digests("salt-a", ["MY_KEY"]) != one
    assert s.scrub("value-one-1234 value-two-1234") == "*** ***"


def test_the_console_stream_masks_what_is_written(capsys) -> None:
    s.register(TOKEN)
    with s.scrubbed_console():
        print("error: " + TOKEN.strip(), file=sys.stderr)
        print(repr(TOKEN))
    out, err = capsys.readouterr()
    assert err == "error: ***\n" and out == "'***'\n"


def test_secret_named_environment_values_are_registered_others_not() -> None:
    s.register_environment({"OPENAI_API_KEY": "sk-live-abcdef123", "GH_TOKEN": "ghp_0123456789", "MY_SECRET": "hunter22hunter",
                            "TOKENIZERS_PARALLELISM": "false-ish-value", "SHORT_TOKEN": "true", "HOME": "/home/someone"})
    text = s.scrub("sk-live-abcdef123 ghp_0123456789 hunter22hunter false-ish-value true /home/someone")
    assert text == "*** *** *** false-ish-value true /home/someone"


def test_there_is_one_scrubber():
    """No module of the harness but core/scrub defines a scrub function or its own length
    floor, and none imports a scrubber from anywhere else (the providers once had their own)."""
    import re
    from pathlib import Path

    import agentsproof
    from agentsproof.llm import base

    assert not hasattr(base, "scrub") and not hasattr(base, "scrub_url")
    root = Path(agentsproof.__file__).parent
    found = [
        str(p.relative_to(root)) for p in root.rglob("*.py")
        if p.relative_to(root).parts[0] != "sdk" and p.name != "scrub.py"
        and re.search(r"^(def scrub\w*\(|MIN_SECRET_CHARS\s*=)", p.read_text(encoding="utf-8"), re.M)
    ]
    assert found == []


def test_scrub_text_masks_url_credentials_then_registered_secrets():
    s._reset_for_tests()
    try:
        s.register("registered-secret")
        text = "GET https://u:pw@host.example/v1?api_key=abc&x=1 failed; token registered-secret"
        assert s.scrub_text(text) == "GET https://***@host.example/v1?api_key=***&x=1 failed; token ***"
        assert s.scrub(text) == "GET https://u:pw@host.example/v1?api_key=abc&x=1 failed; token ***"
    finally:
        s._reset_for_tests()


def test_fragments_at_either_end_with_or_without_a_cut_mark_and_of_extra_secrets() -> None:
    s.register(TOKEN)
    assert s.scrub_string("said tok-SECRET-01") == "said ***", "a bare fragment at the end"
    assert s.scrub_string("...ET-0123456789 more") == "...*** more", "after a leading cut mark"
    assert s.scrub_string("plain words, nothing cut") == "plain words, nothing cut"
    assert s.scrub_data({"k": ["x extra-secret-val"], "extra-secre": 1}, ["extra-secret-value"]) == {"k": ["x ***"], "***": 1}
    assert s.scrub_string("x extra-secret-val") == "x extra-secret-val", "an extra secret is not registered"
    s.register("later-registered-9876")
    assert s.scrub_data(["a later-registered-98"]) == ["a ***"], "the masker follows a later registration"


TRICKY = [
    TOKEN,  # a trailing \r: raw, repr-, JSON-escaped and stripped forms differ
    'pa"ss\\wörd-Ω-1234',  # a quote, a backslash, non-ASCII: its JSON-escaped forms are not its raw ones
    "  spaced   secret\tvalue  ",  # stripped and whitespace-collapsed forms, a tab
    "emoji-🔑-key-0001",  # outside the BMP: a surrogate pair when JSON-escaped
    "a&b<c>d'e-html-key",  # HTML-escaped forms
    "n1234567-starts-like-an-escape",
]


def _shown(secret: str) -> list[str]:
    """Texts that hold the secret in the forms a message shows it in, and fragments of it."""
    forms = sorted(s.forms(secret), key=len)
    out = [f"before {f} after" for f in forms]
    for f in forms:
        out += [f"cut here {f[: len(f) - 2]}", f"{f[2:]} kept by a cut from the left", f"cut {f[:-1]}…", f"...{f[1:]} tail"]
    out += [secret, f"{secret}{secret}", f"x{json.dumps(secret)}y", json.dumps({"inner": secret})]
    return out


def test_scrub_json_is_the_walk_then_the_text_scrub_for_every_form_and_fragment() -> None:
    for secret in TRICKY:
        s._reset_for_tests()
        try:
            s.register(secret)
            for text in _shown(secret):
                value = {"type": "trial", "text": text, "log": [{"t": 0.5, "text": text}, text], text[:40]: [text, 1, None, True]}
                want = s.scrub(json.dumps(s.scrub_data(value)))
                got = s.scrub_json(value)
                assert got == want, (secret, text)
                assert json.loads(got) == json.loads(want)
                for form in s.forms(secret):
                    assert form not in got and json.dumps(form)[1:-1] not in got, (secret, text, form)
        finally:
            s._reset_for_tests()


def test_scrub_json_without_a_secret_in_the_value_is_plain_json() -> None:
    value = {"response": "OK", "log": [{"role": "user", "text": "Reply with OK."}], "n": 3, "ok": True}
    assert s.scrub_json(value) == json.dumps(value), "nothing registered"
    s.register("sk-registered-0001", 'q"uote\\d-secret')
    assert s.scrub_json(value) == json.dumps(value), "nothing of a secret in it"
    near = {"a": "sk-registered-000", "b": "ote\\d-secret and more", "c": 'q"uote\\d-secre'}
    assert s.scrub_json(near) == s.scrub(json.dumps(s.scrub_data(near)))
    assert json.loads(s.scrub_json(near)) == {"a": "***", "b": "*** and more", "c": "***"}
    s.register("later-registered-9876")
    assert s.scrub_json({"x": "a later-registered-98"}) == '{"x": "a ***"}', "the probes follow a later registration"


def test_scrub_json_agrees_with_the_walk_on_random_pieces_of_forms() -> None:
    import random

    rng = random.Random(36)
    for secret in TRICKY:
        s._reset_for_tests()
        try:
            s.register(secret)
            forms = sorted(s.forms(secret))
            for _ in range(300):
                parts = []
                for _ in range(rng.randint(1, 3)):
                    f = rng.choice(forms)
                    i = rng.randint(0, len(f) - 1)
                    parts.append(f[i : rng.randint(i + 1, len(f))])
                    parts.append(rng.choice(["", " ", "…", "...", '"', "\\", "\n", "x"]))
                text = "".join(parts)
                value = {text: [text, {"k": text}], "n": 1}
                assert s.scrub_json(value) == s.scrub(json.dumps(s.scrub_data(value))), (secret, text)
        finally:
            s._reset_for_tests()


def test_scrub_model_walks_str_and_int_subclasses_and_leaves_plain_scalars_as_they_are() -> None:
    import enum

    from pydantic import BaseModel

    class Kind(str, enum.Enum):
        SECRET = "tok-SECRET-0123456789"

    class Level(enum.IntEnum):
        ONE = 1

    class Row(BaseModel):
        n: int = 3
        x: float = 0.5
        ok: bool = True
        none: None = None
        kind: str = ""
        level: int = 0
        nested: list[dict[str, str]] = []

    s.register(TOKEN)
    row = Row(kind=Kind.SECRET, level=Level.ONE, nested=[{TOKEN.strip(): "value " + TOKEN.strip()}])
    assert s.scrub_model(row) is row
    assert (row.n, row.x, row.ok, row.none, row.level) == (3, 0.5, True, None, 1)
    assert row.kind == "***" and row.nested == [{"***": "value ***"}]


def test_secret_name_tells_a_secret_holding_name() -> None:
    from agentsproof.core.scrub import secret_name

    for name in ("OPENAI_API_KEY", "api_key", "apikey", "GITHUB_TOKEN", "db_password", "CLIENT_SECRET", "credentials"):
        assert secret_name(name), name
    for name in ("model", "keyboard", "tokens_used", "trials", "output"):
        assert not secret_name(name), name
