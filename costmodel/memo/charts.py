"""The memo's charts as 200 dpi RGB rasters (matplotlib, Agg canvas, DejaVu Sans): one function per figure,
the CHARTS table of them, and `render_charts`, which draws the requested ones.

The canvas they draw on (size, DPI, rc style, palette, labels, axis formatters, the raster, the CJK font
fallback) is `costmodel.memo.chart_canvas`; its names are re-exported here for the callers and tests that
import them from this module. Imported only when a memo is built (needs the `memo` extra).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter
from PIL import Image

from costmodel.charts.compare import slo_legend_note
from costmodel.memo.chart_canvas import (
    _FONT,
    DPI,
    LABEL_CHARS,
    PALETTE,
    RC,
    WIDTH_INCHES,
    _cjk_family,
    _figure,
    _png,
    _tokens_axis,
    _usd_axis,
    label,
    option_colors,
)
from costmodel.memo.configurations import FIGURE_KEY as SEARCH_FIGURE_KEY
from costmodel.memo.configurations import search_front_chart
from costmodel.memo.content import ChartData
from costmodel.memo.curves import VolumeSeries

LOW, HIGH = "#9bb7d4", "#1f5fa8"  # tornado: input scaled down, up
# Figure 1: a verdict the recommendation may rest on is solid; no latency evidence dash-dot (dotted lines are the
# flips); a miss dashed.
SLO_LINESTYLE = {"unverified": "-.", "misses": "--"}

__all__ = [
    "CHARTS", "DPI", "HIGH", "LABEL_CHARS", "LOW", "PALETTE", "RC", "WIDTH_INCHES", "interactivity_chart",
    "kv_chart", "label", "mixed_splits", "months_chart", "option_colors", "provisioned_by_hour", "render_charts",
    "tornado_chart", "traffic_chart", "volume_chart",
]


def volume_label(series: VolumeSeries, *, recommendation: str | None) -> str:
    """Figure 1's legend entry: the option, whether it is recommended, and its SLO verdict as typed."""
    return (label(series.name) + (" (recommended)" if series.name == recommendation else "")
            + slo_legend_note(series.slo_status))


def volume_chart(data: ChartData) -> Image.Image:
    curves = data.volume
    color = option_colors(data)
    legend_inches = 0.17 * math.ceil(len(curves.series) / 2) + 0.08  # two columns under the axes
    with _figure((2.55 + legend_inches) / WIDTH_INCHES, bottom_inches=0.42 + legend_inches) as (fig, axes):
        ax = axes[0]
        x = np.asarray(curves.tokens_per_month)
        for series in curves.series:
            y = np.asarray(series.usd_per_month, dtype=float)
            y = np.where(np.isfinite(y), y, np.nan)
            bold = series.name == data.recommendation
            # The recommendation on top: a 0-replica hybrid draws the same line as its API and would hide it.
            ax.plot(x, y, color=color[series.name], linewidth=2.2 if bold else 1.2, zorder=3 if bold else 2,
                    linestyle=SLO_LINESTYLE.get(series.slo_status, "-"),
                    label=volume_label(series, recommendation=data.recommendation))
        for name, volume in curves.break_evens:
            index = next(i for i, s in enumerate(curves.series) if s.name == name)
            y = np.asarray(curves.series[index].usd_per_month, dtype=float)
            if x[0] <= volume <= x[-1] and np.all(np.isfinite(y)):
                at = float(np.exp(np.interp(math.log(volume), np.log(x), np.log(y))))
                ax.plot([volume], [at], marker="D", markersize=5, color=color[name],
                        markeredgecolor="black", linestyle="none")
        ax.axvline(curves.current_tokens_per_month, color="black", linewidth=1.0)
        ax.annotate("today", (curves.current_tokens_per_month, 1.0), xycoords=("data", "axes fraction"),
                    xytext=(3, -10), textcoords="offset points", fontsize=7)
        for flip in curves.flips:
            ax.axvline(flip, color="#b0303a", linewidth=1.0, linestyle=":")
            ax.annotate("flip", (flip, 1.0), xycoords=("data", "axes fraction"), xytext=(3, -20),
                        textcoords="offset points", fontsize=7, color="#b0303a")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.minorticks_off()  # each tick is four artists; minor ones on two log axes cost ~0.1 s
        ax.xaxis.set_major_formatter(FuncFormatter(_tokens_axis))
        ax.yaxis.set_major_formatter(FuncFormatter(_usd_axis))
        ax.set_xlabel("prompt + output tokens per month")
        ax.set_ylabel("USD per month")
        # Under the axes: inside, the legend would hide the lines it names.
        fig.legend(*ax.get_legend_handles_labels(), loc="lower center", bbox_to_anchor=(0.5, 0.0), ncol=2,
                   frameon=False)
        return _png(fig)


