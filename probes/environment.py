"""Device choice and the environment record: CPU model/cores/flags, CUDA device, NVML clocks and power.

NVML comes from the `nvidia-ml-py` package (`import pynvml`). Without the package or without a driver
(`pynvml.NVMLError_LibraryNotFound`) the probe still runs; `environment.nvml` says why power, energy and
clocks are missing.
"""

from __future__ import annotations

import os
import platform
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from costmodel.errors import CostmodelError

TORCH_DTYPES: dict[str, torch.dtype] = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
# CPU flags that say matmuls have native bf16 (AVX-512 BF16, AMX) or wide SIMD.
RELEVANT_CPU_FLAGS = ("avx2", "fma", "avx512f", "avx512_bf16", "avx512_fp16", "amx_bf16", "amx_tile")
# NVML device names -> catalog accelerator ids (exact strings as nvmlDeviceGetName returns them).
NVML_NAME_TO_HARDWARE_ID = {
    "NVIDIA H200": "h200",
    "NVIDIA H100 80GB HBM3": "h100-sxm",
    "NVIDIA H100 PCIe": "h100-pcie",
    "NVIDIA B200": "b200",
    "NVIDIA A100-SXM4-80GB": "a100-80gb",
    "NVIDIA A100-SXM4-40GB": "a100-40gb",
    "NVIDIA L40S": "l40s",
    "NVIDIA L4": "l4",
    "NVIDIA GeForce RTX 4090": "rtx-4090",
}


@dataclass(frozen=True)
class CpuInfo:
    model: str
    logical_cpus: int
    physical_cores: int | None
    flags: tuple[str, ...]
    memory_bytes: float
    available_bytes: float


