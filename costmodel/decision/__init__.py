"""The decision: scenario -> evaluated options (cost, SLO, break-even), ranking, reasons and warnings,
plus the volume sweep and sensitivity every face renders.

Data flows down: this package reads the scenario, pricing, serving and measurements packages and never
imports memo/, charts/ or cli/ (tests/test_layering.py). Modules: `rank` (decide), `options` (one option's
result), `results` (the typed results), `warnings`, `economics` (the $ formulas), `horizon` (cost by month),
`breakeven` (the reference API and the (u*, V*) pair), `volume`, `sensitivity`.
"""
