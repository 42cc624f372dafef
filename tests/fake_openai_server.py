"""A loopback OpenAI-compatible streaming server for the endpoint-probe tests.

POST /v1/chat/completions streams like OpenAI and vLLM: HTTP/1.1 chunked transfer, one SSE event per
HTTP chunk: a role chunk, `chunks` content chunks of `tokens_per_chunk` tokens each (the first after
`first_token_delay_seconds`, the others `chunk_delay_seconds` apart), a usage chunk (choices: []), then
`data: [DONE]`. The requested model name picks the behaviour:

  normal        as above
  no-usage      no usage chunk
  broken        two content chunks, then the connection is closed mid-stream
  no-done       the stream ends cleanly (terminating chunk) without `data: [DONE]`
  malformed     a `data:` line that is not JSON in the middle of the stream
  stream-error  an `{"error": ...}` event after the first content chunk
  error-429     HTTP 429 with an OpenAI-style JSON error body (also error-500, error-<any status>)
  echo-key      HTTP 401 whose message echoes the bearer key, in full and masked like OpenAI does
  not-streaming HTTP 200 with a whole JSON completion, as a server that ignores stream=true
  hang          sleeps `hang_seconds` before answering
  raw-error     HTTP 500 whose plain-text body holds terminal escapes (ESC, BEL) and a U+202E bidi override

`FakeConfig.completion_tokens`, when set, replaces the usage chunk's completion_tokens (a lying server);
`FakeConfig.prompt_tokens` is the usage chunk's prompt_tokens (7 unless a test makes it lie).
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# ESC [2J clears the screen, ESC ] 0 ; ... BEL sets the terminal title, U+202E reverses what follows.
RAW_ERROR_BODY = "overloaded \x1b[2J\x1b]0;pwned\x07 \u202etxt.exe\u202c done".encode()


@dataclass
class FakeConfig:
    first_token_delay_seconds: float = 0.0
    chunk_delay_seconds: float = 0.0
    chunks: int = 4
    tokens_per_chunk: int = 2
    hang_seconds: float = 2.0
    completion_tokens: Any = None  # sent as usage.completion_tokens instead of the true count
    prompt_tokens: Any = 7  # sent as usage.prompt_tokens
    # A batching engine's step: chunk_delay + per_stream_delay * (streams in progress); when set, the first
    # token comes first_token_delay + 1.5 steps after the request (half a step waiting, one prefill step).
    per_stream_delay_seconds: float = 0.0


@dataclass
class FakeLog:
    """What the server saw: request bodies, Authorization headers, TCP connections accepted."""

    bodies: list[dict[str, Any]] = field(default_factory=list)
    authorizations: list[str | None] = field(default_factory=list)
    connections: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive and chunked transfer, as uvicorn serves vLLM
    disable_nagle_algorithm = True  # small SSE writes leave at once
    server: _FakeServer

    def setup(self) -> None:
        super().setup()
        with self.server.log.lock:
            self.server.log.connections += 1

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0"))
        body = json.loads(self.rfile.read(length))
        log = self.server.log
        with log.lock:
            log.bodies.append(body)
            log.authorizations.append(self.headers.get("Authorization"))
        if self.path != "/v1/chat/completions":
            self._json_error(404, "not found")
            return
        mode = str(body.get("model", "normal"))
        config = self.server.config
        if mode.startswith("error-"):
            self._json_error(int(mode.removeprefix("error-")), f"fake {mode}")
        elif mode == "echo-key":
            key = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            masked = key[:3] + "*" * 10 + key[-4:]
            self._json_error(401, f"Incorrect API key provided: {masked}. Your key: {key}")
        elif mode == "not-streaming":
            self._json_error(200, "a whole completion")
        elif mode == "raw-error":
            payload = RAW_ERROR_BODY
            self.send_response(500)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        elif mode == "hang":
            time.sleep(config.hang_seconds)
            self._json_error(504, "hung")
        else:
            self._stream(mode, config, max_tokens=int(body.get("max_tokens", 16)))

    def _json_error(self, status: int, message: str) -> None:
        payload = json.dumps({"error": {"message": message, "type": "fake", "code": status}}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _event(self, data: str) -> None:
        frame = f"data: {data}\n\n".encode()
        self.wfile.write(f"{len(frame):x}\r\n".encode() + frame + b"\r\n")  # one HTTP chunk

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return json.dumps({"id": "fake", "object": "chat.completion.chunk", "choices": [choice]})

    def _stream(self, mode: str, config: FakeConfig, *, max_tokens: int) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self._event(self._chunk({"role": "assistant", "content": ""}))
        chunks = max(1, min(config.chunks, max_tokens // config.tokens_per_chunk))

        def step() -> float:
            return config.chunk_delay_seconds + config.per_stream_delay_seconds * self.server.streams

        batching = config.per_stream_delay_seconds > 0
        time.sleep(config.first_token_delay_seconds + (1.5 * step() if batching else 0.0))
        with self.server.log.lock:
            self.server.streams += 1  # decoding from its first token on
        try:
            self._content(mode, config, chunks, step)
        finally:
            with self.server.log.lock:
                self.server.streams -= 1

    def _content(self, mode: str, config: FakeConfig, chunks: int, step: Any) -> None:
        for index in range(chunks):
            if index > 0:
                time.sleep(step())
            if mode == "broken" and index == 2:
                self.close_connection = True  # return without the terminating chunk: EOF mid-body
                return
            if mode == "malformed" and index == 1:
                self._event("{not json")
            if mode == "stream-error" and index == 1:
                self._event(json.dumps({"error": {"message": "fake overload", "code": 503}}))
            finish = "length" if index == chunks - 1 else None
            self._event(self._chunk({"content": " tok" * config.tokens_per_chunk}, finish))
        if mode != "no-usage":
            completion_tokens = chunks * config.tokens_per_chunk
            if config.completion_tokens is not None:
                completion_tokens = config.completion_tokens
            usage = {
                "prompt_tokens": config.prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": (config.prompt_tokens + completion_tokens
                                 if isinstance(completion_tokens, int) and isinstance(config.prompt_tokens, int)
                                 else None),
            }
            self._event(
                json.dumps({"id": "fake", "object": "chat.completion.chunk", "choices": [], "usage": usage})
            )
        if mode != "no-done":
            self._event("[DONE]")
        self.wfile.write(b"0\r\n\r\n")


class _FakeServer(ThreadingHTTPServer):
    daemon_threads = True  # handler threads parked on keep-alive connections do not block exit

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.config = FakeConfig()
        self.log = FakeLog()
        self.streams = 0  # streams in progress

    def handle_error(self, request: Any, client_address: Any) -> None:
        # The probe hangs up on broken or malformed streams: a reset socket here is expected, not news.
        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


@dataclass
class RunningFake:
    base_url: str
    config: FakeConfig
    log: FakeLog


@contextmanager
def running_fake_server() -> Iterator[RunningFake]:
    """Start the fake on a free loopback port in a thread; yields its base URL, config and log."""
    server = _FakeServer()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        yield RunningFake(base_url=f"http://127.0.0.1:{port}/v1", config=server.config, log=server.log)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
