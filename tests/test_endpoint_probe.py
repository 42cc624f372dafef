"""Endpoint probe: SSE framing, settings checks, timing and error kinds against a loopback fake server,
the CLI handler end to end, and that the API key never reaches stdout, stderr or the result file."""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_openai_server import RunningFake, running_fake_server

from costmodel.cli import main
from costmodel.errors import CostmodelError
from costmodel.measurements.endpoint_result import EndpointProbeResult, endpoint_settings
from probes.endpoint import probe_endpoint, redact, synthetic_prompt
from probes.endpoint_summary import latency_percentiles
from probes.sse import SseDecoder

REPO = Path(__file__).resolve().parents[1]
KEY = "sk-test-S3CRET-0123456789abcdefXYZ"
PERCENTILE_KEYS = [f"{m}_p{p}_seconds" for m in ("ttft", "tpot", "itl", "e2e") for p in (50, 90, 99)]


@pytest.fixture
def fake() -> Iterator[RunningFake]:
    with running_fake_server() as running:
        yield running


def _settings(base_url: str, model: str, **overrides: object) -> object:
    values: dict[str, object] = dict(
        base_url=base_url,
        model=model,
        concurrency=2,
        requests_total=2,
        prompt_tokens=32,
        max_tokens=64,
        timeout_seconds=5.0,
        api_key_env="OPENAI_API_KEY",
    )
    values.update(overrides)
    return endpoint_settings(**values)  # type: ignore[arg-type]


def _probe(base_url: str, model: str, api_key: str | None = None, **overrides: object) -> EndpointProbeResult:
    return probe_endpoint(_settings(base_url, model, **overrides), api_key=api_key)  # type: ignore[arg-type]


def _free_closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _assert_monotone(result: EndpointProbeResult) -> None:
    for metric in ("ttft", "tpot", "itl", "e2e"):
        p50, p90, p99 = (getattr(result, f"{metric}_p{p}_seconds") for p in (50, 90, 99))
        assert p50 is not None and p90 is not None and p99 is not None, metric
        assert p50 <= p90 <= p99, metric


# --- SSE framing (WHATWG HTML spec, "Interpreting an event stream") -------------------------------------


def test_sse_decoder_reassembles_events_fed_byte_by_byte() -> None:
    stream = b': keep-alive\r\ndata: {"a": 1}\r\n\r\ndata:two\ndata: lines\n\nevent: x\rdata: cr\r\rdata: [DONE]\n\n'
    decoder = SseDecoder()
    events = [event for i in range(len(stream)) for event in decoder.feed(stream[i : i + 1])]
    # "data:two" keeps no space to drop; two data lines join with LF; CR alone ends a line.
    assert events == ['{"a": 1}', "two\nlines", "cr", "[DONE]"]
    assert not decoder.has_partial_event


def test_sse_decoder_holds_an_unfinished_event() -> None:
    decoder = SseDecoder()
    assert decoder.feed(b"data: par") == []
    assert decoder.has_partial_event
    assert decoder.feed(b"tial\n\n") == ["partial"]


def test_latency_percentiles_interpolate_linearly() -> None:
    # numpy "linear": position = q/100 * (n - 1) over sorted [1, 2, 3, 4]:
    # p50 at 1.5 -> 2.5; p90 at 2.7 -> 3.7; p99 at 2.97 -> 3.97.
    assert latency_percentiles([4.0, 1.0, 3.0, 2.0]) == pytest.approx((2.5, 3.7, 3.97))
    assert latency_percentiles([]) == (None, None, None)


def test_redact_removes_key_and_fragments() -> None:
    masked_echo = f"Incorrect API key provided: {KEY[:3]}**********{KEY[-4:]}; full {KEY}; tail {KEY[10:20]}"
    cleaned = redact(masked_echo, KEY)
    assert KEY not in cleaned and KEY[10:20] not in cleaned
    assert redact("nothing secret", None) == "nothing secret"


def test_synthetic_prompt_length_and_distinct() -> None:
    import random

    first = synthetic_prompt(prompt_tokens=100, rng=random.Random(1))
    second = synthetic_prompt(prompt_tokens=100, rng=random.Random(2))
    words_before_instruction = first.split("\n\n")[0].split()
    assert len(words_before_instruction) == 100 - 11  # 11 = tokens of the instruction sentence
    assert first != second


