#!/usr/bin/env bash
# examples/distributed on the GPUs of this machine (docs/distributed.md):
#   1 GPU:   train_lm.py with DDP and with FSDP2 at world size 1 (tokens/s), and check_gradients.py at
#            world size 1 (the engines' gradients against the unwrapped model's, bf16 autocast);
#   2 GPUs:  check_gradients.py on 2 ranks (NCCL; fp32 alternating/sequential, then bf16 autocast with
#            the fused / Newton kernels) and the throughput of both
#            engines on 1 and 2 GPUs at the same batch per GPU, with the scaling (goal >= 1.8x).
# Needs python3 with torch and a CUDA build of flashrnn importable (the wheel, or PYTHONPATH).
#   PYTHON (python3)  OUT (/tmp/flashrnn-distributed): JSON results, logs and summary.txt
#   SIZE: "small" (default, quick) or "large" (width 1024, 12 layers, 16 x 2048 tokens per GPU: compute
#   dominates, for the scaling)   STEPS (12)
#   DEVICE: cuda (default), or cpu to try this script without a GPU (gloo, two processes; SIZE=tiny)
# NVLink multicast stays off (the device machine's rule), also for the processes torchrun starts.
# Exit status: non-zero when a step failed.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
PYTHON=${PYTHON:-python3}
OUT=${OUT:-/tmp/flashrnn-distributed}
STEPS=${STEPS:-12}
mkdir -p "$OUT"
rm -f "$OUT"/*.json "$OUT"/*.log # no result of an earlier run in the scaling
case "${SIZE:-small}" in
  tiny) model=(--width 16 --heads 2 --layers 4 --batch 2 --seq-len 16) ;;
  small) model=(--width 256 --heads 4 --layers 4 --batch 8 --seq-len 512) ;;
  large) model=(--width 1024 --heads 16 --layers 12 --batch 16 --seq-len 2048) ;;
  *) echo "SIZE must be tiny, small or large, got '$SIZE'" >&2; exit 2 ;;
esac
DEVICE=${DEVICE:-cuda}
if [ "$DEVICE" = cpu ]; then
  gpus=2 # processes, not GPUs
  # torchrun sets it for several processes, not for one: a 1-process run here took 80x longer without it.
  export OMP_NUM_THREADS=1
else
  gpus=$("$PYTHON" -c 'import torch; print(torch.cuda.device_count())') || exit 1
  "$PYTHON" -c 'import flashrnn, sys; sys.exit(0 if flashrnn.built_with_cuda() else 1)' ||
    { echo "flashrnn is not importable with CUDA by $PYTHON" >&2; exit 1; }
  [ "$gpus" -ge 1 ] || { echo "no GPU: nothing to run" >&2; exit 1; }
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/device.txt"
fi
STEP_LOGS=$OUT STEP_TAIL=4
source tests/gpu/step.sh
launch() { # ranks, script, arguments...
  local ranks=$1 script=$2; shift 2
  "$PYTHON" -m torch.distributed.run --standalone --nproc-per-node "$ranks" "examples/distributed/$script" "$@"
}

step check-1gpu launch 1 check_gradients.py --device "$DEVICE" --autocast --json "$OUT/check-1gpu.json"
for ranks in 1 2; do
  [ "$gpus" -ge "$ranks" ] || { summary+=("only $gpus GPU: the $ranks-GPU runs are left out"); continue; }
  if [ "$ranks" = 2 ]; then
    if [ "$DEVICE" = cuda ] && "$PYTHON" -c 'import pytest' 2>/dev/null; then # layers on cuda:1, cuda:0 current
      step layers-on-gpu-1 "$PYTHON" -m pytest -q -rs -p no:cacheprovider \
        tests/python/flashrnn/test_flashrnn_distributed.py -k second_gpu
    fi
    # fp32 through the full-fp32 paths (the fused kernels multiply in tf32); bf16 through the default ones.
    step check-2gpu-fp32 launch 2 check_gradients.py --device "$DEVICE" --backend alternating \
      --newton-backend sequential --json "$OUT/check-2gpu-fp32.json"
    step check-2gpu-bf16 launch 2 check_gradients.py --device "$DEVICE" --autocast --json "$OUT/check-2gpu-bf16.json"
  fi
  for engine in ddp fsdp2; do
    step "train-$engine-${ranks}gpu" launch "$ranks" train_lm.py --engine "$engine" --device "$DEVICE" \
      --steps "$STEPS" "${model[@]}" --json "$OUT/train-$engine-${ranks}gpu.json"
  done
done
# The scaling: tokens/s on 2 GPUs over 1 GPU, same sequences per GPU (2.0 would be perfect).
"$PYTHON" - "$OUT" <<'EOF' | tee "$OUT/scaling.txt"
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
for engine in ("ddp", "fsdp2"):
    runs = {n: out / f"train-{engine}-{n}gpu.json" for n in (1, 2)}
    if all(p.exists() for p in runs.values()):
        one, two = (json.loads(runs[n].read_text())["mean_tokens_per_s"] for n in (1, 2))
        print(f"{engine}: {one:.0f} tokens/s on 1 GPU, {two:.0f} on 2: {two / one:.2f}x (goal >= 1.8x)")
EOF
{ printf '%s\n' "${summary[@]}"; grep -h -E 'tokens/s \(steps|largest relative' "$OUT"/*.log; } | tee "$OUT/summary.txt"
exit $failed
