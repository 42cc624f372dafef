"""Print the MLPerf Inference v4.1 rows of costmodel/data/reference_measurements.csv from a local git copy.

Usage: python scripts/import_mlperf_rows.py /path/to/mlcommons/inference_results_v4.1 (a clone, bare or not).

Reads, at the copy's HEAD, each chosen system's closed-division `mlperf_log_summary.txt` (Offline: "Tokens
per second" and "Samples per second"; Server: "Completed tokens per second", "Completed samples per second"
and "Scheduled samples per second"), the system's `systems/<system>.json` (GPU and count) and the layout the
submitter's own config states (`configs/<benchmark>/<scenario>/__init__.py`: tensor_parallelism,
gpu_batch_size, max_num_tokens, use_fp8, resolved through the class chain). AMD's and Dell's MI300X runs
state theirs in their vLLM scripts (`code/llama2-70b-99/...`), quoted in `VLLM_LAYOUT`. Nothing is
computed here but the mean output length (tokens/s / samples/s) and the replica count (GPUs / TP).
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys

REPO = "mlcommons/inference_results_v4.1"
# (submitter, system directory): single-node MaxP systems on GPUs the catalog holds (h100-sxm, h200,
# mi300x). Left out: MaxQ (power-capped), H200 CTS (1000 W custom thermal), B200 (preview: private code,
# precision not stated), GH200, H100-NVL, H100-PCIe, L40S, multi-node (JuniperNetworks x16/x32).
SYSTEMS = (
    ("NVIDIA", "DGX-H100_H100-SXM-80GBx8_TRT"), ("ASUSTeK", "ESC_N8_E11_H100x8_TRT"),
    ("Dell", "XE9680_H100_SXM_80GBx8_TRT"), ("Google", "DGX-H100_H100-SXM-80GBx8_TRT"),
    ("HPE", "HPE_Cray_XD670_H100_SXM_80GBx8_TRT"), ("Supermicro", "AS_4125GS_TNHR2_LCC_H100_SXM_80GBx8_TRT"),
    ("Supermicro", "AS_8125GS_TNHR_H100_SXM_80GBx8_TRT"), ("Supermicro", "SYS_421GE_TNHR2_LCC_H100_SXM_80GBx8_TRT"),
    ("Supermicro", "SYS_821GE_TNHR_H100_SXM_80GBx8_TRT"), ("Sustainable_Metal_Cloud", "SMC_H100_SXM_80GBX8_TRT"),
    ("Dell", "XE8640_H100_SXM_80GBx4_TRT"), ("Dell", "XE9640_H100_SXM_80GBx4_TRT"),
    ("Fujitsu", "GX2560M7_H100_SXM_80GBx4_TRT"),
    ("NVIDIA", "H200-SXM-141GBx8_TRT"), ("NVIDIA", "H200-SXM-141GBx8_TRT_Triton"),
    ("Dell", "XE9680_H200_SXM_141GBx8_TRT"), ("GigaComputing", "GIGABYTE_G593_SD1_H200_SXM_141GBx8_TRT"),
    ("Lenovo", "H200_SXM_141GBx8_TRT"), ("Lenovo", "Lenovo_8xH200_TRT"),
    ("AMD", "1xMI300X_2xEPYC-9374F"), ("AMD", "8xMI300X_2xEPYC-9374F"), ("AMD", "8xMI300X_2xEPYC-TURIN"),
    ("Dell", "XE9680_MI300X_192GBx8"),
)
BENCHMARKS = {"llama2-70b-99": ("Llama-2-70B", "70", "llama2-70b"), "mixtral-8x7b": ("Mixtral-8x7B", "46.7", "mixtral-8x7b")}
HARDWARE = {"H100-SXM-80GB": "H100-SXM-80GB", "H200-SXM-141GB": "H200-SXM-141GB", "MI300X": "MI300X-192GB"}
# AMD/Dell MI300X (vLLM 0.4.3): closed/<sub>/code/llama2-70b-99/test_VllmFp8/test_VllmFp8_{Offline,SyncServer}_perf.sh
# (TP=1, DP=8 or 1, --kv-cache-dtype fp8, --quantization fp8) and VllmFp8/mainVllmFp8_{Offline,SyncServer}.py defaults.
VLLM_LAYOUT = {
    "Offline": "vLLM 0.4.3 offline, TP1 x {dp}, max_num_seqs 2048, max_num_batched_tokens 65536, chunked prefill off, "
               "gpu_memory_utilization 0.99, fp8 KV, enforce_eager, prompts sorted descending",
    "Server": "vLLM 0.4.3 sync server, TP1 x {dp}, max_num_seqs 768, max_num_batched_tokens 65536, chunked prefill "
              "off, gpu_memory_utilization 0.97, fp8 KV",
}


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True, check=True).stdout


def number(text: str, label: str) -> float:
    match = re.search(rf"^{re.escape(label)}\s*:\s*([0-9.e+]+)", text, flags=re.MULTILINE)
    if match is None:
        raise SystemExit(f"no '{label}' in a summary")
    return float(match.group(1))


def config_values(repo: str, path: str, cls: str, base_path: str) -> dict[str, int | float | bool]:
    """tensor_parallelism, gpu_batch_size, max_num_tokens, use_fp8 of `cls`, following its parents in the file,
    then the benchmark's GPUBaseConfig (`base_path`)."""
    text = git(repo, "show", f"HEAD:{path}")
    blocks = dict(re.findall(r"^class (\w+)\(([\w.]+)\):", text, flags=re.MULTILINE))
    values: dict[str, int | float | bool] = {}
    name: str | None = cls
    if cls not in blocks:
        raise SystemExit(f"{path}: no class {cls}")
    while name in blocks:
        body = re.search(rf"^class {name}\(.*?\):\n(.*?)(?=^\S)", text + "\nEND", flags=re.MULTILINE | re.DOTALL)
        assert body is not None
        for line in body.group(1).splitlines():
            line = line.strip()
            if line.startswith("#"):
                continue
            for key in ("tensor_parallelism", "max_num_tokens"):
                if line.startswith(f"{key} =") and key not in values:
                    values[key] = int(line.split("=")[1])
            if line.startswith("kvcache_free_gpu_mem_frac =") and "kv_frac" not in values:
                values["kv_frac"] = float(line.split("=")[1])
            if line.startswith("gpu_batch_size =") and "gpu_batch_size" not in values:
                values["gpu_batch_size"] = int(line.split(":")[1].strip(" }"))
            if line.startswith("use_fp8 =") and "use_fp8" not in values:
                values["use_fp8"] = line.split("=")[1].strip() == "True"
        name = blocks[name]
    base = git(repo, "show", f"HEAD:{base_path}")
    if "max_num_tokens" not in values:
        values["max_num_tokens"] = int(re.search(r"max_num_tokens = (\d+)", base).group(1))  # type: ignore[union-attr]
    return values


