"""Reading a streamed chat completion: the SSE framing, then the fields of each chunk event.

Bytes arrive from the socket in pieces that need not line up with events; `SseDecoder.feed` keeps the
unfinished tail and returns the `data` payload of every event completed by the new bytes. Framing follows
the WHATWG HTML spec, section "Server-sent events / Interpreting an event stream": lines end with CRLF, LF
or CR; a blank line dispatches the event; `data:` lines of one event are joined with LF; lines starting
with `:` are comments; one space after the colon is dropped; `event`, `id` and `retry` are ignored here
because OpenAI-compatible servers only use `data`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from costmodel.measurements.endpoint_result import ERROR_KIND_MALFORMED, ERROR_KIND_STREAM_ERROR

# Any of the three line terminators the spec allows; CRLF first so it counts as one terminator.
_LINE_END = re.compile(rb"\r\n|\r|\n")


class SseDecoder:
    """Feed raw bytes; get back the data payload (str) of each completed event, in order."""

    def __init__(self) -> None:
        self._pending = b""  # bytes after the last complete line
        self._data_lines: list[str] = []  # data lines of the event being assembled

    def feed(self, chunk: bytes) -> list[str]:
        """Decode `chunk` and return the payloads of the events it completes (may be empty)."""
        buffer = self._pending + chunk
        events: list[str] = []
        start = 0
        for match in _LINE_END.finditer(buffer):
            # A lone CR at the very end may be the first half of CRLF: wait for the next byte.
            if match.group() == b"\r" and match.end() == len(buffer):
                break
            self._take_line(buffer[start : match.start()], events)
            start = match.end()
        self._pending = buffer[start:]
        return events

    @property
    def has_partial_event(self) -> bool:
        """True when bytes or data lines are buffered that no blank line has completed."""
        return bool(self._pending.strip()) or bool(self._data_lines)

    def _take_line(self, raw_line: bytes, events: list[str]) -> None:
        line = raw_line.decode("utf-8", errors="replace")
        if line == "":
            if self._data_lines:
                events.append("\n".join(self._data_lines))
                self._data_lines = []
            return
        if line.startswith(":"):
            return  # comment / keep-alive
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data_lines.append(value)


class StreamFault(Exception):
    """A request failed; `kind` is one of the ERROR_KIND_* strings or http_<status>."""

    def __init__(self, kind: str, message: str, http_status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.http_status = http_status


def chunk_fields(payload: str) -> tuple[bool, dict[str, Any] | None]:
    """(carries content?, usage or None) of one `chat.completion.chunk` event; faults on anything else."""
    try:
        chunk = json.loads(payload)
    except ValueError:
        raise StreamFault(ERROR_KIND_MALFORMED, f"event is not JSON: {payload[:120]!r}") from None
    if not isinstance(chunk, dict):
        raise StreamFault(ERROR_KIND_MALFORMED, f"event is not a JSON object: {payload[:120]!r}")
    if chunk.get("error") is not None:
        raise StreamFault(ERROR_KIND_STREAM_ERROR, f"server error event: {str(chunk['error'])[:300]}")
    choices = chunk.get("choices")
    if not isinstance(choices, list):
        raise StreamFault(ERROR_KIND_MALFORMED, f"event has no choices list: {payload[:120]!r}")
    has_content = False
    for choice in choices:
        delta = choice.get("delta") if isinstance(choice, dict) else None
        if isinstance(delta, dict):
            # Reasoning models stream their thinking as reasoning_content (vLLM) or reasoning; those are
            # generated tokens too, so they count as the first token.
            texts = (delta.get("content"), delta.get("reasoning_content"), delta.get("reasoning"))
            has_content = has_content or any(isinstance(t, str) and t != "" for t in texts)
    usage = chunk.get("usage")
    return has_content, usage if isinstance(usage, dict) else None
