"""The copilot target inside a trial's container: the Copilot CLI runs there, the SDK here.

How the CLI gets into an arbitrary image without network at trial time: the CLI's
installed package folder on the host (the folder holding its ``node_modules``, e.g.
``.venv/copilot-cli``) is mounted read-only at the same path
(:func:`agentsproof.targets.agents.container.cli_mounts`), and its native binary
(``@github/copilot-linux-x64/copilot``, glibc: Debian and Ubuntu images; the ``linuxmusl``
one on Alpine) is run, not the Node loader. The SDK here speaks to it over the stdio of a
``docker exec -i`` (:func:`wrapper`: a private script the SDK starts as its "CLI"), so one
trial's session is one CLI process in that trial's container, stopped after the trial.

The session's config folder and the staged skills are copied into the container at their
host paths (every path in the session's options holds inside too); the CLI's home
(``COPILOT_HOME``) is a fresh folder in the container. The session works in the
container's workdir; the model endpoint (BYOK's ``AGENTSPROOF_COPILOT_PROVIDER_URL`` on
127.0.0.1) is relayed in (:meth:`agentsproof.targets.copilot.target.CopilotTarget.loopback_ports`).
A GitHub token given in the environment (``GH_TOKEN``, ...) is handed on by name, never on
a command line; a login stored in ``~/.copilot`` is not copied into a container: such a
trial is errored saying so.
"""

from __future__ import annotations

import os
import shlex
import uuid
from pathlib import Path
from typing import Any

from agentsproof.core.errors import TargetError

NATIVE_PACKAGES = ("copilot-linux-x64", "copilot-linux-arm64")
PASSED_ENVS = (
    "COPILOT_HOME",
    "COPILOT_SDK_AUTH_TOKEN",
    "COPILOT_CONNECTION_TOKEN",
    "COPILOT_DISABLE_KEYTAR",
    "GH_TOKEN",
    "GITHUB_TOKEN",
    "COPILOT_GITHUB_TOKEN",
)
"""What the SDK sets for its CLI (and the login tokens), handed into the container by name."""


def native_cli(cli_path: str | None) -> str | None:
    """The CLI's native binary beside its npm loader (``.../node_modules/@github/copilot-<platform>/copilot``), or None."""
    if not cli_path:
        return None
    real = Path(os.path.realpath(cli_path))
    if real.name == "copilot" and real.parent.name.startswith("copilot-linux"):
        return str(real)
    for parent in real.parents:
        if parent.name == "node_modules":
            for package in NATIVE_PACKAGES:
                found = parent / "@github" / package / "copilot"
                if found.is_file():
                    return str(found)
            return None
    return None


def host_ca_bundle() -> Path | None:
    """The host's CA bundle (``SSL_CERT_FILE``, else Debian's): the CLI will not start
    without trust roots, and a minimal image has none."""
    for candidate in (os.environ.get("SSL_CERT_FILE"), "/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt"):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def _copy_bundle(bundle: Path, folder: Path) -> None:
    from agentsproof.core.safepath import read_file, write_file

    folder.mkdir(exist_ok=True)
    write_file(folder, "ca-certificates.crt", read_file(Path(os.path.realpath(bundle)), 16 * 1024 * 1024))


def wrapper(folder: Path, container: str, workdir: str, native: str, values: dict[str, str] | None = None) -> Path:
    """A script in ``folder`` that runs the CLI in ``container`` over ``docker exec -i`` with
    the arguments it is given (the SDK's), its stdio the CLI's; ``values``: variables that
    are no secret, set on the command line."""
    from agentsproof.core.safepath import write_file
    from agentsproof.isolation.engine import docker_cli

    passed = " ".join([*(f"-e {name}" for name in PASSED_ENVS), *(f"-e {shlex.quote(f'{k}={v}')}" for k, v in (values or {}).items())])
    script = f'#!/bin/sh\nexec {shlex.quote(docker_cli())} exec -i -w {shlex.quote(workdir)} {passed} {shlex.quote(container)} {shlex.quote(native)} "$@"\n'
    write_file(folder, "copilot-in-container", script.encode("utf-8"))
    path = folder / "copilot-in-container"
    path.chmod(0o700)
    return path


async def container_runtime(target: Any, box: Any, folders: list[Path], scratch: Path) -> Any:
    """A fresh :class:`agentsproof.llm.copilot.CopilotClient` whose CLI runs in ``box``, with
    ``folders`` (the config folder, the staged skills) copied in at their host paths; the
    wrapper script is written in ``scratch``. TargetError when the CLI cannot run there."""
    from agentsproof.isolation.container import HARNESS_DIR
    from agentsproof.llm.copilot import TOKEN_ENVS, CopilotClient, login_source

    runtime = target.runtime
    native = native_cli(runtime.cli_path)
    if native is None:
        raise TargetError(
            f"the copilot target cannot run in a container: no native Copilot CLI found beside {runtime.cli_path or 'the SDK runtime'} "
            "(install the npm package @github/copilot, e.g. `make copilot-cli`, and set COPILOT_CLI_PATH to its node_modules/.bin/copilot)"
        )
    if runtime.provider is None and login_source() not in TOKEN_ENVS:
        raise TargetError(
            "the copilot target cannot run in a container on a login stored in ~/.copilot (it is never copied into one): "
            "use BYOK (AGENTSPROOF_COPILOT_PROVIDER_URL) or a token in GH_TOKEN / COPILOT_GITHUB_TOKEN"
        )
    for folder in folders:
        await box.copy_in(folder, str(folder))
    home = f"{HARNESS_DIR}/copilot-home-{uuid.uuid4().hex[:8]}"
    values: dict[str, str] = {}
    bundle = host_ca_bundle()
    if bundle is not None:  # into the CLI's fresh home: the host's trust roots, for the CLI alone
        from agentsproof.core.threads import to_thread

        certs = scratch / "home"
        await to_thread(_copy_bundle, bundle, certs)
        await box.copy_in(certs, home)
        values["SSL_CERT_FILE"] = f"{home}/ca-certificates.crt"
    quoted = " ".join(shlex.quote(str(f)) for f in folders)
    got = await box.exec(["sh", "-c", f"mkdir -p {shlex.quote(home)} && chmod -R a+rwX {shlex.quote(home)} {quoted}"], timeout=60.0, user="root")
    if got.returncode != 0:
        raise TargetError(f"could not prepare Copilot's folders in the container: {got.stderr.decode('utf-8', 'replace').strip()[:200]}")
    script = wrapper(scratch, box.name, box.workdir, native, values)
    client = CopilotClient(cli_path=str(script), provider=runtime.provider, tools=runtime.tools, cli_found_via="container")
    client.home = home
    return client
