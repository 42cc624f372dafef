"""Progress bars on stderr for the CLI's long commands (search, compare/memo --search, memo, simulate, capacity).

tqdm draws them on stderr, so stdout keeps only the result; `--quiet` turns them off, and so does `--json`
(a script reads the JSON object and its stderr stays clean for errors). A bar advances by named steps
(`step`), or by a fraction of the whole (`fraction`, what `search(progress=...)` reports); during a long step
with no hook inside (one simulation, one capacity search) a ticker thread redraws the elapsed time twice a
second. Without tqdm installed the commands run without a bar.
"""

from __future__ import annotations

import argparse
import sys
import threading
from types import TracebackType
from typing import Any

TICK_SECONDS = 0.5


def add_quiet_flag(parser: argparse.ArgumentParser) -> None:
    """`--quiet`: no progress bar on stderr (`--json` has none either)."""
    parser.add_argument("--quiet", action="store_true", help="no progress bar on stderr (--json has none either)")


def wanted(args: argparse.Namespace) -> bool:
    """Whether this run shows a bar: not --quiet, not --json."""
    return not (getattr(args, "quiet", False) or getattr(args, "json", False))


class Bar:
    """A tqdm bar of `total` steps on stderr (a no-op when `enabled` is False or tqdm is missing)."""

    def __init__(self, *, total: int, desc: str, enabled: bool) -> None:
        self._bar: Any = None
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None
        if not enabled:
            return
        try:
            from tqdm import tqdm
        except ImportError:  # tqdm is a dependency; a stripped install still runs, without a bar
            return
        self._bar = tqdm(total=total, desc=desc, file=sys.stderr, leave=False, dynamic_ncols=True,
                         bar_format="{desc}: {percentage:3.0f}%|{bar}| {elapsed}{postfix}")
        self._ticker = threading.Thread(target=self._tick, name="costmodel-progress", daemon=True)
        self._ticker.start()

    def _tick(self) -> None:
        while not self._stop.wait(TICK_SECONDS):
            self._bar.refresh()

    def step(self, text: str, *, steps: int = 1) -> None:
        """Done `steps` more steps; `text` says what runs next."""
        if self._bar is not None:
            self._bar.set_postfix_str(text, refresh=False)
            self._bar.update(steps)

    def note(self, text: str) -> None:
        """Say what runs now (no step done)."""
        if self._bar is not None:
            self._bar.set_postfix_str(text)

    def fraction(self, done: float, text: str) -> None:
        """The share of the whole done (0..1), e.g. from `search(progress=bar.fraction)`."""
        if self._bar is not None:
            target = round(max(0.0, min(1.0, done)) * self._bar.total)
            # No step done: draw the new text now (update(0) would not), so what runs is always said.
            self._bar.set_postfix_str(text, refresh=target == self._bar.n)
            self._bar.update(target - self._bar.n)

    def __enter__(self) -> Bar:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
        if self._bar is not None:
            self._bar.close()


def bar(args: argparse.Namespace, *, total: int, desc: str) -> Bar:
    """The bar of one command run (see `wanted`)."""
    return Bar(total=total, desc=desc, enabled=wanted(args))
