"""The decision: scenario -> evaluated options (cost, SLO, break-even), ranking, reasons and warnings,
plus the volume sweep and sensitivity every face renders.

Data flows down: this package reads the scenario, pricing, serving and measurements packages and never
imports memo/, charts/ or cli/ (tests/test_layering.py). Modules: `rank` (decide, as named stages), `ranking`,
`options` (an API option's result), `self_host` and `hybrid` (a self-host or hybrid option's result), `terms` (an
option's prices and its `OptionPlan`), `plan` (the one costing function, `plan_cost`), `fleet_policy`, `fleet`
and `mixed` (sizing by hour), `results` (the typed results), `warnings`, `economics` (the $ formulas),
`horizon` (cost by month), `breakeven` (the reference API and the (u*, V*) pair), `volume` (the sweep, on the
plans), `sensitivity`.
"""
