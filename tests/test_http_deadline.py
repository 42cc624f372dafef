"""One deadline bounds a whole HTTP request, response headers included (probe-endpoint, its sweeps and
`prices refresh`), and probe-endpoint never follows a redirect.

A socket timeout bounds each read only: a loopback server below sends its status line and then one header
byte every 50 ms, so no read ever waits a whole second, and before the deadline a client given
`--timeout 1` would sit through all 100 bytes (5 s; an endless header would never end). The server marks
DRIP_FINISHED only when every byte went out to a client that was still there, which is what the old code
let happen; with the deadline the client hangs up after ~1 s and the server's writes fail.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from fake_openai_server import RunningFake, running_fake_server

from costmodel.cli import main
from costmodel.errors import CostmodelError
from costmodel.pricing import default_sheet_path
from costmodel.pricing.refresh import refresh_sheet

DRIP_BYTES = 100
DRIP_GAP_SECONDS = 0.05
DRIP_FINISHED = threading.Event()
REDIRECT_TARGET: dict[str, str] = {}


class _DripHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self._drip_headers()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path.startswith("/redirect"):
            self.send_response(307)  # 307 keeps the method and the body: the POST would be re-sent there
            self.send_header("Location", REDIRECT_TARGET["url"] + "/chat/completions")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self._drip_headers()

    def _drip_headers(self) -> None:
        try:
            self.wfile.write(b"HTTP/1.1 200 OK\r\nX-Drip: ")
            self.wfile.flush()
            for _ in range(DRIP_BYTES):
                time.sleep(DRIP_GAP_SECONDS)
                self.wfile.write(b"a")
                self.wfile.flush()
            self.wfile.write(b"\r\nContent-Type: text/event-stream\r\nContent-Length: 0\r\n\r\n")
            self.wfile.flush()
        except OSError:  # the client hung up: what the deadline is for
            return
        DRIP_FINISHED.set()


@pytest.fixture(scope="module")
def drip_server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _DripHandler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def fake() -> Iterator[RunningFake]:
    with running_fake_server() as running:
        yield running


def _wait_for_the_server_to_give_up() -> None:
    """The server thread notices the hang-up at its next write (50 ms later); give it a few gaps."""
    time.sleep(DRIP_GAP_SECONDS * 6)


def test_probe_endpoint_header_drip_is_a_timeout(drip_server: str, capsys) -> None:
    DRIP_FINISHED.clear()
    code = main(["probe-endpoint", "--url", f"{drip_server}/v1", "--model", "m", "--requests", "1",
                 "--timeout", "1", "--json"])
    _wait_for_the_server_to_give_up()
    result = json.loads(capsys.readouterr().out)
    assert code == 1 and result["requests_failed"] == 1
    assert result["errors_by_kind"] == {"timeout": 1}
    assert "headers and body together" in result["error_examples"]["timeout"]
    assert not DRIP_FINISHED.is_set()  # the client left long before the 5-second header ended


def test_sweep_header_drip_is_a_timeout_at_every_level(drip_server: str, capsys, tmp_path: Path) -> None:
    """`calibrate-endpoint` reads the sweep that `probe-endpoint --concurrency 1,2` records: same bound."""
    DRIP_FINISHED.clear()
    out = tmp_path / "sweep.json"
    code = main(["probe-endpoint", "--url", f"{drip_server}/v1", "--model", "m", "--concurrency", "1,2",
                 "--requests", "2", "--timeout", "1", "--out", str(out), "--json"])
    _wait_for_the_server_to_give_up()
    capsys.readouterr()
    sweep = json.loads(out.read_text(encoding="utf-8"))
    kinds = [row["error_kind"] for level in sweep["levels"] for row in level["requests"]]
    assert kinds == ["timeout"] * 4, kinds
    assert code != 0 and not DRIP_FINISHED.is_set()


def test_prices_refresh_header_drip_is_a_timeout(drip_server: str, tmp_path: Path) -> None:
    DRIP_FINISHED.clear()
    sheet = tmp_path / "api_prices.csv"
    shutil.copyfile(default_sheet_path("api"), sheet)
    with pytest.raises(CostmodelError, match="timed out after 1 s .headers and body together"):
        refresh_sheet("api", path=sheet, url=f"{drip_server}/prices.csv", timeout_seconds=1.0,
                      today=dt.date(2026, 12, 1))
    _wait_for_the_server_to_give_up()
    assert not DRIP_FINISHED.is_set()
    assert sheet.read_bytes() == default_sheet_path("api").read_bytes()


def test_probe_endpoint_refuses_a_redirect_to_another_host(drip_server: str, fake: RunningFake, capsys,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A 307 from 127.0.0.1 to `localhost` (another host name) would re-send the POST there and report its
    figures under the first host's name; the probe files it as a `redirect` failure and sends nothing on."""
    REDIRECT_TARGET["url"] = fake.base_url.replace("127.0.0.1", "localhost")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-redirect-0123456789")
    code = main(["probe-endpoint", "--url", f"{drip_server}/redirect/v1", "--model", "normal",
                 "--requests", "2", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 1 and result["requests_ok"] == 0
    assert result["errors_by_kind"] == {"redirect": 2}
    assert "not followed" in result["error_examples"]["redirect"] and "localhost" in result["error_examples"]["redirect"]
    assert fake.log.bodies == [] and fake.log.authorizations == []  # nothing reached the other host