# --- settings checks ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("overrides", "flag"),
    [
        ({"concurrency": -1}, "--concurrency"),
        ({"requests_total": 0}, "--requests"),
        ({"max_tokens": 0}, "--max-tokens"),
        ({"timeout_seconds": 0.0}, "--timeout"),
        ({"base_url": "127.0.0.1:8000/v1"}, "--url"),
        ({"base_url": "ftp://host/v1"}, "--url"),
        ({"base_url": "http://user:pw@host/v1"}, "--url"),
    ],
)
def test_bad_settings_name_the_flag(overrides: dict[str, object], flag: str) -> None:
    values = {"base_url": "http://127.0.0.1:8000/v1", "model": "m", **overrides}
    base_url = str(values.pop("base_url"))
    with pytest.raises(CostmodelError, match=flag):
        _settings(base_url, str(values.pop("model")), **values)


def test_url_normalisation_keeps_query() -> None:
    settings = _settings("https://host/v1/chat/completions/?api-version=1", "m")
    assert settings.base_url == "https://host/v1?api-version=1"  # type: ignore[attr-defined]
    assert settings.chat_completions_url == "https://host/v1/chat/completions?api-version=1"  # type: ignore[attr-defined]


# --- timing against the fake server ---------------------------------------------------------------------


def test_slow_stream_timings_follow_the_configured_delays(fake: RunningFake) -> None:
    first_token_delay, chunk_delay, chunks, tokens_per_chunk = 0.3, 0.05, 5, 2
    fake.config.first_token_delay_seconds = first_token_delay
    fake.config.chunk_delay_seconds = chunk_delay
    fake.config.chunks, fake.config.tokens_per_chunk = chunks, tokens_per_chunk
    result = _probe(fake.base_url, "slow", api_key=KEY, concurrency=2, requests_total=4)

    assert (result.requests_ok, result.requests_failed, result.errors_by_kind) == (4, 0, {})
    tokens = chunks * tokens_per_chunk  # 10 per request, from the usage chunk
    assert result.output_tokens == 4 * tokens and result.output_tokens_source == "usage"
    assert result.prompt_tokens_mean == 7.0
    assert result.itl_samples == 4 * (chunks - 1)
    _assert_monotone(result)
    # Behaviour, not wall-clock bounds (no upper bound on time: a loaded machine may be slow): the server
    # sleeps before the first token and between chunks, so each latency is at least what it slept.
    for record in result.request_records:
        assert record.ttft_seconds is not None and record.e2e_seconds is not None
        assert first_token_delay <= record.ttft_seconds <= record.e2e_seconds
        assert record.content_chunks == chunks and record.output_tokens == tokens
        # TPOT = (E2E - TTFT) / (N - 1), N from usage; the chunks were sent (chunks - 1) delays apart.
        assert record.tpot_seconds == pytest.approx((record.e2e_seconds - record.ttft_seconds) / (tokens - 1))
        expected_tpot = (chunks - 1) * chunk_delay / (tokens - 1)  # 0.2 s / 9 = 22 ms per token
        assert 0.9 * expected_tpot <= record.tpot_seconds
    assert result.itl_p50_seconds is not None and 0.9 * chunk_delay <= result.itl_p50_seconds
    # What the server received: the streaming contract and the bearer key.
    body = fake.log.bodies[0]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["model"] == "slow" and body["max_tokens"] == 64
    assert fake.log.authorizations == [f"Bearer {KEY}"] * 4
    assert len({b["messages"][0]["content"] for b in fake.log.bodies}) == 4  # distinct prompts
    assert KEY not in result.model_dump_json()


def test_keep_alive_reuses_one_connection_per_worker(fake: RunningFake) -> None:
    result = _probe(fake.base_url, "normal", concurrency=1, requests_total=3)
    assert result.requests_ok == 3
    assert fake.log.connections == 1  # the stream is read to its end, so the connection goes back
    assert fake.log.authorizations == [None] * 3 and not result.api_key_sent


def test_without_usage_tokens_are_counted_as_chunks(fake: RunningFake) -> None:
    fake.config.chunks, fake.config.tokens_per_chunk = 4, 3
    result = _probe(fake.base_url, "no-usage")
    assert result.requests_ok == 2 and result.output_tokens_source == "content_chunks"
    assert result.output_tokens == 2 * 4  # 4 chunks per request, though each held 3 tokens
    assert result.prompt_tokens_mean is None
    assert any("no usage" in note for note in result.notes)
    record = result.request_records[0]
    assert record.tpot_seconds == pytest.approx((record.e2e_seconds - record.ttft_seconds) / (4 - 1))  # type: ignore[operator]


@pytest.mark.parametrize(
    ("model", "kind"),
    [
        ("broken", "connection"),
        ("no-done", "missing_done"),
        ("malformed", "malformed_stream"),
        ("not-streaming", "malformed_stream"),
        ("stream-error", "stream_error"),
        ("error-429", "http_429"),
        ("error-500", "http_500"),
    ],
)
def test_failures_are_filed_by_kind(fake: RunningFake, model: str, kind: str) -> None:
    result = _probe(fake.base_url, model, requests_total=3)
    assert (result.requests_ok, result.requests_failed) == (0, 3)
    assert result.errors_by_kind == {kind: 3}
    assert kind in result.error_examples
    assert all(getattr(result, key) is None for key in PERCENTILE_KEYS)
    assert result.output_tokens == 0 and result.output_tokens_source == "none"


