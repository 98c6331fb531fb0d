"""Reports signed and checked with a standard tool: OpenSSH's ``ssh-keygen -Y`` (namespace
``agentsproof``), no cryptography of our own. A report ``R.json`` signed with ``--sign KEY``
has its signature in ``R.json.sig`` beside it; ``agentsproof verify --allowed-signers FILE``
checks it (FILE: OpenSSH's allowed-signers format, ``PRINCIPAL KEYTYPE KEY`` per line)."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from agentsproof.core.errors import InputError
from agentsproof.executor.proof import SIG_NAMESPACE

SIG_SUFFIX = ".sig"
TIMEOUT_S = 60


def _ssh_keygen(flag: str) -> str:
    found = shutil.which("ssh-keygen")
    if not found:
        raise InputError("command line", flag, "needs ssh-keygen (OpenSSH; Debian/Ubuntu: apt-get install openssh-client)")
    return found


def check_key(key: Path | None, flag: str = "--sign") -> None:
    """Before a run: ``--sign KEY`` names a readable private key (one line and exit 30 otherwise)."""
    if key is None:
        return
    _ssh_keygen(flag)
    if not Path(key).is_file():
        raise InputError("command line", flag, f"{key}: no such key file")
    try:
        with open(key, "rb"):
            pass
    except OSError as err:
        raise InputError("command line", flag, f"{key}: cannot be read ({err.strerror or err})") from None


def sig_path(report: Path) -> Path:
    """``R.json.sig`` beside ``R.json``."""
    return report.with_name(report.name + SIG_SUFFIX)


def sign_file(report: Path, key: Path) -> Path:
    """Sign ``report`` with ``key``; the signature is written beside it (atomically). InputError when ssh-keygen refuses."""
    from agentsproof.core.safepath import write_file

    exe = _ssh_keygen("--sign")
    data = Path(report).read_bytes()
    try:
        got = subprocess.run([exe, "-Y", "sign", "-f", str(key), "-n", SIG_NAMESPACE], input=data, capture_output=True, timeout=TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError) as err:
        raise InputError("command line", "--sign", f"ssh-keygen could not sign: {err}") from None
    if got.returncode != 0 or not got.stdout.startswith(b"-----BEGIN SSH SIGNATURE-----"):
        why = " ".join(got.stderr.decode("utf-8", "replace").split()) or f"exit {got.returncode}"
        raise InputError("command line", "--sign", f"ssh-keygen could not sign with {key}: {why[:300]}")
    out = sig_path(report)
    write_file(out.parent, out.name, got.stdout)
    return out


@dataclass
class SignatureCheck:
    """The outcome of checking a report's signature."""

    ok: bool
    message: str
    principal: str | None = None


def check_signature(data: bytes, signature: Path, allowed: Path) -> SignatureCheck:
    """Whether ``signature`` is a good ``agentsproof`` signature of ``data`` by a key of
    ``allowed`` (``ssh-keygen -Y find-principals``, then ``-Y verify``)."""
    exe = _ssh_keygen("--allowed-signers")
    if not Path(allowed).is_file():
        raise InputError("command line", "--allowed-signers", f"{allowed}: no such file")
    if not Path(signature).is_file():
        return SignatureCheck(False, f"no signature: {signature.name} is missing")
    try:
        found = subprocess.run(
            [exe, "-Y", "find-principals", "-f", str(allowed), "-s", str(signature), "-n", SIG_NAMESPACE],
            capture_output=True,
            timeout=TIMEOUT_S,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as err:
        return SignatureCheck(False, f"ssh-keygen failed: {err}")
    principals = found.stdout.decode("utf-8", "replace").split()
    if found.returncode != 0 or not principals:
        return SignatureCheck(False, "signed by a key that is not in the allowed signers")
    principal = principals[0]
    try:
        got = subprocess.run(
            [exe, "-Y", "verify", "-f", str(allowed), "-I", principal, "-n", SIG_NAMESPACE, "-s", str(signature)],
            input=data,
            capture_output=True,
            timeout=TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as err:
        return SignatureCheck(False, f"ssh-keygen failed: {err}")
    if got.returncode != 0:
        return SignatureCheck(False, "the signature does not match the report (changed after signing)", principal)
    return SignatureCheck(True, f"good signature by {principal}", principal)
