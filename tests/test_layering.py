"""costmodel is a pure library: importing it pulls in neither streamlit nor torch, app nor probes."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_import_costmodel_loads_no_heavy_or_upper_layers():
    code = (
        "import sys, costmodel, costmodel.cli, costmodel.estimate, costmodel.grid\n"
        "costmodel.cli.build_parser()\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in {'streamlit', 'torch', 'app', 'probes', 'plotly'})\n"
        "print(','.join(bad))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert proc.stdout.strip() == "", f"costmodel imported: {proc.stdout}"


def test_no_module_level_imports_of_upper_layers():
    offenders = []
    for path in (ROOT / "costmodel").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:  # module level only; lazy imports inside functions are allowed
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                if name.split(".")[0] in {"streamlit", "torch", "app", "probes", "plotly"}:
                    offenders.append(f"{path.relative_to(ROOT)}: {name}")
    assert not offenders, offenders


def test_app_and_probes_do_not_import_each_other():
    for package, forbidden in (("probes", "app"), ("app", "probes")):
        folder = ROOT / package
        if not folder.exists():
            continue
        for path in folder.rglob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module:
                    assert node.module.split(".")[0] != forbidden, f"{path} imports {node.module}"
