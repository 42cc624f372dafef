"""`costmodel memo SCENARIO --out memo.pdf`: the PDF design-review memo (needs the `memo` extra).

reportlab and matplotlib are imported inside the handler (through `costmodel.memo.build_memo`), so the
CLI's start-up stays light for every other subcommand.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from costmodel.cli import progress
from costmodel.cli.calibration_args import add_calibration_flag, apply_calibration_args
from costmodel.cli.output import bounded_int, emit, parse_date
from costmodel.cli.progress import add_quiet_flag
from costmodel.cli.startup import long_lived_imports
from costmodel.decision.capacity import CapacityCache
from costmodel.errors import CostmodelError
from costmodel.fileio import check_output_path, write_bytes_or_save_elsewhere
from costmodel.scenario import load_scenario
from costmodel.scenario.search import SCENARIO_SEARCH_TOP_K


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add `memo`."""
    parser = subparsers.add_parser("memo", help="write the PDF design-review memo for a scenario")
    parser.add_argument("scenario", type=Path, help="scenario YAML/JSON file")
    parser.add_argument("--out", type=Path, required=True, help="PDF file to write (replaced atomically)")
    add_calibration_flag(parser)
    parser.add_argument("--date", type=parse_date, default=None,
                        help="evaluation date YYYY-MM-DD (price ages, PDF date); default today. Same date, same PDF")
    parser.add_argument("--search", type=bounded_int(1, 20), default=None, metavar="K",
                        help="search the deployment space, add its K cheapest configurations to the options and a "
                             "'Configurations considered' section (default K=3 when the scenario has a `search:` "
                             "section)")
    parser.add_argument("--json", action="store_true", help='print {"path", "pages", "seconds"}')
    add_quiet_flag(parser)
    parser.set_defaults(handler=run_memo)


def run_memo(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    if args.out.suffix.lower() != ".pdf":
        raise CostmodelError(f"--out {args.out}: the memo is a PDF; give a file name ending in .pdf")
    check_output_path(args.out, example="memo.pdf")  # before the build: a bad path must not cost it
    scenario, calibration = apply_calibration_args(load_scenario(args.scenario), args.calibration)
    with long_lived_imports():  # lazy: reportlab + matplotlib, imported with the collector off
        from costmodel.memo import build_memo, load_renderers

        load_renderers()

    top_k = args.search if args.search is not None else (SCENARIO_SEARCH_TOP_K if scenario.search else None)
    cache = CapacityCache()
    result = None
    with progress.bar(args, total=2 if top_k is not None else 1, desc="memo") as shown:
        if top_k is not None:
            from costmodel.search import search, with_searched_options  # only when searching

            shown.note("searching")
            result = search(scenario, top_k=top_k, calibration=calibration, today=args.date, cache=cache,
                            progress=lambda _, text: shown.note(text))
            scenario = with_searched_options(scenario, result, top_k=top_k)
            shown.step("searched")
        shown.note("deciding, drawing the charts, writing the PDF")
        memo = build_memo(scenario, calibration=calibration, today=args.date, capacity_cache=cache,
                          search_result=result, search_top_k=top_k or 0)
        shown.step("built")
    write_bytes_or_save_elsewhere(args.out, memo.pdf, what="memo")
    seconds = time.perf_counter() - started
    payload = {"path": str(args.out), "pages": memo.pages, "seconds": round(seconds, 3),
               "recommendation": memo.content.decision.recommendation}
    emit(payload, as_json=args.json,
         text=f"wrote {args.out}: {memo.pages} pages, recommendation "
              f"{payload['recommendation'] or 'none (no option is feasible)'} ({seconds:.1f} s)")
    return 0
