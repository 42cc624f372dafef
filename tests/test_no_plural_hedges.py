"""No 'replica(s)', 'GPU(s)' or '$/gpu-hour' in what the tool writes for people: counts carry their noun in the
right number (costmodel.units.counted) and prices their unit as written elsewhere ($/GPU-hour)."""

from __future__ import annotations

import re
from pathlib import Path

from costmodel.decision.instances import InstancePacking
from costmodel.units import counted

ROOT = Path(__file__).resolve().parents[1]
# A noun with a hedged plural inside a string literal of the library or the app ('http(s)' is a URL scheme).
HEDGED = re.compile(r"\b(replica|GPU|start|hour|level|instance)\(s\)")


def test_counted_puts_the_noun_in_the_right_number() -> None:
    assert counted(1, "replica") == "1 replica"
    assert counted(0, "GPU") == "0 GPUs"
    assert counted(12_000, "start") == "12,000 starts"


def test_no_source_file_hedges_a_plural_or_lowercases_gpu_hour() -> None:
    found = [f"{path.relative_to(ROOT)}:{n}" for folder in ("costmodel", "app")
             for path in sorted((ROOT / folder).rglob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
             if HEDGED.search(line) or "$/gpu-hour" in line]
    assert found == []


def test_a_packing_rule_reads_in_the_singular_and_the_plural() -> None:
    # A 5-GPU replica on an 8-GPU instance: floor(8 / 5) = 1 replica per instance, 8 - 5 = 3 GPUs left idle;
    # a 7-GPU replica leaves 8 - 7 = 1 GPU idle; 1-GPU replicas: 8 share one instance, none idle.
    assert "one 8-GPU x instance holds 1 replica of 5 GPUs (3 GPUs of each left idle, billed)" in \
        InstancePacking(gpus_per_replica=5, gpus_per_instance=8, instance="x").rule()
    assert "(1 GPU of each left idle" in InstancePacking(gpus_per_replica=7, gpus_per_instance=8).rule()
    # The instance's capacity ("up to"), never a claim about how many replicas the fleet has (review L5).
    assert "one 8-GPU instance holds up to 8 replicas of 1 GPU;" in \
        InstancePacking(gpus_per_replica=1, gpus_per_instance=8).rule()
    assert "one 8-GPU instance holds up to 2 replicas of 4 GPUs;" in \
        InstancePacking(gpus_per_replica=4, gpus_per_instance=8).rule()