def provisioned_by_hour(data: ChartData) -> list[tuple[str, list[float], list[int] | None]]:
    """(option, requests/s provisioned in each hour, replicas in each hour) from the fleet's replicas by
    hour when the decision has them, else the flat provisioned rate of TrafficCurves."""
    if data.fleet is not None and data.fleet.fleets:
        return [(f.name, list(f.requests_per_second_by_hour), list(f.replicas_by_hour)) for f in data.fleet.fleets]
    return [(name, [provisioned] * 24, None) for name, provisioned in data.traffic.provisioned]


def mixed_splits(data: ChartData) -> dict[str, tuple[str, float]]:
    """Mixed fleets of Figure 2: option -> ('base 2 + burst 0..3', the base's requests/s at the SLO)."""
    if data.fleet is None:
        return {}
    return {f.name: (f.split, f.base_requests_per_second) for f in data.fleet.fleets
            if f.split and f.base_requests_per_second is not None}


def traffic_chart(data: ChartData) -> Image.Image:
    traffic = data.traffic
    color = option_colors(data)
    lines = provisioned_by_hour(data)
    with _figure(0.36) as (fig, axes):
        ax = axes[0]
        # One stepped patch, not 24 bars: fewer artists, same picture.
        ax.stairs(traffic.requests_per_second, np.arange(25) - 0.5, fill=True, color="#9bb7d4",
                  label="demand (requests/s)")
        splits = mixed_splits(data)
        for name, by_hour, replicas in lines:
            peak = (f", {max(replicas)} replica{'' if max(replicas) == 1 else 's'} at peak" if replicas else "")
            split = f" ({splits[name][0]})" if name in splits else ""
            ax.stairs(by_hour, np.arange(25) - 0.5, baseline=None, color=color.get(name, PALETTE[-1]), linewidth=1.5,
                      label=f"{label(name)}: up to {max(by_hour):.2f} req/s{peak}{split}")
            if name in splits:  # the fixed base, dashed: the burst is the gap up to the solid steps
                ax.axhline(splits[name][1], color=color.get(name, PALETTE[-1]), linewidth=1.0, linestyle="--")
            counts = replicas or []
            for hour, count in enumerate(counts):
                if hour == 0 or count != counts[hour - 1]:  # the replica count where it changes
                    ax.annotate(str(count), (hour, by_hour[hour]), xytext=(0, 2), textcoords="offset points",
                                fontsize=6, ha="center", color=color.get(name, PALETTE[-1]))
        ax.set_xticks(range(0, 24, 2))
        ax.set_xlim(-0.6, 23.6)
        ax.set_xlabel("hour of day")
        ax.set_ylabel("requests/s")
        ax.set_ylim(0, max([*traffic.requests_per_second, *(max(b) for _, b, _ in lines)]) * 1.6)
        ax.legend(loc="upper left", frameon=False, fontsize=6.5)
        return _png(fig)


