"""Child processes of the Probes page (probe, endpoint sweep): start one, follow its progress lines on stderr,
stop it as soon as the page cancels (even while the child is silent), and say why it failed.

A child keeps torch and the HTTP load out of the app's server process. The page's progress callback runs on
each progress line; a click on Cancel makes Streamlit raise inside it, and the child is then stopped, never
left running.
"""

from __future__ import annotations

import queue
import subprocess
import threading
from collections.abc import Callable, Mapping
from typing import IO, TypeVar

from costmodel.errors import CostmodelError

T = TypeVar("T")
STOP_GRACE_SECONDS = 5.0
POLL_SECONDS = 0.25  # how often a silent child's page redraws its bar, and so how soon it notices Cancel


def start_child(command: list[str], *, what: str, env: Mapping[str, str] | None = None) -> subprocess.Popen[str]:
    """The child, its stderr a text pipe read line by line; a CostmodelError naming `what` when it cannot start."""
    try:
        return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, bufsize=1,
                                env=dict(env) if env is not None else None)
    except OSError as exc:
        raise CostmodelError(f"could not start the {what} ({exc.strerror})") from None


def stop_child(proc: subprocess.Popen) -> None:  # type: ignore[type-arg]
    """Terminate a child process (then kill it if it ignores that for STOP_GRACE_SECONDS)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=STOP_GRACE_SECONDS)
        except subprocess.TimeoutExpired:
            proc.kill()


def _pump(stream: IO[str], lines: queue.Queue[str | None]) -> None:
    """Reader thread: every line of the child's stderr into the queue, then None at its end."""
    try:
        for line in stream:
            lines.put(line)
    finally:
        lines.put(None)


def follow_stderr(proc: subprocess.Popen[str], *, parse: Callable[[str], T | None],
                  on_item: Callable[[T], None], on_wait: Callable[[], None] | None = None,
                  poll_seconds: float = POLL_SECONDS) -> list[str]:
    """Read the child's stderr to its end: each line `parse` recognises goes to `on_item` (the page's progress
    bar); the other non-blank lines are returned (the error the caller reports). A reader thread reads the pipe,
    so this thread calls `on_wait` (the page redraws its bar: Streamlit raises there once Cancel is clicked)
    every `poll_seconds` while the child is silent, not only at its next line. Whatever raises meanwhile (a
    cancel, a failure) stops the child before it propagates."""
    others: list[str] = []
    assert proc.stderr is not None
    lines: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=_pump, args=(proc.stderr, lines), name="costmodel-child-stderr", daemon=True).start()
    try:
        while (line := _next_line(lines, on_wait=on_wait, poll_seconds=poll_seconds)) is not None:
            item = parse(line)
            if item is not None:
                on_item(item)  # a click on Cancel (a rerun) raises here
            elif line.strip():
                others.append(line.strip())
    except BaseException:
        stop_child(proc)
        raise
    return others


def _next_line(lines: queue.Queue[str | None], *, on_wait: Callable[[], None] | None,
               poll_seconds: float) -> str | None:
    """The next stderr line (None at its end), calling `on_wait` every `poll_seconds` until it comes."""
    while True:
        try:
            return lines.get(timeout=poll_seconds)
        except queue.Empty:
            if on_wait is not None:
                on_wait()  # a click on Cancel raises here too


def wait_child(proc: subprocess.Popen[str], *, what: str, timeout_seconds: float) -> int:
    """The child's exit code once it ends; killed, and a CostmodelError, past `timeout_seconds`."""
    try:
        return proc.wait(timeout=timeout_seconds)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise CostmodelError(f"the {what} ran longer than {timeout_seconds:.0f} s and was stopped") from None


def failure_detail(lines: list[str], *, returncode: int, last: int = 3) -> str:
    """What the child said last on stderr (the CLI's 'costmodel: error: ' prefix dropped), else its exit code."""
    detail = " ".join(lines[-last:]) or f"exit code {returncode}"
    return detail.removeprefix("costmodel: error: ")
