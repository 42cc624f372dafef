"""Every subcommand's `--help`, nested ones included, prints its page and exits 0.

A raw `%` in an argparse help string (e.g. an f-string's `{x:.0%}`) is read as a format directive when the
page is rendered, so `prices refresh --help` raised TypeError and `calibrate --help` ValueError. The walk
below finds every subparser from the built parser, so a new subcommand is covered without listing it.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

from costmodel.cli import build_parser, main


def _subcommand_paths(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    for action in parser._actions:  # argparse keeps subparsers only here
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _subcommand_paths(sub, (*path, name))


PATHS = list(_subcommand_paths(build_parser()))


def test_the_walk_finds_the_nested_subcommands():
    assert ("prices", "refresh") in PATHS and ("models", "import") in PATHS and ("calibrate",) in PATHS


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "costmodel")
def test_help_of_every_subcommand_prints_and_exits_0(path, capsys):
    with pytest.raises(SystemExit) as exc:
        main([*path, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: costmodel")
