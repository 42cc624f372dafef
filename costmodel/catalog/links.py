"""The link a tensor-parallel all-reduce runs over: inside one node, or across nodes.

A replica of `gpus` GPUs fits in one node when gpus <= the accelerator row's `gpus_per_node` (8 on an
HGX/DGX board): its ring runs over NVLink/NVSwitch, Infinity Fabric or PCIe at `interconnect_bytes_per_s`
(or, where the row cites it, the lower data rate a ring reaches after protocol overhead,
`interconnect_achieved_bytes_per_s`).
Beyond that the ring crosses the network, and a ring all-reduce runs at the speed of its slowest hop
(Patarasuk and Yuan 2009, "Bandwidth optimal all-reduce algorithms for clusters of workstations", JPDC 69(2)):
the per-GPU NIC (`inter_node_bytes_per_s`, e.g. one 400 Gb/s ConnectX-7 per GPU on a DGX H100).
A row without `gpus_per_node` states no topology, so every size is priced on the intra-node link (the
behaviour before topology existed). Across nodes each all-reduce also pays a fixed latency: the row's
`inter_node_latency_seconds`, else a measured two-node NCCL figure over InfiniBand (below). A row that names its node size but no cited network figure cannot
price a replica that spans nodes: that raises, naming the row and the way out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from costmodel.catalog.allreduce_curve import allreduce_curve
from costmodel.catalog.schema import AcceleratorSpec
from costmodel.errors import CostmodelError

# A small all-reduce across two nodes over InfiniBand, measured: NVIDIA/nccl issue #1244 (2024-04-09, read
# 2026-12-01), "2 node 16 H20 GPU allreduce performance": 2 HGX nodes of 8 Hopper GPUs on NVLink 4 / NVSwitch,
# 16 ConnectX-7 NICs (IB NDR 400 Gb/s, one per GPU, as on a DGX H100/H200/B200 row here), NCCL 2.21.5 with
# NCCL_ALGO=NVLSTree: nccl-tests all_reduce_perf at 8 B takes 47.60 us out of place (47.54 in place), and
# 46-48 us from 4 B to 512 B, so the floor is latency, not bandwidth. A row whose network cites no latency of
# its own uses this; it is a two-node figure, so a replica spanning more nodes (deeper trees) is, if anything,
# slower: a lower bound there.
CROSS_NODE_ALLREDUCE_LATENCY_SECONDS = 47.6e-6
CROSS_NODE_LATENCY_SOURCE = "NVIDIA/nccl issue #1244: 8 B all-reduce, 2 x 8 Hopper GPUs over IB NDR, 47.6 us"


@dataclass(frozen=True, kw_only=True)
class TensorParallelLink:
    """What one all-reduce of a `gpus`-GPU replica pays: bus bandwidth per GPU and a fixed latency."""

    bytes_per_s: float  # one direction, per GPU (the ring's slowest hop)
    latency_seconds: float  # one small all-reduce
    nodes: int  # nodes the replica spans (1 = inside one node)
    description: str  # what the link is, for reports
    # Seconds of one all-reduce at each allreduce_curve.GRID_BYTES size, measured (the row's `allreduce_table`
    # inside one node); None = the ring formula from bytes_per_s and latency_seconds.
    curve: tuple[float, ...] | None = None


def intra_node_bytes_per_s(hardware: AcceleratorSpec) -> float:
    """Data bandwidth per GPU, one direction, an all-reduce reaches inside one node.

    The row's `interconnect_achieved_bytes_per_s` where it cites one: NVLink carries packet headers, so a
    ring moves data below the line rate ("450GB/s is the line rate. With the protocol overhead (~20%) NCCL
    can get an effective NVLink bandwidth of 370GB/s", NCCL maintainer sjeaugey, NVIDIA/nccl-tests issue
    #212, 2024-05-06, on 8x H100). Else the line rate `interconnect_bytes_per_s` (no cited figure).
    """
    achieved = hardware.interconnect_achieved_bytes_per_s
    return hardware.interconnect_bytes_per_s if achieved is None else achieved


def tp_link(hardware: AcceleratorSpec, *, gpus: int) -> TensorParallelLink:
    """The link a `gpus`-way tensor-parallel replica of `hardware` all-reduces over."""
    per_node = hardware.gpus_per_node
    if per_node is None or gpus <= per_node:
        curve = allreduce_curve(hardware.allreduce_table, gpus=gpus) if gpus > 1 else None
        return TensorParallelLink(bytes_per_s=intra_node_bytes_per_s(hardware),
                                  latency_seconds=hardware.link_latency_seconds, nodes=1,
                                  description=hardware.interconnect + (" (measured all-reduce curve)" if curve else ""),
                                  curve=curve)
    nodes = math.ceil(gpus / per_node)
    if hardware.inter_node_bytes_per_s is None:
        raise CostmodelError(
            f"gpus {gpus}: a replica of {gpus} {hardware.id} spans {nodes} nodes of {per_node}, but the catalog row "
            f"'{hardware.id}' has no cited inter-node bandwidth; use at most {per_node} GPUs per replica, or pass "
            "--collectives with a measured cross-node all-reduce"
        )
    latency = hardware.inter_node_latency_seconds
    if latency is None:  # the row cites none: the measured two-node figure, never below the in-node latency
        latency = max(CROSS_NODE_ALLREDUCE_LATENCY_SECONDS, hardware.link_latency_seconds)
    return TensorParallelLink(bytes_per_s=hardware.inter_node_bytes_per_s, latency_seconds=latency, nodes=nodes,
                              description=f"{hardware.inter_node} across {nodes} nodes of {per_node}")
