"""probe-endpoint against hostile input (issue 10, items 6, 10, 11, 12): non-finite flags, an --out that
cannot be written, a server that lies about usage, and server text carrying terminal escapes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fake_openai_server import RAW_ERROR_BODY, RunningFake, running_fake_server

from costmodel.cli import endpoint as cli_endpoint
from costmodel.cli import main
from costmodel.measurements.endpoint_result import implausible_usage
from costmodel.units import printable

HOSTILE_CHARACTERS = ("\x1b", "\x07", "\u202e", "\u202c")


@pytest.fixture
def fake() -> Iterator[RunningFake]:
    with running_fake_server() as running:
        yield running


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["probe-endpoint", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--timeout", "nan", "--timeout must be a finite number"),
        ("--timeout", "inf", "--timeout must be a finite number"),
        ("--timeout", "1e300", "--timeout must be at most 3,600.0"),
        ("--concurrency", "1000000000", "--concurrency must be at most 4,096"),
        ("--max-tokens", str(2**63), "--max-tokens must be at most 16,777,216, got 922337203685... (19 digits)"),
        ("--prompt-tokens", str(10**400), "(401 digits)"),
    ],
)
def test_non_finite_and_huge_flags_exit_2(fake: RunningFake, capsys, flag: str, value: str, message: str) -> None:
    code, out, err = _cli(capsys, "--url", fake.base_url, "--model", "normal", flag, value)
    assert code == 2 and out == "" and message in err
    assert fake.log.bodies == []  # refused before any request


def test_unwritable_out_is_refused_before_any_request(fake: RunningFake, capsys, tmp_path: Path) -> None:
    not_a_folder = tmp_path / "file.txt"
    not_a_folder.write_text("x")
    code, out, err = _cli(capsys, "--url", fake.base_url, "--model", "normal", "--requests", "2",
                          "--out", str(not_a_folder / "endpoint.json"))
    assert code == 2 and out == ""
    assert f"--out {not_a_folder / 'endpoint.json'}: cannot write there" in err
    assert fake.log.bodies == []  # nothing was sent, so no run was lost
    code, _, err = _cli(capsys, "--url", fake.base_url, "--model", "normal", "--out", str(tmp_path))
    assert code == 2 and "it is a directory" in err and fake.log.bodies == []


def test_result_is_printed_when_the_final_write_fails(
    fake: RunningFake, capsys, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def disk_full(path: object, text: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cli_endpoint, "atomic_write_text", disk_full)
    code, out, err = _cli(capsys, "--url", fake.base_url, "--model", "normal", "--requests", "2", "--json",
                          "--out", str(tmp_path / "endpoint.json"))
    assert code == 2
    assert json.loads(out)["requests_ok"] == 2  # the run is on stdout
    assert "could not write the result (No space left on device)" in err and "--out" in err
    assert len(fake.log.bodies) == 2


def test_implausible_usage_rules_by_hand() -> None:
    # max_tokens 64: the ceiling is 64 x 1.10 + 8 = 78.4 tokens; 4 content chunks need >= 4 tokens.
    assert implausible_usage(78, max_tokens=64, content_chunks=4) is None
    assert implausible_usage(4, max_tokens=64, content_chunks=4) is None
    assert "above max_tokens" in str(implausible_usage(79, max_tokens=64, content_chunks=4))
    assert "below the 4 content chunks" in str(implausible_usage(3, max_tokens=64, content_chunks=4))
    assert "negative" in str(implausible_usage(-5, max_tokens=64, content_chunks=0))
    for value in (True, 12.0, "12", None, [12]):
        assert "not an integer" in str(implausible_usage(value, max_tokens=64, content_chunks=4))


@pytest.mark.parametrize("lie", [-5, 10**23, 2.5, True, "8", 1])
def test_a_server_lying_about_usage_is_flagged_and_not_trusted(fake: RunningFake, capsys, lie: object) -> None:
    fake.config.chunks, fake.config.tokens_per_chunk = 4, 2  # 8 tokens in 4 content chunks
    fake.config.completion_tokens = lie
    code, out, _ = _cli(capsys, "--url", fake.base_url, "--model", "normal", "--requests", "3", "--json")
    payload = json.loads(out)
    assert code == 0 and payload["requests_ok"] == 3
    assert payload["requests_implausible_usage"] == 3
    assert payload["output_tokens"] == 3 * 4 and payload["output_tokens_source"] == "content_chunks"
    assert payload["output_tokens_per_second"] > 0
    for record in payload["request_records"]:
        assert record["usage_implausible"] and record["output_tokens"] == 4
        # TPOT from the 4 counted chunks: (E2E - TTFT) / 3, positive (never negative, never 0 from 1e23).
        assert record["tpot_seconds"] == pytest.approx((record["e2e_seconds"] - record["ttft_seconds"]) / 3)
    assert payload["tpot_p50_seconds"] > 0
    assert any("implausible usage counts" in note for note in payload["notes"])


def test_an_honest_server_is_not_flagged(fake: RunningFake, capsys) -> None:
    fake.config.chunks, fake.config.tokens_per_chunk = 4, 2
    code, out, _ = _cli(capsys, "--url", fake.base_url, "--model", "normal", "--requests", "2", "--json")
    payload = json.loads(out)
    assert payload["requests_implausible_usage"] == 0 and payload["output_tokens"] == 2 * 8
    assert payload["output_tokens_source"] == "usage"


def test_server_error_bodies_are_echoed_without_terminal_escapes(fake: RunningFake, capsys, tmp_path: Path) -> None:
    assert all(char in RAW_ERROR_BODY.decode() for char in HOSTILE_CHARACTERS)  # the server does send them
    out_file = tmp_path / "endpoint.json"
    code, out, err = _cli(capsys, "--url", fake.base_url, "--model", "raw-error", "--requests", "1",
                          "--out", str(out_file))
    assert code == 1
    assert "overloaded [2J]0;pwned txt.exe done" in out  # the text survives, the control characters do not
    example = json.loads(out_file.read_text())["error_examples"]["http_500"]
    for text in (out, err, example):
        assert not any(char in text for char in HOSTILE_CHARACTERS)


def test_cli_text_output_strips_echoed_control_characters(fake: RunningFake, capsys) -> None:
    code, out, _ = _cli(capsys, "--url", fake.base_url, "--model", "normal\x1b[31m\u202e", "--requests", "1")
    assert code == 0 and "model normal[31m " in out
    assert not any(char in out for char in HOSTILE_CHARACTERS)


def test_printable_by_example() -> None:
    assert printable("a\x1b[31mb\u202ec\u2066d\u2069\x00e\x9bf") == "a[31mbcdef"
    assert printable("line 1\nline 2\tend") == "line 1 line 2 end"
    assert printable("line 1\nline 2", keep_newlines=True) == "line 1\nline 2"
    assert printable("héllo 日本 👍") == "héllo 日本 👍"  # letters and symbols of any script stay
