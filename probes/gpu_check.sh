#!/usr/bin/env bash
# The whole GPU probe + calibration in one go (< 5 minutes on one H100/H200-class GPU):
#   probes/gpu_check.sh OUT_DIR [MODEL]          e.g. probes/gpu_check.sh /tmp/gpu-results llama-3.1-8b
# Writes OUT_DIR/{env.txt, probe-gpu.json, probe-summary.json, calibration-gpu.json, calibrate.json,
# estimate.json, probe.log}, and on a box with 2+ GPUs {collectives-gpu.json, collectives-summary.json,
# collectives.log, simulate-tp-collectives.json}. Needs a CUDA build of torch (pip install -e '.[probes]' on a GPU machine) and,
# for power/energy/clocks, nvidia-ml-py. Set PYTHON to choose the interpreter and HARDWARE to give the
# catalog accelerator id when the GPU's name is not in probes/environment.py's table.
set -euo pipefail
out="${1:?usage: probes/gpu_check.sh OUT_DIR [MODEL]}"
model="${2:-llama-3.1-8b}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
default_python=python3
if [[ -x "$here/.venv/bin/python" ]]; then default_python="$here/.venv/bin/python"; fi
python="${PYTHON:-$default_python}"
export PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}"
mkdir -p "$out"

{
  date -u +%Y-%m-%dT%H:%M:%SZ
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit --format=csv 2>&1 || true
  "$python" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'available', torch.cuda.is_available())" || true
} > "$out/env.txt" 2>&1
cat "$out/env.txt"
if ! "$python" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
  echo "gpu_check: torch sees no CUDA GPU (see $out/env.txt); install a CUDA build of torch" >&2
  exit 2
fi

hardware=()
if [[ -n "${HARDWARE:-}" ]]; then hardware=(--hardware "$HARDWARE"); fi

# Probe: quick sweep (prefill 128..4096 tokens, decode batch 1..64 x context 512..8192), CUDA graphs on.
timeout 240 "$python" -m costmodel probe --device cuda --model "$model" --quick "${hardware[@]}" \
  --out "$out/probe-gpu.json" --json > "$out/probe-summary.json" 2> "$out/probe.log" || {
  status=$?; echo "gpu_check: probe exited $status (partial points, if any, are in $out/probe-gpu.json)" >&2; }
cat "$out/probe-summary.json"

"$python" -m costmodel calibrate "$out/probe-gpu.json" --out "$out/calibration-gpu.json" "${hardware[@]}" --json \
  > "$out/calibrate.json"
"$python" - "$out/calibrate.json" <<'PY'
import json, sys
fit = json.load(open(sys.argv[1]))
print(f"calibrated '{fit['hardware_id']}': eff_compute {fit['eff_compute']:.3f}, eff_memory {fit['eff_memory']:.3f}, "
      f"overhead {fit['overhead_seconds_per_step'] * 1e3:.3f} ms, half-saturation {fit['compute_half_saturation_tokens']:.1f}; "
      f"held-out error median {fit['holdout_median_abs_error']:.1%}, max {fit['holdout_max_abs_error']:.1%}")
PY

hw="$("$python" -c "import json, sys; print(json.load(open(sys.argv[1]))['hardware_id'])" "$out/calibrate.json")"
"$python" -m costmodel estimate --model "$model" --hardware "$hw" --calibration "$out/calibration-gpu.json" --json \
  > "$out/estimate.json"
gpus="$("$python" -c "import torch; print(torch.cuda.device_count())")"
if [[ "$gpus" -ge 2 ]]; then
  # Multi-GPU box: all-reduce/all-gather over every GPU (one rank per GPU; NCCL when torch sees >= that many
  # GPUs), then the TP model with the fit: simulate on all of them with --calibration collectives-gpu.json.
  if timeout 300 "$python" -m costmodel probe --collectives --processes "$gpus" --out "$out/collectives-gpu.json" \
      --json > "$out/collectives-summary.json" 2> "$out/collectives.log"; then
    cat "$out/collectives-summary.json"
    "$python" -m costmodel simulate --model "$model" --hardware "$hw" --gpus "$gpus" --rate 1 --requests 200 \
      --calibration "$out/collectives-gpu.json" --json > "$out/simulate-tp-collectives.json" \
      || echo "gpu_check: simulate with the collectives fit failed (see above)"
  else
    echo "gpu_check: collectives probe failed (see $out/collectives.log)"
  fi
else
  echo "gpu_check: $gpus GPU(s): no collectives probe (it needs 2 or more)"
fi
echo "gpu_check: done; results in $out"
