"""List the longest functions (and methods) in Python source trees, measured with `ast`.

Usage: python scripts/function_lengths.py [PATH ...] [--top N]
Defaults: PATH = costmodel, N = 10. A function's length is its lines from `def` (decorators included) to
its last statement, so nested functions count inside their parent and again on their own row.
"""

from __future__ import annotations

import argparse
import ast
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import NamedTuple


class FunctionLength(NamedTuple):
    """One function: where it is and how many source lines it spans."""

    lines: int
    path: str
    line: int
    name: str


def function_lengths(source: str, *, path: str) -> Iterator[FunctionLength]:
    """Every function and method in one module's source, with its qualified name (Class.method, outer.inner)."""

    def walk(node: ast.AST, prefix: str) -> Iterator[FunctionLength]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                last = child.end_lineno or child.lineno
                yield FunctionLength(last - first + 1, path, child.lineno, prefix + child.name)
                yield from walk(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                yield from walk(child, f"{prefix}{child.name}.")
            else:
                yield from walk(child, prefix)

    yield from walk(ast.parse(source), "")


def longest(paths: Sequence[Path], *, top: int) -> list[FunctionLength]:
    """The `top` longest functions under `paths` (files or folders, *.py), longest first."""
    files = sorted({f for p in paths for f in ([p] if p.is_file() else p.rglob("*.py"))})
    found = [fn for f in files for fn in function_lengths(f.read_text(encoding="utf-8"), path=str(f))]
    return sorted(found, key=lambda fn: (-fn.lines, fn.path, fn.line))[:top]


def main(argv: Sequence[str] | None = None) -> int:
    """Print `lines  path:line  name`, one row per function."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, default=[Path("costmodel")])
    parser.add_argument("--top", type=int, default=10, help="how many rows (default 10)")
    args = parser.parse_args(argv)
    if args.top < 1:
        parser.error(f"--top must be >= 1 (got {args.top})")
    for path in args.paths:
        if not path.exists():
            parser.error(f"{path} does not exist")
    for fn in longest(args.paths, top=args.top):
        print(f"{fn.lines:5d}  {fn.path}:{fn.line}  {fn.name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
