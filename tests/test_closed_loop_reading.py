"""Little's law on the B200 Dynamo 3P1D report's means, written out, and docs/validation.md printing them."""

from __future__ import annotations

from pathlib import Path

import pytest

from costmodel.validation.closed_loop_reading import DYNAMO_B200_26K, step_seconds_per_sequence

DOC = Path(__file__).resolve().parents[1] / "docs" / "validation.md"


def test_the_report_splits_into_waiting_and_decoding_requests() -> None:
    low, high = DYNAMO_B200_26K
    # Concurrency 16: 22.61173 s latency - 7.51346 s TTFT - 0.75848 s to the second token = 14.33979 s over
    # 983.9 - 2 gaps; 0.70 requests/s x 7.51346 s wait for a first token, 0.70 x 14.33979 s decode.
    assert low.decode_step_seconds == pytest.approx(14.33979 / 981.9)
    assert low.waiting_first_token_requests == pytest.approx(0.70 * 7.51346)
    assert low.decoding_requests == pytest.approx(0.70 * 14.33979)
    # Concurrency 32: 36.45778 - 13.14497 - 0.83053 = 22.48228 s over 981.1 gaps, at 0.85 requests/s.
    assert high.decode_step_seconds == pytest.approx(22.48228 / 981.1)
    assert high.decoding_requests == pytest.approx(0.85 * 22.48228)
    slope = (22.48228 / 981.1 - 14.33979 / 981.9) / (0.85 * 22.48228 - 0.70 * 14.33979)
    assert step_seconds_per_sequence(low, high) == pytest.approx(slope)
    assert slope == pytest.approx(0.916e-3, rel=1e-3)  # s per extra decoding sequence


def test_the_doc_prints_the_split() -> None:
    text = " ".join(DOC.read_text(encoding="utf-8").split())
    low, high = DYNAMO_B200_26K
    assert (f"{low.waiting_first_token_requests:.1f} / {high.waiting_first_token_requests:.1f} of the 16 / 32 "
            f"requests in flight before their first token and {low.decoding_requests:.1f} / "
            f"{high.decoding_requests:.1f} decoding") in text
    assert f"the {high.requests_per_second:.2f} requests/s at 32 clients is the one TP4 decode worker's rate" in text