def trt_class(bench: str, gpu: str, gpus: int, system: str) -> str:
    """The config class NVIDIA's code picks for this GPU and count (KnownSystem)."""
    if gpu.startswith("H100"):
        if bench == "llama2-70b":
            return {8: "H100_SXM_80GB_TP2x4", 4: "H100_SXM_80GB_TP2x2"}[gpus]
        return {8: "H100_SXM_80GBx8", 4: "H100_SXM_80GBx1"}[gpus]  # mixtral: no x4 class; the x1 class per GPU
    return "H200_SXM_141GBx8_Triton" if system.endswith("_Triton") else "H200_SXM_141GBx8"


def row(repo: str, commit: str, sub: str, system: str, bench_dir: str, scenario: str) -> dict[str, str] | None:
    model, params, bench = BENCHMARKS[bench_dir]
    path = f"closed/{sub}/results/{system}/{bench_dir}/{scenario}/performance/run_1/mlperf_log_summary.txt"
    try:
        text = git(repo, "show", f"HEAD:{path}")
    except subprocess.CalledProcessError:
        return None
    if "Result is : VALID" not in text:
        raise SystemExit(f"{path} is not VALID")
    info = json.loads(git(repo, "show", f"HEAD:closed/{sub}/systems/{system}.json"))
    gpus = int(info["accelerators_per_node"]) * int(info["number_of_nodes"])
    gpu = next(v for k, v in HARDWARE.items() if k in info["accelerator_model_name"])
    if scenario == "Offline":
        tokens, samples = number(text, "Tokens per second"), number(text, "Samples per second")
        load, metric = "all samples at t = 0", "mlperf_offline_tokens_per_second"
    else:
        tokens, samples = number(text, "Completed tokens per second"), number(text, "Completed samples per second")
        load = (f"scheduled {number(text, 'Scheduled samples per second'):g} QPS (Poisson), p99 limits TTFT "
                f"{number(text, 'ttft_latency (ns)') / 1e9:g} s, TPOT {number(text, 'tpot_latency (ns)') / 1e6:g} ms")
        metric = "mlperf_server_completed_tokens_per_second"
    if gpu == "MI300X-192GB":
        layout = VLLM_LAYOUT[scenario].format(dp=gpus)
        layout_src = f"closed/{sub}/code/llama2-70b-99/test_VllmFp8/ and VllmFp8/ (TP, DP, flags)"
    else:
        cls = trt_class(bench, gpu, gpus, system)
        cfg = f"closed/{sub}/configs/{bench}/{scenario}/__init__.py"
        v = config_values(repo, cfg, cls, f"closed/{sub}/configs/{bench}/__init__.py")
        tp = int(v.get("tensor_parallelism", 1))
        assert v.get("use_fp8") is True, (cfg, cls)
        harness = "TensorRT-LLM through Triton" if system.endswith("_Triton") else "TensorRT-LLM (NVIDIA harness)"
        layout = (f"{harness}, TP{tp} x {gpus // tp}, gpu_batch_size {v['gpu_batch_size']}, max_num_tokens "
                  f"{v['max_num_tokens']}, kvcache_free_gpu_mem_frac {v.get('kv_frac', 'not stated')}, use_fp8")
        layout_src = f"{cfg} class {cls}"
    url = f"https://github.com/{REPO}/blob/{commit}/{path}"
    return {
        "model": model, "params_b": params, "precision": "FP8", "hardware": gpu, "n_gpus": str(gpus),
        "scenario": f"MLPerf Inference v4.1 closed {scenario}, {bench_dir}, {sub} {system}: {layout}",
        "input_len": "OpenOrca (<1024)" if bench == "llama2-70b" else "OpenOrca+GSM8K+MBXP",
        "output_len": f"{tokens / samples:.1f}", "concurrency_or_batch": load, "metric": metric,
        "value": f"{tokens:g}", "unit": "tok/s (all GPUs)",
        "source": f"{REPO} {path}, commit {commit}, {url}; layout: {layout_src}",
    }


def main() -> int:
    repo = sys.argv[1]
    commit = git(repo, "rev-parse", "HEAD").strip()
    writer = csv.DictWriter(sys.stdout, fieldnames=["model", "params_b", "precision", "hardware", "n_gpus", "scenario",
                                                    "input_len", "output_len", "concurrency_or_batch", "metric",
                                                    "value", "unit", "source"], lineterminator="\n")
    for sub, system in SYSTEMS:
        for bench_dir in BENCHMARKS:
            for scenario in ("Offline", "Server"):
                found = row(repo, commit, sub, system, bench_dir, scenario)
                if found is not None:
                    writer.writerow(found)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
