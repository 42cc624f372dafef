"""`prices refresh` against a loopback HTTP server this test starts: every failure leaves the sheet
byte-for-byte unchanged; a good download replaces it and reports added/removed/changed rows.
Works on copies of the bundled sheets in tmp_path; the real files are never touched."""

from __future__ import annotations

import argparse
import contextlib
import csv
import datetime as dt
import io
import json
import shutil
import socket
import stat
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from costmodel.cli import prices as cli_prices
from costmodel.errors import CostmodelError
from costmodel.pricing import default_sheet_path, load_api_prices
from costmodel.pricing.refresh import MAX_REMOVED_SHARE, refresh_sheet
from costmodel.pricing.sheets import sheet_to_csv_text

TODAY = dt.date(2026, 12, 1)
ROUTES: dict[str, bytes] = {}
RELEASE = threading.Event()
DRIP_FINISHED = threading.Event()  # set only if a client stayed for all 40 dripped bytes


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # keep pytest output clean
        pass

    def do_GET(self) -> None:
        if self.path == "/slow":
            RELEASE.wait(10)  # the client gives up long before; teardown releases us
            return self._send(b"too late")
        if self.path == "/drip":  # 1 byte every 0.5 s, 40 bytes in 20 s, far past any timeout a test gives
            return self._drip()
        if self.path == "/stall":  # headers and 10 bytes, then silence
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b"id,provid")
            self.wfile.write(b"e")
            self.wfile.flush()
            RELEASE.wait(10)
            return None
        if self.path == "/short":  # promises 1000 bytes, sends 10 and hangs up
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b"0123456789")
            return None
        if self.path == "/huge":  # 50 MB, streamed without Content-Length
            self.send_response(200)
            self.end_headers()
            try:
                for _ in range(50):
                    self.wfile.write(b"x" * 1_000_000)
            except (BrokenPipeError, ConnectionResetError):
                pass
            return None
        if self.path not in ROUTES:
            self.send_response(404)
            self.end_headers()
            return None
        return self._send(ROUTES[self.path])

    def _drip(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "40")
        self.end_headers()
        try:
            for _ in range(40):
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(0.5)
        except (BrokenPipeError, ConnectionResetError):
            return
        DRIP_FINISHED.set()

    def _send(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(body)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    RELEASE.set()
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def api_copy(tmp_path: Path) -> Path:
    path = tmp_path / "api_prices.csv"
    shutil.copyfile(default_sheet_path("api"), path)
    return path


def _assert_unchanged(path: Path, kind: str = "api") -> None:
    assert path.read_bytes() == default_sheet_path(kind).read_bytes()  # type: ignore[arg-type]
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temp file left behind


def _refresh_fails(path: Path, url: str, match: str, *, timeout: float = 5.0) -> str:
    with pytest.raises(CostmodelError, match=match) as err:
        refresh_sheet("api", path=path, url=url, timeout_seconds=timeout, today=TODAY)
    _assert_unchanged(path)
    assert f"kept {path} unchanged (oldest price 2026-10-07, 55 days old; checked 2026-11-29)" in str(err.value)
    return str(err.value)


def test_timeout_keeps_the_sheet(server: str, api_copy: Path) -> None:
    _refresh_fails(api_copy, f"{server}/slow", "timed out after 0.3 s", timeout=0.3)


def test_html_page_keeps_the_sheet(server: str, api_copy: Path) -> None:
    ROUTES["/page.html"] = b"<!DOCTYPE html><html><body>Pricing</body></html>"
    _refresh_fails(api_copy, f"{server}/page.html", "returned HTML, not a price sheet")


def test_50_megabytes_keeps_the_sheet(server: str, api_copy: Path) -> None:
    _refresh_fails(api_copy, f"{server}/huge", "more than 8,388,608 bytes")


def test_schema_broken_sheet_keeps_the_sheet(server: str, api_copy: Path) -> None:
    text = default_sheet_path("api").read_text(encoding="utf-8")
    ROUTES["/broken.csv"] = text.replace("openai/gpt-4o,openai,gpt-4o,,2.5,", "openai/gpt-4o,openai,gpt-4o,,-2.5,").encode()
    message = _refresh_fails(api_copy, f"{server}/broken.csv", "input_usd_per_mtok")
    assert "line 2 (id 'openai/gpt-4o')" in message


def test_http_error_and_offline_keep_the_sheet(server: str, api_copy: Path) -> None:
    _refresh_fails(api_copy, f"{server}/missing.csv", "answered HTTP 404")
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    _refresh_fails(api_copy, f"http://127.0.0.1:{port}/api_prices.csv", "could not reach .*offline")


def _litellm_json(rows: tuple, **changes: dict) -> bytes:  # type: ignore[type-arg]
    """A LiteLLM-shaped JSON with the sheet's keys; `changes` overrides entries by row id."""
    data = {}
    for row in rows:
        if row.source != "litellm":
            continue
        entry = {"litellm_provider": row.provider, "mode": "chat",
                 "input_cost_per_token": row.input_usd_per_mtok / 1e6,
                 "output_cost_per_token": row.output_usd_per_mtok / 1e6}
        entry.update(changes.get(row.id, {}))
        data[row.source_key] = entry
    return json.dumps(data).encode()


def test_litellm_json_refresh_reports_changes(server: str, api_copy: Path) -> None:
    rows = load_api_prices(api_copy).rows
    ROUTES["/litellm.json"] = _litellm_json(rows, **{"together/mixtral-8x7b": {"input_cost_per_token": 0.9e-6}})
    result = refresh_sheet("api", path=api_copy, url=f"{server}/litellm.json", today=TODAY)
    after = load_api_prices(api_copy)
    assert result.rows_after == result.rows_before == len(rows) and not result.added and not result.removed
    mixtral = after.get("together/mixtral-8x7b")
    assert mixtral.input_usd_per_mtok == 0.9 and mixtral.checked == TODAY
    # genai-prices' cross-check says 0.9 in and out; only the output (LiteLLM 0.6) now disagrees
    assert mixtral.disagreement == "output: litellm 0.6 vs genai-prices 0.9"
    change = next(c for c in result.changed if c.id == "together/mixtral-8x7b")
    assert "input_usd_per_mtok" in change.fields and "disagreement" in change.fields
    assert after.get("groq/llama-3.1-8b") == load_api_prices().get("groq/llama-3.1-8b")  # genai-only row kept
    # rows whose price comes from the provider's page or a preferred cross-check are not LiteLLM's to change
    assert after.get("fireworks/llama-3.1-8b") == load_api_prices().get("fireworks/llama-3.1-8b")
    assert after.get("together/llama-3.3-70b") == load_api_prices().get("together/llama-3.3-70b")
    # LiteLLM's rpm/tpm carry no tier: a refresh keeps the row's paid-tier limits
    assert after.get("google/gemini-2.5-flash-lite").requests_per_minute == 4000


def test_litellm_json_missing_most_keys_is_refused(server: str, api_copy: Path) -> None:
    ROUTES["/empty.json"] = b"{}"
    _refresh_fails(api_copy, f"{server}/empty.json", "refusing to drop them")


def test_csv_refresh_reports_added_removed_changed(server: str, api_copy: Path) -> None:
    rows = list(load_api_prices(api_copy).rows)
    first = rows[0].model_copy(update={"output_usd_per_mtok": 9.0})
    added = rows[1].model_copy(update={"id": "openai/gpt-4o-mini-copy", "checked": TODAY})
    new_rows = [first, *rows[2:], added]  # rows[1] removed
    ROUTES["/new.csv"] = sheet_to_csv_text(new_rows, kind="api").encode()
    result = refresh_sheet("api", path=api_copy, url=f"{server}/new.csv", today=TODAY)
    assert result.added == ("openai/gpt-4o-mini-copy",)
    assert result.removed == (rows[1].id,)
    assert [(c.id, c.fields) for c in result.changed] == [("openai/gpt-4o", ("output_usd_per_mtok",))]
    assert api_copy.read_bytes() == ROUTES["/new.csv"]


def test_gpu_sheet_needs_a_url(tmp_path: Path) -> None:
    path = tmp_path / "gpu.csv"
    shutil.copyfile(default_sheet_path("gpu"), path)
    with pytest.raises(CostmodelError, match="pass --url"):
        refresh_sheet("gpu", path=path, today=TODAY)
    _assert_unchanged(path, "gpu")


def _run_cli(argv: list[str]) -> int:
    """What costmodel.cli.main does for our subcommands: dispatch, CostmodelError -> stderr, exit 2."""
    parser = argparse.ArgumentParser(prog="costmodel")
    cli_prices.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args))
    except CostmodelError as exc:
        sys.stderr.write(f"costmodel: error: {exc}\n")
        return 2


