"""What every task of one search reads (the scenario, the price sheet, the scope), pickled once, not per task.

A task's arguments are pickled each time it is sent (a process pool's queue, a Ray task). `Shared` wraps such
a value: it pickles the value once, in this process, and sends those bytes with a digest of them; a worker
process unpickles them once and keeps the value under the digest, so its later tasks of the search read the
same object (and whatever the object caches, such as a price sheet's index, is built once per worker). The
digest is of the bytes, so a value that changed is a new entry, never a stale one. The values are immutable
(a frozen pydantic scenario, frozen dataclasses), so sharing one object between tasks changes no result.
"""

from __future__ import annotations

import hashlib
import pickle
from collections import OrderedDict
from typing import Any, Generic, TypeVar

T = TypeVar("T")
KEPT_PER_PROCESS = 16  # values a worker keeps (a few per search; the oldest falls out)
_kept: OrderedDict[bytes, Any] = OrderedDict()


class Shared(Generic[T]):
    """`value`, sent to a worker process as bytes pickled once (module docstring)."""

    def __init__(self, value: T, *, blob: bytes | None = None, digest: bytes | None = None) -> None:
        self.value = value
        self._blob, self._digest = blob, digest

    def __reduce__(self) -> tuple[Any, tuple[bytes, bytes]]:
        if self._blob is None or self._digest is None:
            self._blob = pickle.dumps(self.value, protocol=pickle.HIGHEST_PROTOCOL)
            self._digest = hashlib.blake2b(self._blob, digest_size=16).digest()
        return _restore, (self._digest, self._blob)


def _restore(digest: bytes, blob: bytes) -> Shared[Any]:
    """The worker's side: the value kept under `digest`, unpickled from `blob` the first time."""
    if digest in _kept:
        _kept.move_to_end(digest)
        value = _kept[digest]
    else:
        value = pickle.loads(blob)
        _kept[digest] = value
        while len(_kept) > KEPT_PER_PROCESS:
            _kept.popitem(last=False)
    return Shared(value, blob=blob, digest=digest)
