"""The memo's "Configurations considered" section: what the deployment search (`costmodel search`) looked at,
its counts, and the Pareto fronts of $/M tokens vs tokens/s per user and vs TTFT p90 (a chart and a table).

Present only when the memo is built with a search (`memo --search K`, or a scenario with a `search:` section).
Which models were searched (the scenario's own, those past the quality floor, or `search.models`) is said here
and, when models beyond the scenario's own are treated as substitutes, on page 1 (`scope_blocks`).
The blocks are pure data; `search_front_chart` imports matplotlib through `costmodel.memo.chart_canvas` when drawn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from costmodel.memo.blocks import Block, Figure, Heading, Para, Table, latency, money, per_mtok

if TYPE_CHECKING:  # a memo without a search never imports the search package (~35 ms CPU)
    from PIL import Image

    from costmodel.memo.content import ChartData
    from costmodel.search import Configuration, SearchResult

FIGURE_KEY = "search_front"
MAX_TABLE_ROWS = 12  # the front beyond this is in `costmodel search --json`


def configuration_label(row: Configuration) -> str:
    """'qwen2.5-7b, 1x l4 fp8/fp8' (model, GPUs x accelerator, weight/KV dtypes), and the serving mode when the row
    runs one: 'deepseek-r1, 16x h200 fp8/fp8, DEP16 + mtp1'."""
    label = f"{row.model}, {row.gpus_per_replica}x {row.hardware} {row.weight_dtype}/{row.kv_dtype}"
    return label if row.mode_choice is None else f"{label}, {row.mode_label()}"


def mode_table(result: SearchResult) -> Table:
    """The cheapest configuration meeting the SLO of each serving-mode family the search simulated."""
    rows = result.best_by_mode
    cells = tuple((r.mode_family(), configuration_label(r), r.offering, str(r.replicas), money(r.usd_per_month),
                   per_mtok(r.usd_per_mtok), f"{r.tokens_per_second_per_user:.0f}",
                   latency(r.ttft_p90_seconds) if r.ttft_p90_seconds is not None else "n/a") for r in rows)
    return Table(header=("serving mode", "configuration", "offering", "replicas", "$/month", "$/M tokens",
                         "tok/s per user", "TTFT p90"),
                 rows=cells, widths=(0.15, 0.27, 0.17, 0.07, 0.09, 0.08, 0.08, 0.09),
                 align=("l", "l", "l", "r", "r", "r", "r", "r"), highlight_row=0,
                 caption="Aggregated or disaggregated, with or without speculative decoding (MTP), tensor or expert "
                         "parallel: the cheapest simulated configuration of each mode that meets the SLO, cheapest "
                         "first (a mode not listed was pruned: its cost lower bound could not enter the top K). Each "
                         "is costed and simulated as the options are, against the published results of "
                         "docs/validation.md ('Serving modes').")


def ranking_sentence(result: SearchResult) -> str:
    """' Ranked by ...' when a searched reserved term runs past the horizon (decision/commitment.py), else ''."""
    row = result.cheapest_committing
    if result.ranking_basis == "usd_per_month" or row is None:
        return ""
    return (f" The search ranks as the options are compared, by the {result.horizon_months}-month horizon total with "
            "the commitments still owed after it, per month of the horizon (the month-0 fleet held constant): "
            f"{configuration_label(row)} on {row.offering} ({row.scaling}) bills {money(row.usd_per_month)}/month "
            f"but signs a {row.commitment_term_months}-month term, so it ranks at "
            f"{money(row.ranked_usd_per_month)}/month. The comparison then re-costs the searched options month by "
            "month.")


def variants_label(row: Configuration) -> str:
    """The same-cost variants collapsed into the row, beyond the one shown ('' when none)."""
    from costmodel.search.rows import variants_summary  # only when there is a search to show

    return variants_summary(row)


def scope_blocks(result: SearchResult | None) -> list[Block]:
    """Page 1: when the search treats models beyond the scenario's own as substitutes, say so."""
    if result is None or result.scope is None or not result.scope.treated_as_substitutes:
        return []
    return [Para(result.scope.sentence() + " The searched configurations added to the options (names starting with "
                 "'search-') compete on cost and latency alone.", lead="Searched models.", style="callout")]


def _front_rows(result: SearchResult) -> list[Configuration]:
    best = result.best[:1]
    rows = list(dict.fromkeys([*best, *result.frontier]))
    return sorted(rows, key=lambda r: (r.usd_per_mtok, configuration_label(r), r.offering))[:MAX_TABLE_ROWS]


