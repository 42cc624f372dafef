"""Real-browser test: `streamlit run app/main.py` on a free loopback port, every page opened in headless
Debian Chromium through Playwright; no Streamlit exception box, the expected heading, the charts drawn.
Screenshots go to test-artifacts/ (gitignored). Skips cleanly without /usr/bin/chromium."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.page_list import PAGES

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = ROOT / "test-artifacts"
# Headings show after ~3 s and plotly charts after 7-11 s on the 2-core CI machine.
TIMEOUT_MS = 30_000
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--no-first-run",
]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def server_url() -> Iterator[str]:
    if not CHROMIUM.exists():
        pytest.skip("needs Debian's chromium at /usr/bin/chromium (apt-get install -y chromium)")
    pytest.importorskip("playwright.sync_api", reason="needs the playwright Python package (pip install '.[dev]')")
    port = _free_port()
    cmd = [
        sys.executable, "-m", "streamlit", "run", str(ROOT / "app" / "main.py"),
        "--server.port", str(port), "--server.address", "127.0.0.1", "--server.headless", "true",
        "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
    ]
    log_path = ARTIFACTS / "streamlit-server.log"
    ARTIFACTS.mkdir(exist_ok=True)
    with log_path.open("wb") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env={**os.environ})
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                        if response.status == 200:
                            break
                except OSError:
                    pass
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"streamlit did not start; see {log_path}:\n{log_path.read_text()[-2000:]}")
                time.sleep(0.3)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


def test_every_page_renders_in_chromium(server_url: str) -> None:
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            for index, spec in enumerate(PAGES):
                # The default (first) page lives at the root URL.
                path = "" if index == 0 else spec.url_path
                page.goto(f"{server_url}/{path}", wait_until="domcontentloaded")
                heading = page.locator("h1", has_text=spec.title).first
                heading.wait_for(state="visible", timeout=TIMEOUT_MS)
                if spec.charts:
                    charts = page.locator(".js-plotly-plot")
                    charts.nth(spec.charts - 1).wait_for(state="attached", timeout=TIMEOUT_MS)
                # Let the script run finish before looking for errors (the memo takes a few seconds to build).
                page.locator('[data-testid="stApp"][data-test-script-state="notRunning"]').wait_for(
                    state="attached", timeout=2 * TIMEOUT_MS)
                if spec.ready:
                    page.locator(spec.ready).first.wait_for(state="visible", timeout=TIMEOUT_MS)
                page.screenshot(path=str(ARTIFACTS / f"page-{spec.url_path}.png"), full_page=True)
                if page.get_by_text("Page not found").count():
                    problems.append(f"{spec.title}: Streamlit says 'Page not found' for /{path}")
                exceptions = page.locator('[data-testid="stException"]')
                if exceptions.count():
                    problems.append(f"{spec.title}: {exceptions.first.inner_text()[:500]}")
        finally:
            browser.close()
    assert not problems, "Streamlit exception boxes:\n" + "\n".join(problems)
