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


# Inside costmodel data flows down. Each package (or top-level module) may import only the names listed
# here, besides itself and the leaf modules (units, errors, fileio, dtypes, strict, lazy, http_deadline). Imports
# inside functions count too (the CLI's probe commands import `probes` lazily, which the first tests above allow).
LEAVES = {"units", "errors", "fileio", "dtypes", "strict", "lazy", "http_deadline"}
CORE = {"roofline", "efficiency", "ops", "comm", "config", "memory", "estimate", "grid", "catalog", "expert_parallel"}
ALLOWED: dict[str, set[str]] = {
    "catalog": set(),
    "comm": {"catalog"},
    "ops": {"catalog"},
    "efficiency": {"catalog", "ops"},
    "roofline": {"catalog", "ops", "comm", "efficiency"},
    "expert_parallel": {"catalog", "ops", "comm", "roofline"},
    "config": {"catalog", "roofline", "ops", "comm"},
    "memory": {"catalog", "roofline", "ops", "comm", "config"},
    "grid": {"catalog", "roofline", "ops", "comm", "memory"},
    "estimate": {"catalog", "roofline", "ops", "comm", "config", "memory", "measurements"},
    "measurements": set(CORE),
    "validation": CORE | {"serving", "measurements", "scenario"},
    "scenario": {"catalog"},
    "pricing": {"scenario"},
    "serving": CORE | {"scenario", "measurements"},
    "decision": CORE | {"scenario", "pricing", "serving", "measurements"},
    "search": CORE | {"scenario", "pricing", "serving", "measurements", "decision"},
    "charts": CORE | {"scenario", "pricing", "serving", "measurements", "decision"},
    "memo": CORE | {"scenario", "pricing", "serving", "measurements", "decision", "search", "charts"},
    "cli": CORE | {"scenario", "pricing", "serving", "measurements", "decision", "search", "charts", "memo"},
}


def _costmodel_imports(path: Path) -> set[str]:
    """First component under costmodel of every `costmodel.X...` import in the file (anywhere in it)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        modules = []
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules = [node.module]
            if node.module == "costmodel":
                modules = [f"costmodel.{alias.name}" for alias in node.names]
        for module in modules:
            parts = module.split(".")
            if parts[0] == "costmodel" and len(parts) > 1:
                found.add(parts[1])
    return found


def _unit(path: Path) -> str:
    rel = path.relative_to(ROOT / "costmodel")
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def test_costmodel_packages_import_only_downwards():
    offenders = []
    for path in sorted((ROOT / "costmodel").rglob("*.py")):
        unit = _unit(path)
        if unit in LEAVES or unit in {"__init__", "__main__"}:
            continue
        assert unit in ALLOWED, f"{unit} has no row in ALLOWED: say what it may import"
        for imported in _costmodel_imports(path) - {unit} - LEAVES:
            if imported not in ALLOWED[unit]:
                offenders.append(f"{path.relative_to(ROOT)} imports costmodel.{imported}")
    assert not offenders, offenders


def test_decision_never_imports_memo_charts_or_cli():
    for path in (ROOT / "costmodel" / "decision").rglob("*.py"):
        assert not _costmodel_imports(path) & {"memo", "charts", "cli"}, path


def test_only_the_cli_prints():
    """The library returns typed results; only costmodel/cli writes to stdout/stderr."""
    offenders = []
    for path in (ROOT / "costmodel").rglob("*.py"):
        if _unit(path) == "cli" or path.name == "__main__.py":  # entry points print like the CLI
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                func = node.func
                if isinstance(func, ast.Name) and func.id == "print":
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} print()")
                if (isinstance(func, ast.Attribute) and func.attr == "write" and isinstance(func.value, ast.Attribute)
                        and func.value.attr in {"stdout", "stderr"}):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} sys.{func.value.attr}.write")
    assert not offenders, offenders


def test_contributing_map_names_every_package_and_module():
    """docs/contributing.md opens with the map; a new package or top-level module must get its line."""
    text = (ROOT / "docs" / "contributing.md").read_text(encoding="utf-8")
    mapping = text.split("```")[1]
    for path in sorted((ROOT / "costmodel").iterdir()):
        if path.name.startswith("_") or path.name == "data":
            continue
        if path.is_dir() and (path / "__init__.py").exists():
            assert f"{path.name}/" in mapping, f"docs/contributing.md's map has no line for costmodel/{path.name}/"
        elif path.suffix == ".py":
            assert path.name in mapping, f"docs/contributing.md's map has no line for costmodel/{path.name}"
