"""``eval-all --shard I/N``: a stable slice of a plugin's items for one CI machine.

An item belongs to shard ``1 + sha256(item id) mod N``: the slice depends on the item's id
only, never on the order of files on disk or on which other items exist, so N machines
running shards 1..N together run every item exactly once, and ``agentsproof merge``
joins their reports into the report a single machine would have written.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from agentsproof.model.items import EvalItem
from agentsproof.model.options import Shard


def shard_of(item_id: str, count: int) -> int:
    """The shard (1 to ``count``) ``item_id`` belongs to."""
    digest = hashlib.sha256(item_id.encode("utf-8", "surrogatepass")).digest()
    return 1 + int.from_bytes(digest[:8], "big") % count


def select_shard(items: Sequence[EvalItem], shard: Shard) -> list[EvalItem]:
    """The items of ``shard``, in their order."""
    return [it for it in items if shard_of(it.id, shard.count) == shard.index]
