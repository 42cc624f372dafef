"""The memo when no option is feasible: it says so plainly on page 1, lists each option with its typed
reasons and what would make it feasible, and draws no cost chart or sensitivity (there is no choice to
chart or to flip). Pure functions of the decision and its scenario."""

from __future__ import annotations

from collections import Counter

from costmodel.decision.result_parts import counted_exclusion
from costmodel.decision.results import Decision, exclusion_label
from costmodel.memo.blocks import Block, Bullets, Heading, Para, cut_names, short
from costmodel.memo.review import context_blocks, goals_blocks, signoff_table
from costmodel.memo.revisit import change_blocks
from costmodel.memo.risks import formula_blocks, sources_table
from costmodel.memo.text import option_notes, options_table, workload_table
from costmodel.scenario import Scenario


def infeasible_summary(decision: Decision) -> str:
    """'This memo recommends none of the 6 options compared (2 miss the SLO, ...)', counted by each option's first
    kind; the paragraph's bold lead says "No option is feasible." once."""
    counts = Counter(o.excluded_kind for o in decision.options)
    parts = ", ".join(counted_exclusion(kind, n) for kind, n in
                      sorted(counts.items(), key=lambda kv: (-kv[1], exclusion_label(kv[0]))))
    return (f"This memo recommends none of the {len(decision.options)} options "
            f"compared ({parts}). Nothing here should be read as a choice: fix the inputs below or add an option "
            "that can serve the workload, then re-run.")


def option_reasons(decision: Decision) -> Bullets:
    """Each option with every typed reason it is infeasible; the first reason's sentence names the fix."""
    names = [o.name for o in decision.options]
    items = []
    for o in decision.options:
        kinds = o.excluded_kinds or ((o.excluded_kind,) if o.excluded_kind else ())
        labels = ", ".join(exclusion_label(k) for k in kinds)
        items.append(cut_names(f"{short(o.name)} ({labels}): {o.excluded_reason}", names))
    return Bullets(tuple(items))


def infeasible_blocks(decision: Decision, scenario: Scenario) -> list[Block]:
    """Every section of the nothing-feasible memo, in reading order."""
    assert decision.as_of is not None  # decide always sets it
    blocks: list[Block] = [Heading("Context"), *context_blocks(decision, scenario),
                           Heading("Goals and non-goals"), *goals_blocks(scenario, decision)]
    blocks += [Heading("1. Decision"),
               Para(infeasible_summary(decision), lead="No option is feasible.", style="callout"),
               Para("Why each option is left out (every reason found; the sentence names the scenario field and "
                    "the fix):", style="small"),
               option_reasons(decision), *change_blocks(decision, scenario, None)]
    blocks += [Heading("2. Workload and SLO"), workload_table(decision, scenario)]
    blocks += [Heading("3. Options compared"), options_table(decision), option_notes(decision)]
    blocks += [Heading("4. Cost, capacity and memory"),
               Para("No chart is drawn: a cost-vs-volume or sensitivity chart would only compare options that "
                    "cannot be chosen.")]
    blocks += [Heading("5. Assumptions and sources"), sources_table(decision)]
    blocks += [Heading("6. Sign-off"), signoff_table(scenario, date=decision.as_of)]
    blocks += [Heading("Appendix A. Formulas"), *formula_blocks()]
    return blocks