def months_chart(data: ChartData) -> Image.Image:
    """USD paid per month over the horizon (drawn only when the decision computed it)."""
    months = data.months
    assert months is not None and months.computed
    color = option_colors(data)
    with _figure(0.36) as (fig, axes):
        ax = axes[0]
        for series in months.series:
            ax.plot(range(len(series.usd_by_month)), series.usd_by_month, color=color.get(series.name, PALETTE[-1]),
                    linewidth=2.2 if series.name == data.recommendation else 1.2, marker="o", markersize=2.5,
                    label=label(series.name))
        if months.ranking_change_month is not None:
            ax.axvline(months.ranking_change_month, color="#b0303a", linewidth=1.0, linestyle=":")
        ax.yaxis.set_major_formatter(FuncFormatter(_usd_axis))
        ax.set_ylim(bottom=0)
        ax.set_xlabel("month (0 = as of the memo's date)")
        ax.set_ylabel("USD per month")
        ax.legend(loc="upper left", frameon=False, fontsize=6.5)
        return _png(fig)


def interactivity_chart(data: ChartData) -> Image.Image:
    color_of = option_colors(data)
    with _figure(0.42) as (fig, axes):
        ax = axes[0]
        slo_user = 1.0 / data.tpot_limit_seconds
        top_user = max([slo_user * 1.2] + [max(c.tokens_per_second_per_user, default=0) * 1.1 for c in data.interactivity])
        ax.axvspan(0, slo_user, color="#b0303a", alpha=0.07)
        ax.axvline(slo_user, color="#b0303a", linewidth=1.0)
        ax.annotate(f"TPOT SLO: {slo_user:.0f} tokens/s per user", (slo_user, 1.0),
                    xycoords=("data", "axes fraction"), xytext=(3, -10), textcoords="offset points", fontsize=7,
                    color="#b0303a")
        for curve in data.interactivity:
            color = color_of[curve.name]
            ax.plot(curve.tokens_per_second_per_user, curve.output_tokens_per_second_per_gpu, color=color,
                    linewidth=1.2, label=label(curve.name))
            x_all = np.asarray(curve.tokens_per_second_per_user)
            y_all = np.asarray(curve.output_tokens_per_second_per_gpu)
            ok_all = np.asarray(curve.meets_tpot_limit, dtype=bool)
            for mask, face in ((ok_all, color), (~ok_all, "white")):
                ax.plot(x_all[mask], y_all[mask], marker="o", markersize=3.5, color=color, markerfacecolor=face,
                        linestyle="none")
            for users, x, y in zip(curve.concurrency, x_all, y_all, strict=True):
                if users in (1, 8, 64) or users == curve.concurrency[-1]:
                    ax.annotate(str(users), (x, y), xytext=(3, 2), textcoords="offset points", fontsize=6, color=color)
            if curve.operating_tokens_per_second_per_user is not None:
                ax.plot([curve.operating_tokens_per_second_per_user], [curve.operating_output_tokens_per_second_per_gpu],
                        marker="*", markersize=10, color=color, markeredgecolor="black", linestyle="none")
        ax.set_xlim(0, top_user)
        ax.set_ylim(bottom=0)
        ax.set_xlabel("interactivity: output tokens/s per user (1 / TPOT)")
        ax.set_ylabel("output tokens/s per GPU")
        ax.legend(loc="upper right", frameon=False)
        return _png(fig)


def kv_chart(data: ChartData) -> Image.Image:
    """One axes for every option: memory per GPU as a share of its HBM, so different GPUs compare."""
    color = option_colors(data)
    with _figure(0.38) as (fig, axes):
        ax = axes[0]
        for panel in data.kv:
            for index, (context, row) in enumerate(zip(panel.contexts_tokens, panel.total_bytes_per_gpu, strict=True)):
                share = 100.0 * np.asarray(row) / panel.hbm_bytes_per_gpu
                tail = index > 0
                ax.plot(panel.batches, share, color=color[panel.name], linewidth=1.3, linestyle="--" if tail else "-",
                        label=f"{label(panel.name)}: {'p99' if tail else 'mean'} context {context:,} tokens "
                              f"(fits {panel.max_batch[index]})")
            if panel.peak_concurrency is not None:
                at = float(np.interp(panel.peak_concurrency, panel.batches,
                                     100.0 * np.asarray(panel.total_bytes_per_gpu[0]) / panel.hbm_bytes_per_gpu))
                ax.plot([panel.peak_concurrency], [at], marker="v", markersize=7, color=color[panel.name],
                        markeredgecolor="black", linestyle="none")
        ax.axhline(100.0, color="black", linewidth=1.0)
        ax.annotate("HBM full", (0.0, 100.0), xycoords=("axes fraction", "data"), xytext=(2, 2),
                    textcoords="offset points", fontsize=6.5)
        ax.set_ylim(0, 135)
        ax.set_xlim(0, max(p.batches[-1] for p in data.kv))
        ax.set_xlabel("concurrent sequences per replica (triangles: estimated peak-hour concurrency)")
        ax.set_ylabel("% of HBM per GPU")
        ax.legend(loc="lower right", frameon=True, framealpha=0.85, edgecolor="none", fontsize=6)
        return _png(fig)