def _proc_text(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def cpu_info() -> CpuInfo:
    """CPU model, cores, SIMD flags and memory from /proc (Linux), with portable fallbacks."""
    cpuinfo = _proc_text("/proc/cpuinfo")
    fields = [line.split(":", 1) for line in cpuinfo.splitlines() if ":" in line]
    model = next((v.strip() for k, v in fields if k.strip() == "model name"), "") or platform.processor() or "unknown"
    flags = next((v.split() for k, v in fields if k.strip() == "flags"), [])
    cores = {(p.strip(), c.strip()) for p, c in zip(
        (v for k, v in fields if k.strip() == "physical id"), (v for k, v in fields if k.strip() == "core id"), strict=False
    )}
    meminfo = dict(line.split(":", 1) for line in _proc_text("/proc/meminfo").splitlines() if ":" in line)

    def kib(key: str) -> float:
        return float(meminfo.get(key, "0 kB").split()[0]) * 1024.0

    total = kib("MemTotal") or float(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    return CpuInfo(
        model=model,
        logical_cpus=os.cpu_count() or 1,
        physical_cores=len(cores) or None,
        flags=tuple(f for f in RELEVANT_CPU_FLAGS if f in flags),
        memory_bytes=total,
        available_bytes=kib("MemAvailable") or total,
    )


@dataclass(frozen=True)
class CpuTimes:
    """Cumulative CPU seconds: all cores busy, all cores in total (busy + idle), and this process."""

    busy_seconds: float
    total_seconds: float
    own_seconds: float


def cpu_times() -> CpuTimes | None:
    """From /proc/stat's first line (Linux); None elsewhere."""
    first = _proc_text("/proc/stat").split("\n", 1)[0].split()
    if not first or first[0] != "cpu":
        return None
    ticks = [float(v) for v in first[1:9]]  # user nice system idle iowait irq softirq steal
    per_second = float(os.sysconf("SC_CLK_TCK"))
    own = os.times()
    return CpuTimes(
        busy_seconds=(sum(ticks) - ticks[3] - ticks[4]) / per_second,
        total_seconds=sum(ticks) / per_second,
        own_seconds=own.user + own.system,
    )


def background_cpu_fraction(start: CpuTimes | None, end: CpuTimes | None) -> float | None:
    """Share of all cores' time that other processes used between two readings (0 = a quiet machine)."""
    if start is None or end is None or end.total_seconds <= start.total_seconds:
        return None
    others = (end.busy_seconds - start.busy_seconds) - (end.own_seconds - start.own_seconds)
    return min(max(others / (end.total_seconds - start.total_seconds), 0.0), 1.0)


def resolve_device(requested: str) -> torch.device:
    """auto -> cuda when torch sees a GPU, else cpu; cuda without one is a user error with the fix."""
    if requested not in ("auto", "cpu", "cuda"):
        raise CostmodelError(f"--device must be auto, cpu or cuda (got '{requested}')")
    if requested == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if requested == "cuda" and not torch.cuda.is_available():
        build = "a CPU-only build" if torch.version.cuda is None else f"CUDA {torch.version.cuda}"
        raise CostmodelError(
            f"--device cuda: torch {torch.__version__} ({build}) sees no CUDA GPU; use --device cpu, or install "
            "a CUDA build of torch on a machine with an NVIDIA driver"
        )
    return torch.device(requested)


def choose_dtype(device: torch.device, requested: str | None, cpu: CpuInfo) -> tuple[str, str]:
    """(dtype, reason): bf16 on GPUs and on CPUs with native bf16 matmuls, else fp32; --dtype overrides."""
    if requested is not None:
        if requested not in TORCH_DTYPES:
            raise CostmodelError(f"--dtype must be one of {', '.join(TORCH_DTYPES)} (got '{requested}')")
        return requested, "chosen with --dtype"
    if device.type == "cuda":
        if torch.cuda.is_bf16_supported():
            return "bf16", "bf16: what serving engines run on this GPU"
        return "fp16", "fp16: this GPU has no bf16 support"
    native = [f for f in ("avx512_bf16", "amx_bf16") if f in cpu.flags]
    if native:
        return "bf16", f"bf16: the CPU has native bf16 matmuls ({', '.join(native)})"
    return "fp32", (
        "fp32: the CPU has no native bf16 matmuls (no avx512_bf16 or amx_bf16), so bf16 runs several times "
        "slower than fp32 (see the matmul microbenchmarks); --dtype bf16 measures it anyway"
    )


@dataclass(frozen=True)
class NvmlDevice:
    """An open NVML handle for the probed GPU (energy in millijoules, power in milliwatts)."""

    pynvml: Any
    handle: Any

    def energy_joules(self) -> float | None:
        """Energy counter since driver load (Volta and newer), joules; None when unsupported."""
        try:
            return float(self.pynvml.nvmlDeviceGetTotalEnergyConsumption(self.handle)) / 1e3
        except self.pynvml.NVMLError:
            return None

    def power_watts(self) -> float | None:
        try:
            return float(self.pynvml.nvmlDeviceGetPowerUsage(self.handle)) / 1e3
        except self.pynvml.NVMLError:
            return None


def open_nvml(device: torch.device) -> tuple[NvmlDevice | None, str]:
    """(NVML handle for this CUDA device, 'ok') or (None, why not) - never raises."""
    if device.type != "cuda":
        return None, "not an NVIDIA device"
    try:
        import pynvml
    except ImportError:
        return None, "nvidia-ml-py is not installed (pip install nvidia-ml-py): power, energy and clocks not recorded"
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError_LibraryNotFound:
        return None, "NVML library not found (no NVIDIA driver on this machine): power, energy and clocks not recorded"
    except pynvml.NVMLError as exc:
        return None, f"NVML failed to start ({exc}): power, energy and clocks not recorded"
    index = device.index if device.index is not None else torch.cuda.current_device()
    uuid = getattr(torch.cuda.get_device_properties(index), "uuid", None)
    try:  # by UUID: CUDA_VISIBLE_DEVICES may renumber devices; NVML indices ignore it
        handle = pynvml.nvmlDeviceGetHandleByUUID(f"GPU-{uuid}")
    except (pynvml.NVMLError, TypeError):
        try:
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        except pynvml.NVMLError as exc:
            return None, f"NVML could not find CUDA device {index} ({exc}): power, energy and clocks not recorded"
    return NvmlDevice(pynvml=pynvml, handle=handle), "ok"


def nvml_fields(nvml: NvmlDevice | None) -> dict[str, Any]:
    """Driver version, device name, memory, clocks and power limit as ProbeEnvironment fields."""
    if nvml is None:
        return {}
    p, h = nvml.pynvml, nvml.handle

    def read(fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except p.NVMLError:
            return None

    name = read(p.nvmlDeviceGetName, h)
    driver = read(p.nvmlSystemGetDriverVersion)
    memory = read(p.nvmlDeviceGetMemoryInfo, h)
    limit = read(p.nvmlDeviceGetEnforcedPowerLimit, h)
    fields: dict[str, Any] = {
        "driver_version": driver.decode() if isinstance(driver, bytes) else driver,
        "sm_clock_mhz": read(p.nvmlDeviceGetClockInfo, h, p.NVML_CLOCK_SM),
        "max_sm_clock_mhz": read(p.nvmlDeviceGetMaxClockInfo, h, p.NVML_CLOCK_SM),
        "memory_clock_mhz": read(p.nvmlDeviceGetClockInfo, h, p.NVML_CLOCK_MEM),
        "power_limit_watts": limit / 1e3 if limit is not None else None,
    }
    if name is not None:
        fields["device_name"] = name.decode() if isinstance(name, bytes) else name
    if memory is not None:
        fields["accelerator_memory_bytes"] = float(memory.total)
    return fields


def environment_fields(
    device: torch.device, *, dtype: str, dtype_reason: str, threads: int | None, cpu: CpuInfo, nvml_status: str,
    nvml: NvmlDevice | None, cuda_graphs: bool, torch_compile: bool, hardware_id: str | None,
) -> dict[str, Any]:
    """Everything ProbeEnvironment needs, as keyword arguments."""
    fields: dict[str, Any] = {
        "device": device.type,
        "device_name": cpu.model,
        "hardware_id": hardware_id,
        "torch_version": torch.__version__,
        "python_version": sys.version.split()[0],
        "platform": platform.platform(),
        "dtype": dtype,
        "dtype_reason": dtype_reason,
        "threads": threads,
        "cpu_model": cpu.model,
        "cpu_logical_cpus": cpu.logical_cpus,
        "cpu_physical_cores": cpu.physical_cores,
        "cpu_flags": list(cpu.flags),
        "host_memory_bytes": cpu.memory_bytes,
        "nvml": nvml_status,
        "timer": "cuda_events" if device.type == "cuda" else "perf_counter",
        "cuda_graphs": cuda_graphs,
        "torch_compile": torch_compile,
        "peak_memory_measure": "cuda_max_allocated" if device.type == "cuda" else "process_peak_rss",
    }
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        fields["device_name"] = props.name
        fields["accelerator_memory_bytes"] = float(props.total_memory)
        fields["cuda_version"] = torch.version.cuda
        fields.update(nvml_fields(nvml))
        if hardware_id is None:
            fields["hardware_id"] = NVML_NAME_TO_HARDWARE_ID.get(fields["device_name"])
    return fields
