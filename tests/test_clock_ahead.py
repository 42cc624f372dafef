"""Issue 10: the date-dependent tests pass with the clock a year ahead (Debian's faketime, installed by .ci/run).

Every test pins its dates (a scenario's `as_of`, `--date`, `today=`), so moving the machine's clock must not change
a single result. This runs those test files again in a child pytest under `faketime -f +365d` and requires them
to pass. It skips cleanly where faketime is not installed (apt-get install faketime).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The test files that read dates: retirements, price ages, quality and latency as-of dates, imports' `checked`.
DATE_DEPENDENT = [
    "tests/test_scenario.py", "tests/test_api_cost.py", "tests/test_api_latency.py", "tests/test_catalog_data.py",
    "tests/test_price_age.py", "tests/test_price_fixes.py", "tests/test_pricing_sheets.py", "tests/test_quality.py",
    "tests/test_import_policy.py", "tests/test_reliability_inputs.py", "tests/test_cli_catalog.py",
    "tests/test_decision.py", "tests/test_catalog_hostile.py", "tests/test_memo_cli.py",
]


def test_date_dependent_tests_pass_a_year_ahead() -> None:
    faketime = shutil.which("faketime")
    if faketime is None:
        pytest.skip("needs Debian's faketime (apt-get install faketime; .ci/run installs it)")
    probe = subprocess.run([faketime, "-f", "+365d", sys.executable, "-c", "import time; print(time.time())"],
                           capture_output=True, text=True, check=True)
    shift_seconds = float(probe.stdout.strip()) - time.time()
    assert shift_seconds >= 364 * 86_400  # faketime moves the child's clock a year ahead
    files = [f for f in DATE_DEPENDENT if (ROOT / f).exists()]
    proc = subprocess.run(
        [faketime, "-f", "+365d", sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *files],
        cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}, timeout=1200,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
