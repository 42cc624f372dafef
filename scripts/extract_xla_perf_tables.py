"""Extract OpenXLA's measured GPU perf tables into two small CSVs under costmodel/data/.

Inputs: saved copies of OpenXLA's default perf tables (Apache-2.0), generated on real GPUs by
`xla/tools/matmul_perf_table_gen` and `xla/tools/collective_perf_table_gen`:
  xla/service/gpu/model/default_matmul_perf_table.txtpb
  xla/service/gpu/model/default_collective_perf_table.txtpb
at openxla/xla commit ad6eaee1b2f13931e3ceb26dc50bf3ac6b425496 ("[NFC] Convert performance tables into
embedded textproto", 2026-07-10), read 2026-12-02 from the ROCm/xla mirror, which carries that upstream commit
(`git show ad6eaee1:<path> > FILE`). Their units, from the generators at that commit:
- matmul `flops`: 2 x FMAs / median kernel time (matmul_perf_table_gen.cc, GetFlops "Every FMA is 2 floating
  point ops"), i.e. achieved FLOP/s of one (b, m, n, k) dot, per operand/result type key;
- collective `network_throughput_bytes_per_sec`: tensor bytes / median runtime (collective_perf_table_gen.cc,
  GetNetworkThroughputBytesPerSec); an all-reduce's tensor is its buffer (F32 elements x 4 bytes), so
  seconds = buffer bytes / this value (algorithm bandwidth, not NCCL's bus bandwidth).
Only the all-reduce rows (the tensor-parallel collective) and the bf16 / f32 / fp8 e4m3 x e4m3 matmul keys
are kept. Usage: python scripts/extract_xla_perf_tables.py MATMUL.txtpb COLLECTIVE.txtpb
"""

from __future__ import annotations

import csv
import re
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "costmodel" / "data"
SOURCE = "openxla/xla ad6eaee1b2f13931e3ceb26dc50bf3ac6b425496 xla/service/gpu/model/{} (read 2026-12-02)"
DTYPES = {"bf16xbf16->bf16": "bf16", "f32xf32->f32": "fp32", "f8e4m3fnxf8e4m3fn->bf16": "fp8"}
ELEMENT_BYTES = {"F32": 4, "BF16": 2, "F16": 2}


def matmul_rows(text: str) -> list[dict[str, object]]:
    """(arch, dtype, b, m, n, k, flops_per_s) for every entry of every arch block."""
    rows: list[dict[str, object]] = []
    arch, dims = "", {}
    for line in text.splitlines():
        line = line.strip()
        if found := re.fullmatch(r'key: "(sm_[^"]+)"', line):
            arch = found.group(1)
        elif found := re.fullmatch(r"([bmnk]): (\d+)", line):
            dims[found.group(1)] = int(found.group(2))
        elif (found := re.fullmatch(r'flops \{ key: "([^"]+)" value: (\d+) \}', line)) and found.group(1) in DTYPES:
            rows.append({"arch": arch, "dtype": DTYPES[found.group(1)], **dims, "flops_per_s": int(found.group(2))})
    return rows


def allreduce_rows(text: str) -> list[dict[str, object]]:
    """(arch, devices per group, groups, buffer bytes, throughput) of every all-reduce entry."""
    rows: list[dict[str, object]] = []
    arch, entry = "", {}
    for line in text.splitlines():
        line = line.strip()
        if found := re.fullmatch(r'key: "(sm_[^"]+)"', line):
            arch = found.group(1)
        elif found := re.fullmatch(r'opcode: "([^"]+)"', line):
            entry = {"opcode": found.group(1)}
        elif (found := re.fullmatch(r"element_type: (\w+)", line)) and "elements" not in entry:
            entry["element_type"] = found.group(1)
        elif (found := re.fullmatch(r"dimensions: (\d+)", line)) and "elements" not in entry and "element_type" in entry:
            entry["elements"] = int(found.group(1))
        elif found := re.fullmatch(r"num_replica_groups: (\d+)", line):
            entry["groups"] = int(found.group(1))
        elif found := re.fullmatch(r"num_devices_per_group: (\d+)", line):
            entry["devices"] = int(found.group(1))
        elif found := re.fullmatch(r"network_throughput_bytes_per_sec: (\d+)", line):
            if entry.get("opcode") == "all-reduce":
                buffer_bytes = entry["elements"] * ELEMENT_BYTES[entry["element_type"]]
                throughput = int(found.group(1))
                rows.append({"arch": arch, "devices_per_group": entry["devices"], "groups": entry["groups"],
                             "buffer_bytes": buffer_bytes, "algbw_bytes_per_s": throughput,
                             "seconds": f"{buffer_bytes / throughput:.6g}"})
            entry = {}
    return rows


def write(path: Path, rows: list[dict[str, object]], source: str) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        handle.write(f"# Extracted by scripts/extract_xla_perf_tables.py from {source}; do not edit.\n")
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def main(argv: list[str]) -> int:
    matmul_text, collective_text = (Path(p).read_text(encoding="utf-8") for p in argv[1:3])
    gemm = sorted(matmul_rows(matmul_text), key=lambda r: (r["arch"], r["dtype"], r["b"], r["m"], r["n"], r["k"]))
    allreduce = sorted(allreduce_rows(collective_text),
                       key=lambda r: (r["arch"], r["devices_per_group"], r["groups"], r["buffer_bytes"]))
    write(DATA / "xla_gemm_throughput.csv", gemm, SOURCE.format("default_matmul_perf_table.txtpb"))
    write(DATA / "xla_allreduce_throughput.csv", allreduce, SOURCE.format("default_collective_perf_table.txtpb"))
    print(f"{len(gemm)} GEMM rows, {len(allreduce)} all-reduce rows")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
