"""Display helpers every page shares: library text made safe for Markdown, and inline errors.

A bad value is shown next to the page as st.error naming the field, never a traceback.
"""

from __future__ import annotations

import streamlit as st
from pydantic import ValidationError


def md(text: str) -> str:
    """Text safe for st.markdown / st.success / st.warning: '$' would open LaTeX math, so escape it."""
    return text.replace("$", "\\$")


def describe(exc: Exception) -> str:
    """One line per problem; pydantic errors name the field path ('workload.requests_per_month')."""
    if isinstance(exc, ValidationError):
        lines = []
        for item in exc.errors():
            field = ".".join(str(part) for part in item["loc"]) or "(scenario)"
            lines.append(f"field '{field}': {item['msg']}")
        return "; ".join(lines)
    return str(exc)


def show_error(where: str, exc: Exception, *, labels: dict[str, str] | None = None) -> None:
    """st.error with where the input came from and the library's message (which names the fix).

    `labels` maps the CLI flag names the library's messages use ('--gpus') to the widget labels on the
    page ('GPUs per replica'), so the message names the field the user sees."""
    message = describe(exc)
    for flag, label in (labels or {}).items():
        message = message.replace(flag, f"'{label}'")
    st.error(f"**{md(where)}**: {md(message)}")