def test_cli_refresh_and_list(server: str, api_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ROUTES["/same.csv"] = api_copy.read_bytes()
    assert _run_cli(["prices", "refresh", "--url", f"{server}/same.csv", "--file", str(api_copy), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["added"] == [] and payload["removed"] == [] and payload["changed"] == []
    assert _run_cli(["prices", "refresh", "--url", f"{server}/page.html", "--file", str(api_copy)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "returned HTML" in captured.err
    assert _run_cli(["prices", "list", "--file", str(api_copy), "--provider", "groq", "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert {row["id"] for row in listing["rows"]} == {"groq/gpt-oss-120b", "groq/gpt-oss-20b", "groq/llama-3.1-8b",
                                                      "groq/llama-3.3-70b"}
    assert listing["checked_oldest"] == "2026-11-29" and isinstance(listing["age_days"], int)


# --- issue 10, section 2: items 1, 2, 3, 6 (LiteLLM NaN) and 8 -------------------------------------------------


def _sheet_text_with(path: Path, row_id: str, **cells: str) -> bytes:
    """The sheet at `path` as CSV bytes with some cells of one row replaced (values written as given)."""
    text = path.read_text(encoding="utf-8")
    records = list(csv.DictReader(io.StringIO(text)))
    for record in records:
        if record["id"] == row_id:
            record.update(cells)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(records[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)
    return out.getvalue().encode()


@pytest.mark.parametrize("value", ["inf", "nan", "-inf", "1e400"])
def test_cli_csv_with_non_finite_price_exits_2_naming_row_and_field(
    server: str, api_copy: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    ROUTES["/inf.csv"] = _sheet_text_with(api_copy, "openai/gpt-4.1-mini", output_usd_per_mtok=value)
    assert _run_cli(["prices", "refresh", "--url", f"{server}/inf.csv", "--file", str(api_copy)]) == 2
    err = capsys.readouterr().err
    assert "(id 'openai/gpt-4.1-mini')" in err and "field 'output_usd_per_mtok'" in err and "finite" in err
    _assert_unchanged(api_copy)


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_cli_litellm_json_with_nan_price_exits_2_naming_the_field(
    server: str, api_copy: Path, capsys: pytest.CaptureFixture[str], literal: str
) -> None:
    rows = load_api_prices(api_copy).rows
    row = next(r for r in rows if r.source == "litellm")
    marker = 123.456  # a number json.dumps writes once, replaced by the bare literal Python's json reads back
    body = _litellm_json(rows, **{row.id: {"output_cost_per_token": marker}}).decode()
    ROUTES["/nan.json"] = body.replace(str(marker), literal).encode()
    assert literal in ROUTES["/nan.json"].decode()
    assert _run_cli(["prices", "refresh", "--url", f"{server}/nan.json", "--file", str(api_copy)]) == 2
    err = capsys.readouterr().err
    assert f"LiteLLM entry '{row.source_key}' (row '{row.id}')" in err and "field 'output_usd_per_mtok'" in err
    assert "finite" in err and "kept" in err
    _assert_unchanged(api_copy)


def test_deeply_nested_json_is_an_input_error(server: str, api_copy: Path) -> None:
    ROUTES["/deep.json"] = b'{"a":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    _refresh_fails(api_copy, f"{server}/deep.json", "nested too deeply")


def test_truncated_csv_is_refused_unless_removals_are_allowed(server: str, api_copy: Path) -> None:
    lines = api_copy.read_bytes().splitlines(keepends=True)
    ROUTES["/cut.csv"] = b"".join(lines[:4])  # header + 3 rows: cut at a row boundary, still a valid sheet
    before = len(lines) - 1
    message = _refresh_fails(api_copy, f"{server}/cut.csv", "--allow-removals")
    assert f"would remove {before - 3} of the {before} rows" in message and "more than 10%" in message
    result = refresh_sheet("api", path=api_copy, url=f"{server}/cut.csv", today=TODAY, allow_removals=True)
    assert result.rows_after == 3 and len(result.removed) == before - 3
    assert api_copy.read_bytes() == ROUTES["/cut.csv"]


def test_removal_share_boundary(server: str, api_copy: Path) -> None:
    rows = list(load_api_prices(api_copy).rows)
    allowed = int(MAX_REMOVED_SHARE * len(rows))  # 10% of 62 rows: 6 may go, 7 may not
    ROUTES["/minus-too-many.csv"] = sheet_to_csv_text(rows[: len(rows) - allowed - 1], kind="api").encode()
    _refresh_fails(api_copy, f"{server}/minus-too-many.csv", f"would remove {allowed + 1} of the {len(rows)} rows")
    ROUTES["/minus-allowed.csv"] = sheet_to_csv_text(rows[: len(rows) - allowed], kind="api").encode()
    result = refresh_sheet("api", path=api_copy, url=f"{server}/minus-allowed.csv", today=TODAY)
    assert len(result.removed) == allowed


def test_cli_truncated_csv_exits_2_naming_the_flag(server: str, api_copy: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    ROUTES["/cut.csv"] = b"".join(api_copy.read_bytes().splitlines(keepends=True)[:4])
    assert _run_cli(["prices", "refresh", "--url", f"{server}/cut.csv", "--file", str(api_copy)]) == 2
    assert "--allow-removals" in capsys.readouterr().err
    _assert_unchanged(api_copy)
    assert _run_cli(["prices", "refresh", "--url", f"{server}/cut.csv", "--file", str(api_copy),
                     "--allow-removals", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rows_after"] == 3


def test_slow_drip_is_a_read_timeout_within_the_deadline(server: str, api_copy: Path) -> None:
    # Before: each 1-byte read reset the socket timeout, and the refresh ran until the server finished.
    message = _refresh_fails(api_copy, f"{server}/drip", "read timeout: .* stopped sending after", timeout=2.0)
    assert "timed out after 2 s" in message and "offline" not in message
    assert not DRIP_FINISHED.is_set()  # the client hung up long before the 20-second drip ended


def test_stall_after_headers_is_a_read_timeout_not_offline(server: str, api_copy: Path) -> None:
    message = _refresh_fails(api_copy, f"{server}/stall", "stopped sending after 10 bytes; timed out after 1 s",
                             timeout=1.0)
    assert "could not reach" not in message


def test_body_cut_short_is_reported_as_broken_off(server: str, api_copy: Path) -> None:
    message = _refresh_fails(api_copy, f"{server}/short", "broke off after 10 bytes")
    assert "offline" not in message


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0", "601", "1e308"])
def test_cli_timeout_is_validated(api_copy: Path, capsys: pytest.CaptureFixture[str], value: str) -> None:
    assert _run_cli(["prices", "refresh", "--url", "http://127.0.0.1:9/x.csv", "--file", str(api_copy),
                     "--timeout", value]) == 2
    assert "--timeout must be a number of seconds" in capsys.readouterr().err
    _assert_unchanged(api_copy)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), 0.0, -3.0, 1e9])
def test_library_timeout_is_validated(api_copy: Path, value: float) -> None:
    with pytest.raises(CostmodelError, match="timeout_seconds must be"):
        refresh_sheet("api", path=api_copy, url="http://127.0.0.1:9/x.csv", timeout_seconds=value, today=TODAY)
    _assert_unchanged(api_copy)


@pytest.mark.parametrize("mode", [0o644, 0o664, 0o640])
def test_refresh_keeps_the_sheet_file_mode(server: str, api_copy: Path, mode: int) -> None:
    api_copy.chmod(mode)
    ROUTES["/same.csv"] = api_copy.read_bytes()
    refresh_sheet("api", path=api_copy, url=f"{server}/same.csv", today=TODAY)
    assert stat.S_IMODE(api_copy.stat().st_mode) == mode  # was 0o600 after every refresh