def test_http_error_keeps_status_and_body(fake: RunningFake) -> None:
    result = _probe(fake.base_url, "error-429", requests_total=1)
    assert result.request_records[0].http_status == 429
    assert "fake error-429" in result.error_examples["http_429"]


def test_timeout_is_its_own_kind(fake: RunningFake) -> None:
    fake.config.hang_seconds = 1.0
    result = _probe(fake.base_url, "hang", requests_total=1, timeout_seconds=0.3)
    assert result.errors_by_kind == {"timeout": 1}


# --- CLI end to end -------------------------------------------------------------------------------------


def _cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["probe-endpoint", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _key_fragments() -> list[str]:
    return [KEY[i : i + 8] for i in range(len(KEY) - 7)]


def test_cli_key_never_reaches_outputs(
    fake: RunningFake, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PROBE_TEST_KEY", KEY)
    out_file = tmp_path / "endpoint.json"
    common = ["--url", fake.base_url, "--api-key-env", "PROBE_TEST_KEY", "--requests", "3", "--concurrency", "2"]
    code, stdout, stderr = _cli([*common, "--model", "normal", "--out", str(out_file)], capsys)
    assert code == 0
    assert "3/3 requests done" in stderr and "TTFT" in stdout and "key sent" in stdout
    written = out_file.read_text()
    assert EndpointProbeResult.model_validate_json(written).requests_ok == 3

    code_json, stdout_json, stderr_json = _cli([*common, "--model", "normal", "--json"], capsys)
    payload = json.loads(stdout_json)
    assert code_json == 0 and stderr_json == ""
    for key in ["requests_ok", "requests_failed", "output_tokens", "errors_by_kind", *PERCENTILE_KEYS]:
        assert key in payload

    # The server echoes the key in its 401 message, in full and masked; neither may come through.
    code_echo, stdout_echo, stderr_echo = _cli([*common, "--model", "echo-key", "--json"], capsys)
    assert code_echo == 1 and json.loads(stdout_echo)["errors_by_kind"] == {"http_401": 3}
    assert fake.log.authorizations == [f"Bearer {KEY}"] * 9  # the key was sent each time
    for text in (stdout, stderr, written, stdout_json, stderr_json, stdout_echo, stderr_echo):
        assert KEY not in text
        assert not any(fragment in text for fragment in _key_fragments())


def test_cli_ask_key(
    fake: RunningFake, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PROBE_TEST_KEY", raising=False)
    argv = ["--url", fake.base_url, "--model", "normal", "--requests", "1", "--api-key-env", "PROBE_TEST_KEY"]
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))  # not a terminal
    code, _, stderr = _cli([*argv, "--ask-key"], capsys)
    assert code == 2 and "--ask-key needs an interactive terminal" in stderr

    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr("getpass.getpass", lambda prompt: KEY)
    code, stdout, stderr = _cli([*argv, "--ask-key"], capsys)
    assert code == 0 and fake.log.authorizations == [f"Bearer {KEY}"]
    assert KEY not in stdout + stderr


def test_cli_bad_flag_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, stdout, stderr = _cli(["--url", "http://127.0.0.1:1/v1", "--model", "m", "--concurrency", "-3"], capsys)
    assert code == 2 and stdout == "" and "--concurrency must be positive" in stderr


def test_cli_connection_refused_subprocess(tmp_path: Path) -> None:
    """Runs the real entry point: exit 1, all requests filed under 'connection', no traceback, and
    importing the CLI module does not import probes (they load inside the handler)."""
    url = f"http://127.0.0.1:{_free_closed_port()}/v1"
    env = {**os.environ, "OPENAI_API_KEY": KEY}
    cmd = [sys.executable, "-m", "costmodel", "probe-endpoint", "--url", url, "--model", "m", "--requests", "2"]
    done = subprocess.run([*cmd, "--json"], capture_output=True, text=True, cwd=REPO, env=env, timeout=60)
    assert done.returncode == 1, done.stderr
    payload = json.loads(done.stdout)
    assert payload["requests_failed"] == 2 and payload["errors_by_kind"] == {"connection": 2}
    assert "Traceback" not in done.stderr and KEY not in done.stdout + done.stderr

    check = "import sys, costmodel.cli.endpoint; print('probes' in sys.modules)"
    imported = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert imported.stdout.strip() == "False", imported.stderr
