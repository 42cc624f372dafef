"""Plain-language definitions of the metrics the app shows: the glossary section and every help tooltip.

One entry per term; pages pass `help=glossary.tip("TTFT")` to st.metric and column configs, and the
landing page lists them all. Definitions follow DESIGN.md's vocabulary.
"""

from __future__ import annotations

GLOSSARY: dict[str, str] = {
    "TTFT": "Time to first token: seconds from sending a request until the first output token arrives "
            "(queueing + prefill of the prompt).",
    "TPOT": "Time per output token, in milliseconds: the mean gap between output tokens after the first one "
            "(decode speed as one user sees it).",
    "ITL": "Inter-token latency: the gap between two consecutive output tokens; TPOT is its mean over a request.",
    "E2E": "End-to-end latency: seconds from sending a request until its last output token (TTFT + output tokens "
           "x TPOT).",
    "p90": "90th percentile: 90% of requests are at or below this value (p50 is the median, p99 the slowest 1%).",
    "SLO": "Service-level objective: the latency limits (p90 TTFT and TPOT, optionally p50/p99/E2E) an option must "
           "meet. 'meets' and 'misses' come from a simulation or measurement; 'unverified' means no measured or "
           "published latency backs the verdict.",
    "saturation": "The request rate at which a replica's queue grows without bound: beyond it latency keeps "
                  "rising, so a replica is sized below it to keep the SLO.",
    "utilization": "Mean demand divided by the capacity that is provisioned at the SLO: the share of paid GPU "
                   "time that does useful work.",
    "break-even utilization": "The utilization at which a self-hosted option costs the same per token as the "
                              "reference API; above 100% it is never cheaper at this size.",
    "break-even volume": "The monthly token volume at which a self-hosted option's $/month equals the reference "
                         "API's; 'never' when no volume in range gets there.",
    "goodput": "Throughput that counts only requests that met the SLO (tokens/s or requests/s within the limits).",
    "$/M tokens": "US dollars per million tokens, blended over prompt and output tokens.",
}


def tip(term: str) -> str:
    """The tooltip text for one glossary term (KeyError for a term that is not defined: a typo in a page)."""
    return f"**{term}**: {GLOSSARY[term]}"


def markdown() -> str:
    """The whole glossary as a Markdown list (dollar signs escaped for st.markdown)."""
    return "\n".join(f"- **{term.replace('$', chr(92) + '$')}**: {text.replace('$', chr(92) + '$')}"
                     for term, text in GLOSSARY.items())
