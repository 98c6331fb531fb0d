"""A real Ray cluster for the tests, on this machine only: every process binds 127.0.0.1
(the node arguments say so), its sessions, logs and address file in a RAY_TMPDIR of its own,
the driver joined to it; shut down and removed afterwards, whatever happened."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def loopback_cluster(prefix: str, nodes: list[dict[str, Any]]) -> Iterator[Any]:
    """The cluster of ``nodes`` (``Cluster.add_node`` arguments, the first the head), with
    ``.nodes`` (the added nodes, in order) and ``.temp`` (its RAY_TMPDIR, short: Ray's socket
    paths must fit 107 characters)."""
    import ray
    from ray.cluster_utils import Cluster

    temp = tempfile.mkdtemp(prefix=prefix, dir="/tmp")
    saved = os.environ.get("RAY_TMPDIR")
    os.environ["RAY_TMPDIR"] = temp  # this cluster's sessions, logs and address file, nobody else's
    c = Cluster(initialize_head=False)
    try:
        c.added = [c.add_node(**node) for node in nodes]
        c.wait_for_nodes(timeout=120)
        ray.init(address=c.address, log_to_driver=False)
        c.temp = temp
        yield c
    finally:
        try:
            ray.shutdown()
        finally:
            c.shutdown()
            if saved is None:
                os.environ.pop("RAY_TMPDIR", None)
            else:
                os.environ["RAY_TMPDIR"] = saved
            shutil.rmtree(temp, ignore_errors=True)