def tornado_chart(data: ChartData) -> Image.Image:
    sens = data.sensitivity
    bars = [b for b in sens.bars if math.isfinite(b.low.usd_per_month) and math.isfinite(b.high.usd_per_month)]
    base = sens.base.usd_per_month if math.isfinite(sens.base.usd_per_month) else 0.0
    with _figure(0.36, left_inches=2.3) as (fig, axes):
        ax = axes[0]
        rows = np.arange(len(bars))[::-1]
        # Two half-height bars per input (low above, high below) so neither hides the other.
        lows = np.asarray([b.low.usd_per_month for b in bars]) - base
        highs = np.asarray([b.high.usd_per_month for b in bars]) - base
        ax.barh(rows + 0.17, lows, left=base, color=LOW, height=0.34)
        ax.barh(rows - 0.17, highs, left=base, color=HIGH, height=0.34)
        for row, bar in zip(rows, bars, strict=True):
            if bar.swing_usd_per_month < 1.0 and abs(bar.low.usd_per_month - base) < 1.0:
                ax.annotate("no change", (base, row), xytext=(4, -3), textcoords="offset points", fontsize=6.5,
                            color="#555555")
        fraction = data.sensitivity.fraction
        ax.legend(handles=[Patch(color=LOW, label=f"input -{fraction:.0%}"), Patch(color=HIGH, label=f"input +{fraction:.0%}")],
                  loc="lower left", frameon=True, framealpha=0.85, edgecolor="none")
        ax.axvline(base, color="black", linewidth=1.0)
        ax.axvline(0.0, color="#b0303a", linewidth=1.0, linestyle="--")
        ax.annotate("decision flips", (0.0, 1.0), xycoords=("data", "axes fraction"), xytext=(3, -10),
                    textcoords="offset points", fontsize=7, color="#b0303a")
        ends = [0.0, base] + [v for b in bars for v in (b.low.usd_per_month, b.high.usd_per_month)]
        pad = 0.08 * (max(ends) - min(ends) or 1.0)
        ax.set_xlim(min(ends) - pad, max(ends) + pad)
        ax.set_yticks(rows, [label(b.label) for b in bars])
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"${v:,.0f}"))
        ax.set_xlabel(f"advantage, USD per month (today {'$' + format(base, ',.0f')})")
        ax.grid(axis="y", visible=False)
        return _png(fig)


CHARTS: dict[str, Callable[[ChartData], Image.Image]] = {
    "volume": volume_chart,
    "traffic": traffic_chart,
    "months": months_chart,
    "interactivity": interactivity_chart,
    "kv": kv_chart,
    "tornado": tornado_chart,
    SEARCH_FIGURE_KEY: search_front_chart,
}


def render_charts(data: ChartData, keys: set[str]) -> dict[str, Image.Image]:
    """Each requested chart as an RGB image at DPI; CJK option names fall back to Noto Sans CJK in legends."""
    volume = getattr(data, "volume", None)  # a chart rendered alone (the search front) may carry only its own data
    family = _cjk_family([getattr(data, "recommendation", ""), *(s.name for s in (volume.series if volume else ()))])
    token = _FONT.set(("DejaVu Sans", family) if family else ())
    try:
        return {key: CHARTS[key](data) for key in sorted(keys)}
    finally:
        _FONT.reset(token)
