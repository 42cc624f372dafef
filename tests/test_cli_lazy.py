"""The CLI imports only the module of the subcommand it runs, and every `--help` still works."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from costmodel.cli import SUBCOMMANDS, build_parser, main

ROOT = Path(__file__).resolve().parents[1]


def _choices_help(parser: argparse.ArgumentParser) -> dict[str, str | None]:
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {choice.dest: choice.help for choice in action._choices_actions}


def test_the_table_lists_what_each_module_registers_in_order():
    full = _choices_help(build_parser())
    assert list(full) == [name for name, _, _ in SUBCOMMANDS]
    assert full == {name: help_text for name, _, help_text in SUBCOMMANDS}


def test_top_level_help_without_imports_equals_the_full_one(capsys):
    with pytest.raises(SystemExit) as lazy_exit:
        build_parser(only=()).parse_args(["--help"])
    lazy = capsys.readouterr().out
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--help"])
    assert lazy_exit.value.code == 0
    assert lazy == capsys.readouterr().out


@pytest.mark.parametrize("name", [name for name, _, _ in SUBCOMMANDS])
def test_every_subcommand_help_works(name, capsys):
    with pytest.raises(SystemExit) as exc:
        main([name, "--help"])
    assert exc.value.code == 0
    assert f"usage: costmodel {name}" in capsys.readouterr().out


def test_estimate_imports_neither_the_decision_nor_the_simulator():
    code = ("import sys, io, contextlib\nfrom costmodel.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    main(['estimate', '--model', 'llama-3.1-8b', '--hardware', 'h100-sxm', '--json'])\n"
            "heavy = ('costmodel.decision', 'costmodel.search', 'costmodel.serving', 'costmodel.pricing', "
            "'costmodel.scenario.model', 'pandas', 'requests')\n"
            "print(','.join(sorted(m for m in sys.modules if m.startswith(heavy))))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert proc.stdout.strip() == ""


def test_a_bad_subcommand_is_named_with_the_choices(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["estimat"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'estimat'" in err and "'estimate'" in err


def test_the_package_names_load_on_first_use_and_estimate_stays_the_function():
    code = ("import costmodel.estimate, costmodel\nfrom costmodel import estimate, evaluate_grid, CostmodelError\n"
            "print(callable(estimate), costmodel.estimate is estimate, sorted(costmodel.__all__) == costmodel.__all__)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert proc.stdout.split() == ["True", "True", "True"]
