"""Chart legends read each option's typed `slo_status`: an unverified option is labelled unverified, never
"misses SLO" (review D4), in the memo's Figure 1 and in the app's volume figure alike."""

from __future__ import annotations

import typing

import pytest

from app.compare_figures import volume_figure
from app.scenario_io import load_example
from costmodel.charts.compare import SLO_LEGEND_NOTES, compare_view, slo_legend_note
from costmodel.decision.result_parts import SloStatus
from costmodel.memo.curves import VolumeSeries


def test_every_status_has_a_truthful_note() -> None:
    assert set(SLO_LEGEND_NOTES) == set(typing.get_args(SloStatus))
    assert slo_legend_note("unverified") == " (latency unverified)"
    assert slo_legend_note("misses") == " (misses SLO)"
    assert slo_legend_note("meets") == slo_legend_note("likely_meets") == ""


def test_memo_legend_labels_an_unverified_option_unverified() -> None:
    charts = pytest.importorskip("costmodel.memo.charts")
    unverified = VolumeSeries("llama-3.3-70b-deepinfra", "api", "unverified", (1.0,))
    missing = VolumeSeries("gpt-4.1-mini", "api", "misses", (1.0,))
    assert charts.volume_label(unverified, recommendation=None).endswith("(latency unverified)")
    assert "misses" not in charts.volume_label(unverified, recommendation=None)
    assert charts.volume_label(missing, recommendation="x").endswith("(misses SLO)")
    chosen = VolumeSeries("claude-haiku-4.5", "api", "likely_meets", (1.0,))
    assert charts.volume_label(chosen, recommendation="claude-haiku-4.5").endswith("(recommended)")
    assert charts.SLO_LINESTYLE.get("unverified") != charts.SLO_LINESTYLE.get("misses")


def test_app_volume_figure_labels_each_curve_by_its_decision_status() -> None:
    view = compare_view(load_example("chat-assistant.yaml"))
    statuses = {c.name: c.slo_status for c in view.volume_curves}
    assert statuses == {o.name: o.slo_status for o in view.decision.usable_options}
    assert "unverified" in statuses.values()  # the bundled example has an unmeasured API (deepinfra)
    colors = {c.name: "#000000" for c in view.volume_curves}
    names = [t.name for t in volume_figure(view, colors).data if t.name]
    for curve in view.volume_curves:
        entry = next(n for n in names if n.startswith(f"{curve.name} ("))
        assert entry.endswith(slo_legend_note(curve.slo_status) or f"({curve.kind})")
        assert ("misses SLO" in entry) == (curve.slo_status == "misses")
