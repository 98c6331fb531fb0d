"""The manifest as the reports show it: what the report is about and whether it was signed
(agentsproof.executor.proof writes it; ``agentsproof verify`` checks it; docs/verify.md)."""

from __future__ import annotations

from typing import Any


def manifest_view(manifest: dict[str, Any] | None) -> dict[str, Any] | None:
    """{"facts": [(label, text)], "files": [(path, role, sha256)], "environments": [...], "signed": text} or None."""
    if not isinstance(manifest, dict):
        return None
    sig = manifest.get("signature")
    if isinstance(sig, dict):
        signed = f"signed with SSH key {sig.get('key') or '(fingerprint unknown)'} ({sig.get('tool', 'ssh-keygen -Y sign')}, namespace {sig.get('namespace', 'agentsproof')}); the signature is <report>.json.sig"
    else:
        signed = "not signed"
    trials = manifest.get("trials") or {}
    models = manifest.get("models") or {}
    facts: list[tuple[str, str]] = [
        ("agentsproof", str(manifest.get("agentsproof", ""))),
        ("command line", " ".join(str(a) for a in manifest.get("command_line") or [])),
        ("trials", f"{trials.get('count', 0)}, sha256 {trials.get('sha256', '')}"),
        ("models", ", ".join(f"{k} {v}" for k, v in models.items() if v not in (None, "", [], {}))),
        ("exit code", str(manifest.get("exit_code", "—"))),
        ("signature", signed),
    ]
    for name, row in (manifest.get("agents") or {}).items():
        if isinstance(row, dict):
            facts.append((f"agent {name}", f"{row.get('kind')} · {row.get('program', '')} {row.get('version') or 'version unknown'}"))
    if manifest.get("seeds"):
        facts.append(("seeds", ", ".join(f"{k}={v}" for k, v in manifest["seeds"].items())))
    files = [(path, str((row or {}).get("role", "")), str((row or {}).get("sha256") or "")) for path, row in (manifest.get("files") or {}).items()]
    envs = [
        (str(e.get("dockerfile") or e.get("image") or ""), str(e.get("dockerfile_sha256") or ""), str(e.get("image_id") or "unknown"))
        for e in manifest.get("environments") or []
        if isinstance(e, dict)
    ]
    return {"facts": facts, "files": files, "environments": envs, "signed": signed}


def manifest_html(manifest: dict[str, Any]) -> str:
    """The manifest as an HTML section (every value escaped)."""
    from html import escape as e

    view = manifest_view(manifest)
    if view is None:
        return ""
    rows = "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in view["facts"])
    files = "".join(f"<tr><td>{e(p)}</td><td>{e(r)}</td><td><code>{e(h)}</code></td></tr>" for p, r, h in view["files"])
    out = f"<section id='manifest'><h2>Manifest</h2><table>{rows}</table>"
    if files:
        out += f"<table><tr><th>file</th><th>role</th><th>sha256</th></tr>{files}</table>"
    if view["environments"]:
        envs = "".join(f"<tr><td>{e(a)}</td><td><code>{e(b)}</code></td><td><code>{e(c)}</code></td></tr>" for a, b, c in view["environments"])
        out += f"<table><tr><th>environment</th><th>Dockerfile sha256</th><th>image id</th></tr>{envs}</table>"
    return out + "<p>Check it: <code>agentsproof verify REPORT.json --files DIR</code> (docs/verify.md).</p></section>"
