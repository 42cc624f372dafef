"""`prices refresh` against a loopback HTTP server this test starts: every failure leaves the sheet
byte-for-byte unchanged; a good download replaces it and reports added/removed/changed rows.
Works on copies of the bundled sheets in tmp_path; the real files are never touched."""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import shutil
import socket
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from costmodel import cli_prices
from costmodel.errors import CostmodelError
from costmodel.pricing import default_sheet_path, load_api_prices
from costmodel.pricing.refresh import refresh_sheet
from costmodel.pricing.sheets import sheet_to_csv_text

TODAY = dt.date(2026, 12, 1)
ROUTES: dict[str, bytes] = {}
RELEASE = threading.Event()


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # keep pytest output clean
        pass

    def do_GET(self) -> None:
        if self.path == "/slow":
            RELEASE.wait(10)  # the client gives up long before; teardown releases us
            return self._send(b"too late")
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
