"""Tensor-parallel communication across nodes and from a measured collectives fit (issue 17, item 2).

Inside a node the all-reduce ring runs over NVLink; a replica larger than the row's `gpus_per_node`
runs its ring over the network, at the per-GPU NIC's bandwidth (catalog/links.py). DGX H100: eight
GPUs, one 400 Gb/s ConnectX-7 per GPU = 50e9 bytes/s each way (NVIDIA DGX BasePOD reference
architecture, Core Components, cited in accelerators.yaml).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from costmodel.catalog.links import tp_link
from costmodel.catalog.loader import load_accelerator, load_model
from costmodel.catalog.params import derive_shape
from costmodel.catalog.schema import AcceleratorSpec
from costmodel.cli import main
from costmodel.config import ReplicaConfig
from costmodel.errors import CostmodelError
from costmodel.grid import evaluate_grid, link_axes
from costmodel.measurements.collectives_result import (
    AlphaBetaFit,
    CollectivesResult,
    OpFit,
    apply_collectives,
    bus_bytes_per_s,
)
from costmodel.ops import uniform_work
from costmodel.roofline import Efficiency, step
from costmodel.serving.steptime import FIELDS, StepTimer

H100 = load_accelerator("h100-sxm")
SHAPE = derive_shape(load_model("llama-3.1-70b"))  # 80 layers, hidden 8192 (config.json)


def test_inside_a_node_the_nvlink_row_and_across_nodes_the_nic() -> None:
    inside = tp_link(H100, gpus=8)
    # NVLink 4 line rate 450e9 B/s one way, of which a ring reaches 370e9 after protocol overhead (NCCL
    # maintainer, NVIDIA/nccl-tests issue #212, cited in accelerators.yaml): the link prices the achieved rate.
    assert H100.interconnect_bytes_per_s == 450e9
    assert (inside.bytes_per_s, inside.latency_seconds, inside.nodes) == (370e9, 20e-6, 1)
    across = tp_link(H100, gpus=16)
    assert (across.bytes_per_s, across.nodes) == (400e9 / 8, 2)
    assert across.latency_seconds == 47.6e-6  # NVIDIA/nccl issue #1244: 8 B all-reduce, 2 nodes, IB NDR
    # A row that cites its own cross-node latency keeps it.
    cited = H100.model_copy(update={"inter_node_latency_seconds": 30e-6})
    assert tp_link(cited, gpus=16).latency_seconds == 30e-6
    assert "across 2 nodes of 8" in across.description


def test_decode_allreduce_across_two_nodes_by_hand() -> None:
    # TP16 decode at batch 64: ring bytes 2 * 15/16 * 64 * 8192 * 2 = 1,966,080 B per all-reduce, over
    # 50e9 B/s plus 47.6 us (the row cites no cross-node latency: the 8 B all-reduce measured across 2 x 8
    # Hopper GPUs on IB NDR in NVIDIA/nccl issue #1244, catalog/links.py); 2 per layer.
    by_hand = 80 * 2 * (1_966_080 / 50e9 + 47.6e-6)
    result = step(SHAPE, H100, batch=64, new_tokens=1, context_tokens=1024, gpus=16)
    assert result.comm_seconds == pytest.approx(by_hand, rel=1e-12)
    # Inside the node the row's measured all-reduce table prices it (tests/test_allreduce_curve.py); without
    # the table, the ring over NVLink at 370e9 B/s plus 20 us.
    formula = H100.model_copy(update={"allreduce_table": None})
    inside = step(SHAPE, formula, batch=64, new_tokens=1, context_tokens=1024, gpus=8)
    assert inside.comm_seconds == pytest.approx(80 * 2 * (2 * 7 / 8 * 64 * 8192 * 2 / 370e9 + 20e-6), rel=1e-12)


def test_a_row_without_topology_keeps_the_intra_node_link() -> None:
    a100 = load_accelerator("a100-80gb")  # no gpus_per_node in the catalog row
    assert a100.gpus_per_node is None
    assert tp_link(a100, gpus=16).bytes_per_s == a100.interconnect_bytes_per_s


def test_spanning_nodes_without_a_cited_network_raises_naming_the_row() -> None:
    bare = H100.model_copy(update={"inter_node_bytes_per_s": None, "inter_node": None, "inter_node_source": None})
    with pytest.raises(CostmodelError, match="h100-sxm.*no cited inter-node bandwidth.*at most 8"):
        tp_link(bare, gpus=16)
    # The grid screens such sizes out (infinite latency) instead of failing as a whole.
    _, latency = link_axes([bare], [8, 16])
    assert latency[0, 0, 0, 0, 0, 0] == 20e-6 and np.isinf(latency[0, 0, 1, 0, 0, 0])


def test_network_figures_need_their_source_and_node_size() -> None:
    row = H100.model_dump()
    row["inter_node_source"] = None
    with pytest.raises(ValueError, match="inter_node_source"):
        AcceleratorSpec.model_validate(row)


def test_achieved_link_figure_needs_its_source_and_stays_below_the_line_rate() -> None:
    row = H100.model_dump()
    row["interconnect_achieved_source"] = None
    with pytest.raises(ValueError, match="interconnect_achieved_source"):
        AcceleratorSpec.model_validate(row)
    row = H100.model_dump()
    row["interconnect_achieved_bytes_per_s"] = 500e9  # above NVLink 4's 450e9 line rate
    with pytest.raises(ValueError, match="line rate"):
        AcceleratorSpec.model_validate(row)
    # A row that cites no achieved figure prices the line rate (B200: NVLink 5, 1.8 TB/s bidirectional / 2).
    b200 = load_accelerator("b200")
    assert b200.interconnect_achieved_bytes_per_s is None
    assert tp_link(b200, gpus=8).bytes_per_s == 900e9


def test_a_measured_bandwidth_replaces_the_achieved_figure_and_a_flat_fit_keeps_it() -> None:
    measured = apply_collectives(H100, _collectives(latency=30e-6, algbw=200e9))
    assert tp_link(measured, gpus=8).bytes_per_s == pytest.approx(350e9)  # 200e9 * 2 * 7/8, not 370e9
    flat = apply_collectives(H100, _collectives(latency=40e-6, algbw=None))
    assert tp_link(flat, gpus=8).bytes_per_s == 370e9


def test_step_timer_matches_the_roofline_across_nodes() -> None:
    config = ReplicaConfig(shape=SHAPE, hardware=H100, gpus=16, weight_dtype="bf16", kv_dtype="bf16",
                           efficiency=Efficiency.from_accelerator(H100))
    timer = StepTimer.for_config(config, max_tokens=512)
    work = uniform_work(SHAPE, batch=32.0, new_tokens=1.0, context_tokens=2000.0)
    fields = tuple(float(getattr(work, name)) for name in FIELDS)
    expected = step(SHAPE, H100, batch=32, new_tokens=1, context_tokens=2000, gpus=16).step_seconds
    assert timer.seconds(32, fields) == pytest.approx(expected, rel=1e-9)


def test_grid_prices_the_network_for_tp16() -> None:
    grid = evaluate_grid(model_ids=["llama-3.1-70b"], hardware_ids=["h100-sxm"], gpus=[8, 16],
                         weight_dtypes=["bf16"], batch=[64], context_tokens=[1024])
    for index, gpus in enumerate((8, 16)):
        expected = step(SHAPE, H100, batch=64, new_tokens=1, context_tokens=1024, gpus=gpus).step_seconds
        assert float(grid.decode_step_seconds[0, 0, index, 0, 0, 0]) == pytest.approx(expected, rel=1e-9)


def _collectives(*, latency: float, algbw: float | None, processes: int = 8) -> CollectivesResult:
    fit = AlphaBetaFit(latency_seconds=latency, bytes_per_second=algbw)
    return CollectivesResult(backend="nccl", processes=processes, device="cuda", repeats=5, points=[],
                             ops={"all_reduce": OpFit(fit=fit)})


def test_measured_allreduce_reproduces_its_own_time() -> None:
    # A fit of 30 us + bytes / 200e9 on 8 ranks: busbw = 200e9 * 2 * 7/8 = 350e9 (nccl-tests' busbw).
    result = _collectives(latency=30e-6, algbw=200e9)
    assert bus_bytes_per_s(result.ops["all_reduce"].fit, processes=8) == pytest.approx(350e9)
    measured = apply_collectives(H100, result)
    assert (measured.interconnect_bytes_per_s, measured.link_latency_seconds) == (pytest.approx(350e9), 30e-6)
    # TP8 decode at batch 64: each all-reduce moves the 64 * 8192 * 2 = 1,048,576-byte activation, which the
    # fit times at 30e-6 + 1,048,576 / 200e9 s; 2 per layer, 80 layers.
    by_hand = 80 * 2 * (30e-6 + 1_048_576 / 200e9)
    result_step = step(SHAPE, measured, batch=64, new_tokens=1, context_tokens=1024, gpus=8)
    assert result_step.comm_seconds == pytest.approx(by_hand, rel=1e-12)
    # The cross-node figures stay the datasheet's: the probe ran inside one node.
    assert measured.inter_node_bytes_per_s == H100.inter_node_bytes_per_s


def test_flat_fit_keeps_the_datasheet_bandwidth_and_many_ranks_replace_the_network() -> None:
    flat = apply_collectives(H100, _collectives(latency=40e-6, algbw=None))
    assert (flat.interconnect_bytes_per_s, flat.link_latency_seconds) == (450e9, 40e-6)
    cross = apply_collectives(H100, _collectives(latency=60e-6, algbw=20e9, processes=16))
    assert cross.interconnect_bytes_per_s == 450e9
    link = tp_link(cross, gpus=16)
    assert (link.bytes_per_s, link.latency_seconds) == (pytest.approx(20e9 * 2 * 15 / 16), 60e-6)


def test_estimate_cli_takes_collectives(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["estimate", "--model", "llama-3.1-70b", "--hardware", "h100-sxm", "--gpus", "8", "--batch", "64", "--json"]
    assert main(base) == 0
    datasheet = json.loads(capsys.readouterr().out)
    path = tmp_path / "collectives.json"
    # 100 us per all-reduce: slower than the bundled table's 51.9 us at this 1 MiB buffer (TP8, sm_90)
    path.write_text(_collectives(latency=100e-6, algbw=200e9).model_dump_json())
    assert main([*base, "--collectives", str(path)]) == 0
    measured = json.loads(capsys.readouterr().out)
    assert measured["decode_comm_seconds"] > datasheet["decode_comm_seconds"]
    assert measured["decode_comm_seconds"] == pytest.approx(80 * 2 * (100e-6 + 64 * 8192 * 2 / 200e9), rel=1e-12)
    assert measured["tp_link"].startswith("measured all-reduce (nccl, 8 ranks")
    assert main([*base[:-3], "--gpus", "16", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tp_nodes"] == 2
    path.write_text("{}")
    assert main([*base, "--collectives", str(path)]) == 2
    assert "collectives file" in capsys.readouterr().err


def test_simulate_cli_takes_collectives(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "collectives.json"
    path.write_text(_collectives(latency=1e-3, algbw=1e9).model_dump_json())
    base = ["simulate", "--model", "llama-3.1-70b", "--hardware", "h100-sxm", "--gpus", "8", "--rate", "1",
            "--requests", "50", "--json"]
    assert main(base) == 0
    datasheet = json.loads(capsys.readouterr().out)
    assert main([*base, "--collectives", str(path)]) == 0
    slow = json.loads(capsys.readouterr().out)
    assert slow["tpot_p50_seconds"] > datasheet["tpot_p50_seconds"] + 80 * 2 * 1e-3 * 0.9


def test_h200_nvl_bridge_domain_is_four_cards() -> None:
    # NVIDIA's H200 page: "2- or 4-way NVIDIA NVLink bridge: 900GB/s per GPU"; no network figure is cited,
    # so a replica of more than 4 cards (across bridge groups, over PCIe) is refused, naming the row.
    nvl = load_accelerator("h200-nvl")
    assert tp_link(nvl, gpus=4).bytes_per_s == 900e9 / 2
    with pytest.raises(CostmodelError, match="h200-nvl.*at most 4"):
        tp_link(nvl, gpus=8)
