"""Instances: how replicas pack into the machines an offering sells, and how many GPUs are billed.

A GPU offering is sold by the instance (`GpuPriceRow.gpus_per_instance`: an AWS p5.48xlarge is 8 H100s, a
p5.4xlarge one), and the provider bills whole instances. With N GPUs per replica and G GPUs per instance
(docs/economics.md, "Instances"):
- N <= G: a replica never spans two instances (its tensor-parallel group stays on one machine's NVLink), so
  floor(G / N) replicas share one instance: instances = ceil(n / floor(G / N)); the GPUs a partly-filled
  instance leaves idle are billed all the same;
- N > G: a replica spans ceil(N / G) whole instances of its own: instances = n x ceil(N / G);
- GPUs billed = instances x G, and GPU $ = GPUs billed x c x hours. With G = 1 (GPUs sold singly, owned
  GPUs, a scenario's own usd_per_gpu_hour) the GPUs billed are n x N, the replicas' own GPUs.
An hourly fleet (autoscale, a mixed fleet's burst) packs each hour's replicas the same way.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from costmodel.errors import CostmodelError
from costmodel.units import counted


@dataclass(frozen=True, kw_only=True)
class InstancePacking:
    """N GPUs per replica packed into instances of G GPUs (module docstring)."""

    gpus_per_replica: int  # N
    gpus_per_instance: int = 1  # G
    instance: str | None = None  # the offering's instance type, for people

    def __post_init__(self) -> None:
        if self.gpus_per_replica < 1 or self.gpus_per_instance < 1:
            raise CostmodelError(f"instance packing needs >= 1 GPU per replica and per instance (got "
                                 f"{self.gpus_per_replica} and {self.gpus_per_instance}); fix gpus_per_replica or "
                                 "the offering's gpus_per_instance")

    @property
    def replicas_per_instance(self) -> int:
        """floor(G / N) replicas share one instance; 0 when a replica needs more than one instance."""
        return self.gpus_per_instance // self.gpus_per_replica

    @property
    def instances_per_replica(self) -> int:
        """ceil(N / G) instances per replica when N > G (1 when replicas share or fill instances)."""
        return math.ceil(self.gpus_per_replica / self.gpus_per_instance)

    def instances(self, replicas: int) -> int:
        """Whole instances that hold `replicas` replicas."""
        if replicas <= 0:
            return 0
        if self.replicas_per_instance >= 1:
            return math.ceil(replicas / self.replicas_per_instance)
        return replicas * self.instances_per_replica

    def gpus_billed(self, replicas: int) -> int:
        """GPUs billed for `replicas` replicas: whole instances x G."""
        return self.instances(replicas) * self.gpus_per_instance

    def instances_by_hour(self, replicas_by_hour: Sequence[int]) -> tuple[int, ...]:
        """Instances paid in each hour of an hourly fleet."""
        return tuple(self.instances(r) for r in replicas_by_hour)

    @property
    def billed_gpus_per_replica(self) -> float:
        """GPUs billed per replica in full instances: G / floor(G / N), or ceil(N / G) x G (N when G = 1);
        what a replica-hour that is not a whole fleet (a spot interruption's redone work) is billed at."""
        if self.replicas_per_instance >= 1:
            return self.gpus_per_instance / self.replicas_per_instance
        return float(self.instances_per_replica * self.gpus_per_instance)

    @property
    def packs(self) -> bool:
        """True when instances change the bill: G > 1 (else n x N GPUs are billed, as sold singly)."""
        return self.gpus_per_instance > 1

    def rule(self) -> str:
        """The packing rule in words, for the option's notes (empty when G = 1)."""
        if not self.packs:
            return ""
        name = f"{self.instance} " if self.instance else ""
        g, n = self.gpus_per_instance, self.gpus_per_replica
        if self.replicas_per_instance >= 1:
            k = self.replicas_per_instance
            idle = g - k * n
            # The instance's capacity, not the fleet: a fleet of fewer replicas leaves the rest of it idle.
            share = (f"one {g}-GPU {name}instance holds {'up to ' if k > 1 else ''}{counted(k, 'replica')} of "
                     f"{counted(n, 'GPU')}" + (f" ({counted(idle, 'GPU')} of each left idle, billed)" if idle else ""))
            return f"billed by whole instance: {share}; a partly-filled instance is billed in full"
        return (f"billed by whole instance: each {n}-GPU replica spans {self.instances_per_replica} {g}-GPU "
                f"{name}instances")


def billed_note(*, gpus: int, gpus_billed: int | None) -> str:
    """' (8 billed)' when whole instances bill more GPUs than the replicas use, else ''."""
    return "" if gpus_billed is None or gpus_billed == gpus else f" ({gpus_billed:,} billed)"


def gpus_cell(*, gpus: int, gpus_billed: int | None) -> str:
    """The GPUs an option's replicas use, and the GPUs billed when whole instances bill more: '4 (8 billed)'
    (compare's table, the memo's and the app's, so none shows only the smaller number)."""
    return f"{gpus:,}" + billed_note(gpus=gpus, gpus_billed=gpus_billed)
