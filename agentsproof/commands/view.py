"""``agentsproof view``: write the runs' index and item pages, and optionally serve them.

The pages are written by :mod:`agentsproof.report.viewer` into ``--out`` (default
``RUNS/_view/``); ``--serve`` then serves the runs folder on loopback (the pages link to
each run's own reports by relative paths) until interrupted, rebuilding the pages each time
the index is asked for, so a run that finished meanwhile shows on a reload.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentsproof.core.errors import InputError

VIEW_FOLDER = "_view"


def build(runs: Path, out: Path | None, item: str | None, last: int) -> tuple[Path, int]:
    """The pages written (the index's path, how many runs it lists); one line, exit 30, for a runs folder that is not one."""
    from agentsproof.core.inputs import display
    from agentsproof.report.viewer import write_view

    if not runs.is_dir():
        raise InputError(display(runs), None, "not a folder of runs (give the --output folder of your runs, default runs/)")
    target = out if out is not None else runs / VIEW_FOLDER
    try:
        return write_view(runs, target, item=item, last=last)
    except OSError as err:
        raise InputError("command line", "--out", f"cannot write {display(target)}: {err.strerror or err}") from None


def serve(runs: Path, out: Path | None, item: str | None, last: int, port: int, ready: Callable[[str], None]) -> None:
    """Serve ``runs`` on 127.0.0.1:``port`` (0: any free port) until interrupted; ``ready`` gets the index's URL."""
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    index, _ = build(runs, out, item, last)
    root = runs.resolve()
    page = Path(os.path.relpath(index.resolve(), root)).as_posix()
    if page.startswith("../"):
        raise InputError("command line", "--out", "with --serve the pages go inside the runs folder (it is what is served)")

    class Handler(SimpleHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: D102 - the stdlib's
            if self.path in ("/", f"/{page}"):
                build(runs, out, item, last)  # a run that finished since shows on a reload
                if self.path == "/":
                    self.send_response(302)
                    self.send_header("Location", f"/{page}")
                    self.end_headers()
                    return
            super().do_GET()

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
            return

    httpd = ThreadingHTTPServer(("127.0.0.1", port), functools.partial(Handler, directory=str(root)))
    try:
        ready(f"http://127.0.0.1:{httpd.server_address[1]}/{page}")
        httpd.serve_forever(poll_interval=0.2)
    finally:
        httpd.server_close()
