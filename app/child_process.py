"""Child processes of the Probes page (probe, endpoint sweep): start one, follow its progress lines on stderr,
stop it when the page cancels, and say why it failed.

A child keeps torch and the HTTP load out of the app's server process. The page's progress callback runs on
each progress line; a click on Cancel makes Streamlit raise inside it, and the child is then stopped, never
left running.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Mapping
from typing import TypeVar

from costmodel.errors import CostmodelError

T = TypeVar("T")
STOP_GRACE_SECONDS = 5.0


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


def follow_stderr(proc: subprocess.Popen[str], *, parse: Callable[[str], T | None],
                  on_item: Callable[[T], None]) -> list[str]:
    """Read the child's stderr to its end: each line `parse` recognises goes to `on_item` (the page's progress
    bar); the other non-blank lines are returned (the error the caller reports). Whatever raises meanwhile (a
    cancel, a failure) stops the child before it propagates."""
    others: list[str] = []
    assert proc.stderr is not None
    try:
        for line in proc.stderr:
            item = parse(line)
            if item is not None:
                on_item(item)  # a click on Cancel (a rerun) raises here
            elif line.strip():
                others.append(line.strip())
    except BaseException:
        stop_child(proc)
        raise
    return others


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
