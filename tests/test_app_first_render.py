"""The landing page's first render stays light: Overview reads the Compare page's cached decision through
app/compare_cache.py and never imports the Compare page's figure modules (plotly figures, pandas tables),
which only the Compare page pays for (issue 16: first render <= 2.5 s; timing is measured in bench/, not here)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("app.views.compare", "app.compare_panels", "app.compare_figures")

_SCRIPT = """
import json, sys
from streamlit.testing.v1 import AppTest
at = AppTest.from_file({main!r}, default_timeout=120)
at.run()
print(json.dumps({{"exceptions": [str(e.value) for e in at.exception], "metrics": [m.label for m in at.metric],
                  "loaded": sorted(m for m in {heavy!r} if m in sys.modules)}}))
"""


def test_overview_first_render_does_not_import_the_compare_page() -> None:
    # A fresh interpreter: in this test process other tests may have imported the Compare page already.
    script = _SCRIPT.format(main=str(ROOT / "app" / "main.py"), heavy=HEAVY)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT,
                         timeout=300)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["exceptions"] == []
    # The answer rendered: cost, $/M tokens, the SLO verdict and the recommendation's premium over the cheapest
    # usable option (the verify-first rule: app/views/overview.py states it next to the cost).
    assert result["metrics"] == ["Cost", "Per million tokens", "Latency SLO", "Premium over the cheapest usable"]
    assert result["loaded"] == []
