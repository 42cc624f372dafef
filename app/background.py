"""Long library calls (the search) run in a worker thread the page can cancel, with a live progress bar.

Streamlit interrupts a script run at its next `st` call once the user clicks a widget (Cancel, or any other):
it raises there (RerunException, or StopException when the session ends). The page's thread therefore only
waits, drawing the bar every POLL_SECONDS, while the work runs in a worker thread; when the wait is
interrupted it sets the work's cancel flag and lets the interruption go on, so the rerun (and the page) comes
at once. The work sees the flag at its next progress call: the hook raises `Cancelled`, which ends the
library call there (for the search: after the current model screened or the current simulation).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

R = TypeVar("R")
POLL_SECONDS = 0.25  # how often the page redraws the bar, and so how soon it notices a click
ProgressHook = Callable[[float, str], None]  # (fraction 0..1, what is running): the library's progress hook


class Cancelled(Exception):
    """Raised inside the work by its progress hook once the page has cancelled it."""


class BackgroundWork(Generic[R]):
    """`work(progress)` in a daemon thread; `wait` draws its progress and returns its result (or raises its
    error) in the page's thread; `cancel` stops it at its next progress call."""

    def __init__(self, work: Callable[[ProgressHook], R], *, name: str = "costmodel-app-work") -> None:
        self._work = work
        self._cancel = threading.Event()
        self._done = threading.Event()
        self._latest: tuple[float, str] = (0.0, "")
        self._result: R | None = None
        self._error: BaseException | None = None
        self.progress_calls = 0  # how often the work reported (a test reads it: it stops after the cancel)
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> BackgroundWork[R]:
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            self._result = self._work(self.report)
        except BaseException as exc:  # handed to the page's thread by `wait` (Cancelled included)
            self._error = exc
        finally:
            self._done.set()

    def report(self, fraction: float, text: str) -> None:
        """The work's progress hook (worker thread): raises Cancelled once cancelled, else records the step."""
        self.progress_calls += 1
        if self._cancel.is_set():
            raise Cancelled
        self._latest = (min(max(fraction, 0.0), 1.0), text)

    def cancel(self) -> None:
        """Ask the work to stop at its next progress call (returns at once)."""
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    @property
    def error(self) -> BaseException | None:
        """What the work raised (Cancelled when it stopped on the cancel), once it has ended."""
        return self._error

    def join(self, timeout_seconds: float | None = None) -> bool:
        """Wait for the worker thread to end; whether it has."""
        self._thread.join(timeout_seconds)
        return not self._thread.is_alive()

    def wait(self, on_progress: ProgressHook, *, poll_seconds: float = POLL_SECONDS) -> R:
        """Draw the progress with `on_progress` every `poll_seconds` until the work ends; its result, or its
        error raised here. Whatever interrupts the wait (a click: Streamlit raises inside `on_progress`)
        cancels the work first."""
        try:
            while not self._done.wait(poll_seconds):
                on_progress(*self._latest)
        except BaseException:
            self.cancel()
            raise
        if self._error is not None:
            raise self._error
        return self._result  # type: ignore[return-value]
