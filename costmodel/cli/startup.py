"""The CLI process's cyclic garbage collector: off while modules are imported, their objects frozen after.

Importing numpy, pydantic (its schemas), the catalog and, for the memo, matplotlib and reportlab allocates
hundreds of thousands of objects that live until the process exits, and almost no garbage. Every
collection during those imports walks the young objects made so far, each full one walks all of them
again, and so does the collection at interpreter exit. With the collector off while the CLI imports, and
those objects then moved to the permanent generation (`gc.freeze`, which the collector never walks),
later collections walk only what the command itself allocates; the collector is on again for the command,
so its reference cycles are freed as before. Nothing the command computes or prints depends on when the
collector runs (the engine loop already pauses it: `serving.engine_io.paused_gc`).

Only when the CLI owns the process (the console script, `python -m costmodel`: `main()` with no argv): a
test calling `main(argv)`, or an app importing costmodel, keeps its collector as it is, since freezing a
long-lived process's objects would keep its garbage of the moment forever.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_owns_process = False


def claim_process() -> None:
    """Called by `main()` when it runs as the process's entry point (no argv given)."""
    global _owns_process
    _owns_process = True


@contextmanager
def long_lived_imports() -> Iterator[None]:
    """Run the block (imports) with the collector off, then freeze what exists and restore the collector;
    a plain block when the CLI does not own the process."""
    if not _owns_process:
        yield
        return
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if collecting:
            gc.enable()
