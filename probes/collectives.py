"""All-reduce and all-gather timings through torch.distributed: N spawned processes on loopback (gloo on
CPU, NCCL with one GPU per process on CUDA), message sizes from 4 KiB to 4 MiB, median of `repeats`
after a warm-up, the slowest rank's time per call (a collective ends when its last rank does)."""

from __future__ import annotations

import json
import os
import socket
import tempfile
import time
from pathlib import Path

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from costmodel.measurements.collectives_result import (
    CollectivePoint,
    CollectivesResult,
    OpFit,
    fit_alpha_beta,
)

MESSAGE_BYTES = (4096, 65536, 262144, 1048576, 4194304)
WARMUP = 2


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _worker(rank: int, world: int, port: int, backend: str, repeats: int, out: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group(backend, rank=rank, world_size=world)
    device = torch.device(f"cuda:{rank}") if backend == "nccl" else torch.device("cpu")
    if backend == "nccl":
        torch.cuda.set_device(device)
    points = []
    for size in MESSAGE_BYTES:
        tensor = torch.ones(size // 4, dtype=torch.float32, device=device)
        gathered = [torch.empty_like(tensor) for _ in range(world)]
        for op in ("all_reduce", "all_gather"):
            times = []
            for index in range(WARMUP + repeats):
                dist.barrier()
                start = time.perf_counter()
                if op == "all_reduce":
                    dist.all_reduce(tensor)
                else:
                    dist.all_gather(gathered, tensor)
                if backend == "nccl":
                    torch.cuda.synchronize(device)
                elapsed = torch.tensor([time.perf_counter() - start], dtype=torch.float64, device=device)
                dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)  # the slowest rank's time
                if index >= WARMUP:
                    times.append(float(elapsed.item()))
            points.append({"op": op, "message_bytes": size, "seconds": sorted(times)[len(times) // 2]})
    if rank == 0:
        Path(out).write_text(json.dumps(points))
    dist.destroy_process_group()


def probe_collectives(*, processes: int, repeats: int = 5) -> CollectivesResult:
    """Spawn `processes` ranks, time both ops at every size, fit alpha-beta per op."""
    backend = "nccl" if torch.cuda.is_available() and torch.cuda.device_count() >= processes else "gloo"
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "points.json")
        mp.spawn(_worker, args=(processes, _free_port(), backend, repeats, out), nprocs=processes, join=True)
        raw = json.loads(Path(out).read_text())
    points = [CollectivePoint(**row) for row in raw]
    ops = {}
    for op in ("all_reduce", "all_gather"):
        rows = [p for p in points if p.op == op]
        ops[op] = OpFit(fit=fit_alpha_beta([p.message_bytes for p in rows], [p.seconds for p in rows]))
    return CollectivesResult(backend=backend, processes=processes, device="cuda" if backend == "nccl" else "cpu",
                             repeats=repeats, points=points, ops=ops)
