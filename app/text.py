"""Library text shown through Streamlit's Markdown: '$' would open LaTeX math, so escape it."""

from __future__ import annotations


def md(text: str) -> str:
    """Text safe for st.markdown / st.success / st.warning (dollar signs stay dollar signs)."""
    return text.replace("$", "\\$")
