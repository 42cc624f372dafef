"""The PDF design-review memo: decision, options, charts, sensitivity, risks, sources, formulas.

`build_memo_pdf` needs the `memo` extra (reportlab, matplotlib); they are imported only when a memo is
built, so `import costmodel.memo` (and the CLI) stays light.
"""