def front_table(result: SearchResult) -> Table:
    """The cheapest configuration and the front, cheapest $/M tokens first (the cheapest highlighted)."""
    rows = _front_rows(result)
    best = result.best[0] if result.best else None
    cells = tuple((configuration_label(r) + (f" (same cost: {variants_label(r)})" if variants_label(r) else ""),
                   r.offering, r.engine, r.scaling, str(r.replicas), money(r.usd_per_month), money(r.ops_usd_per_month),
                   per_mtok(r.usd_per_mtok), f"{r.tokens_per_second_per_user:.0f}",
                   latency(r.ttft_p90_seconds) if r.ttft_p90_seconds is not None else "n/a") for r in rows)
    return Table(header=("configuration", "offering", "engine", "scaling", "replicas", "$/month", "of it ops",
                         "$/M tokens", "tok/s per user", "TTFT p90"),
                 rows=cells, widths=(0.22, 0.17, 0.08, 0.08, 0.06, 0.09, 0.08, 0.07, 0.07, 0.08),
                 align=("l", "l", "l", "l", "r", "r", "r", "r", "r", "r"),
                 highlight_row=rows.index(best) if best in rows else None,
                 caption="Configurations on the Pareto fronts (highlighted: the cheapest meeting the SLO), each with "
                         "the scenario's operations cost. Engine: the serving-engine profile simulated; scaling: fixed "
                         "(the same replicas every hour), autoscale (replicas follow the hourly demand; on-demand "
                         "offerings) or mixed (a fixed reserved or owned base plus an on-demand burst). Same cost: "
                         "the dtype, engine or scaling variants that cost the same to the cent, collapsed into the row.")


def search_blocks(result: SearchResult, *, top_k: int) -> list[Block]:
    """Heading, counts, the front chart and its table."""
    counts = (f"The search enumerated {result.candidates_enumerated:,} self-host configurations (model x accelerator x "
              "tensor-parallel GPUs x weight/KV dtype x GPU offering x engine profile x scaling), pruned "
              f"{result.candidates_pruned:,} with the roofline bounds (memory fit, a capacity upper bound and so a "
              "$/month lower bound, a TPOT lower bound) "
              f"and simulated {result.candidates_simulated:,} at the SLO in {result.seconds:.1f} s. The fronts are "
              f"over the simulated configurations; the {top_k} cheapest meeting the SLO are added to the options "
              "compared (names starting with 'search-').")
    blocks: list[Block] = [Heading("Configurations considered"), Para(counts)]
    if result.scope is not None:
        blocks.append(Para(result.scope.sentence()))
    if result.candidates_without_host:
        blocks.append(Para(f"{result.candidates_without_host:,} owned configurations were left out (among the pruned): "
                           "their host server has no sourced figures, so their cost would leave it out."))
    if not result.best:
        blocks.append(Para("No searched configuration meets the SLO, so there is no front to show."))
        return blocks
    best = result.best[0]
    blocks.append(Para(f"Cheapest meeting the SLO: {configuration_label(best)} on {best.offering} (engine "
                       f"{best.engine}, {best.scaling}), {money(best.usd_per_month)}/month "
                       f"({per_mtok(best.usd_per_mtok)}/M tokens).{ranking_sentence(result)}", lead="Best found."))
    if result.best_by_mode:
        blocks.append(mode_table(result))
    blocks.append(Figure(FIGURE_KEY, "Figure S. The searched configurations that meet the SLO on the two Pareto fronts: "
                         "$/M tokens against tokens/s per user (left, higher is better) and against TTFT p90 (right, "
                         "lower is better). Points on a line are not beaten on both axes by any simulated "
                         "configuration; the star is the cheapest.", height_fraction=0.4))
    blocks.append(front_table(result))
    reasons = {why for why in (result.frontier_tokens_per_second_per_user_reason, result.frontier_ttft_reason) if why}
    blocks += [Para(f"A front has one point: {why}.", style="small") for why in sorted(reasons)]
    return blocks


def search_front_chart(data: ChartData) -> Image.Image:
    """Two panels: $/M tokens vs tokens/s per user, and vs TTFT p90 (the fronts as step lines)."""
    from matplotlib.ticker import FuncFormatter

    from costmodel.memo.chart_canvas import PALETTE, _figure, _png

    result = data.search
    if result is None:
        raise ValueError("the search front chart needs a search result")
    panels = ((result.frontier_tokens_per_second_per_user, "tokens_per_second_per_user", "tokens/s per user"),
              (result.frontier_ttft, "ttft_p90_seconds", "TTFT p90 (s)"))
    with _figure(0.4, ncols=2) as (fig, axes):
        for ax, (rows, metric, ylabel) in zip(axes, panels, strict=True):
            xs = [r.usd_per_mtok for r in rows]
            ys = [float(getattr(r, metric) or 0.0) for r in rows]
            ax.step(xs, ys, where="post", color=PALETTE[0], linewidth=1.2)
            ax.scatter(xs, ys, color=PALETTE[0], s=14, zorder=3)
            if result.best:
                best = result.best[0]
                ax.scatter([best.usd_per_mtok], [float(getattr(best, metric) or 0.0)], marker="*", s=90,
                           color=PALETTE[1], zorder=4, label="cheapest")
                ax.legend(loc="best", frameon=True, framealpha=0.85, edgecolor="none")
            ax.set_xlabel("$/M tokens")
            ax.set_ylabel(ylabel)
            ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"${v:,.3g}"))
        return _png(fig)
