"""User-facing errors: one exception type whose message names the field and the fix."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class CostmodelError(ValueError):
    """Bad input from a user (flag, file, id). The CLI prints it and exits with code 2."""


def unknown_id_error(kind: str, given: str, known: Iterable[str]) -> CostmodelError:
    """Build "unknown model 'x'; did you mean 'y'?" (exact-id lookups only; this only suggests)."""
    known_list = sorted(known)
    close = difflib.get_close_matches(given.lower(), known_list, n=1, cutoff=0.5)
    hint = f"; did you mean '{close[0]}'?" if close else f"; known: {', '.join(known_list)}"
    return CostmodelError(f"unknown {kind} '{given}'{hint}")


class UnwrittenOutputError(CostmodelError):
    """The work was done but its output file could not be written (disk full, read-only folder).

    `content` is the file's text, so nothing is lost: the CLI prints it on stdout (inside the JSON object
    with --json) and exits 2 with this message, which names the path."""

    def __init__(self, message: str, *, path: str, content: str) -> None:
        super().__init__(message)
        self.path = path
        self.content = content


class NoRequestFitsError(CostmodelError):
    """No request of the workload fits a replica's KV memory after its weights (costmodel.serving.simulation).

    For `simulate` it is the user's input error; a decision or a search marks that configuration infeasible
    with this message instead of stopping (the roofline's fit check counts memory more loosely than the
    engine's own KV rule, so it can pass a configuration the simulator then cannot run)."""
