"""The `probe-endpoint` command that would settle a cheaper unverified option (decision/recommend.py): its
concurrency is the peak rate x one request's duration, at most the probe's timeout and its concurrency limit."""

from __future__ import annotations

import copy
import math
import re
from pathlib import Path

import pytest
import yaml

from costmodel.decision.rank import decide
from costmodel.decision.recommend import probe_concurrency
from costmodel.measurements.endpoint_result import DEFAULT_TIMEOUT_SECONDS, MAX_CONCURRENCY
from costmodel.scenario import parse_scenario

CHAT = yaml.safe_load((Path(__file__).resolve().parents[1] / "examples" / "chat-assistant.yaml").read_text())


def _flag(check: str, flag: str) -> int:
    found = re.search(rf"{flag} (\d+)", check)
    assert found, check
    return int(found.group(1))


def _check(raw: dict) -> tuple[str, float, float]:
    scenario = parse_scenario(raw)
    cheaper = decide(scenario).cheaper_unverified
    assert cheaper is not None
    return cheaper.check, scenario.workload.peak_requests_per_second(), scenario.workload.mean_output_tokens()


@pytest.fixture(scope="module")
def batch_day_check():
    """chat-assistant with a batch-tolerant SLO (an hour's TTFT, no p99): the D8 case of the design review."""
    raw = copy.deepcopy(CHAT)
    raw["workload"]["batch_allowed"] = True
    raw["slo"]["ttft_p90_seconds"] = 3600
    raw["slo"].pop("ttft_p99_seconds")
    return _check(raw)


def test_interactive_check_is_littles_law_at_the_limits():
    check, rate, output = _check(copy.deepcopy(CHAT))
    # The unverified API publishes no latency: the duration is TTFT limit + output x TPOT limit (1 + 350 x 0.05).
    slo = CHAT["slo"]
    duration = slo["ttft_p90_seconds"] + output * slo["tpot_p90_seconds"]
    assert duration < DEFAULT_TIMEOUT_SECONDS
    assert _flag(check, "--concurrency") == math.ceil(rate * duration)
    assert _flag(check, "--requests") == max(200, 2 * math.ceil(rate * duration))


def test_long_ttft_limit_is_capped_at_the_probe_timeout(batch_day_check):
    check, rate, _ = batch_day_check
    concurrency = _flag(check, "--concurrency")
    # Little's law on the hour's limit would be rate x 3618.5 s (15,460); the probe holds a request 60 s at most.
    assert concurrency == math.ceil(rate * DEFAULT_TIMEOUT_SECONDS) < MAX_CONCURRENCY
    assert _flag(check, "--requests") == 2 * concurrency and "--slo-ttft-p90 3600" in check


def test_option_figures_and_the_concurrency_limit():
    # Published figures shorten the duration: 0.5 + 100 x 0.01 = 1.5 s at 10 req/s -> 15 in flight.
    assert probe_concurrency(peak_requests_per_second=10.0, ttft_seconds=0.5, tpot_seconds=0.01,
                             output_tokens=100.0) == 15
    # Never above what the probe accepts (--concurrency at most MAX_CONCURRENCY), never below 1.
    assert probe_concurrency(peak_requests_per_second=1e4, ttft_seconds=1.0, tpot_seconds=0.05,
                             output_tokens=350.0) == MAX_CONCURRENCY
    assert probe_concurrency(peak_requests_per_second=1e-6, ttft_seconds=1.0, tpot_seconds=0.05,
                             output_tokens=350.0) == 1
