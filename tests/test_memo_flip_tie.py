"""The memo's flip sentence tells a tie (two options at the same $/month, as searched candidates that differ only
in a setting priced the same) from a recommendation that is not the cheapest."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from costmodel.decision.sensitivity import Advantage
from costmodel.memo.text import flip_sentence


def _sentence(base: Advantage, *, break_even_tokens_per_month: float | None = None) -> str:
    sensitivity: Any = SimpleNamespace(base=base, flip_below=None, flip_above=None)
    chosen = SimpleNamespace(kind="self-host", break_even_tokens_per_month=break_even_tokens_per_month,
                             break_even_against="deepseek-r1-deepinfra")
    decision: Any = SimpleNamespace(tokens_per_month=48.7e9, recommendation="search-1-x", chosen=lambda: chosen,
                                    usable_options=(chosen,))
    return flip_sentence(decision, sensitivity)


def test_a_tie_is_named_as_a_tie() -> None:
    text = _sentence(Advantage(0.0, "search-2-x"))
    assert text.startswith("The recommendation ties with search-2-x at today's inputs")
    assert "not the cheapest" not in text


def test_a_loss_or_a_failing_recommendation_is_not_a_tie() -> None:
    for base in (Advantage(-5.0, "y"), Advantage(0.0, "y", recommendation_fails=True), Advantage(0.0, None)):
        assert _sentence(base).startswith("The recommendation is not the cheapest qualifying option")


def test_a_positive_margin_without_flips_says_the_decision_does_not_flip() -> None:
    assert _sentence(Advantage(100.0, "z")).startswith("The decision does not flip anywhere")


def test_no_flip_is_never_claimed_next_to_a_break_even_in_the_range() -> None:
    # The review's memo: no flip found, yet page 1 states a break-even with the API at 20.49B tokens/month
    # (0.42x today's 48.70B). The sentence must name that crossing, not "does not flip anywhere".
    text = _sentence(Advantage(100.0, "z"), break_even_tokens_per_month=20.49e9)
    assert not text.startswith("The decision does not flip anywhere")
    assert "breaks even with deepseek-r1-deepinfra at 20.49B tokens/month" in text
    assert f"({20.49 / 48.7:.2f}x today)" in text
