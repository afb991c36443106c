#!/usr/bin/env bash
# The GPU checks of ganeval, as one script for a lent GPU machine (Python 3.12 with torch, numpy, scipy,
# pandas, matplotlib, scikit-learn, tqdm; the rest travels as wheels in .whl, made by
#   bash ../shared/tools/gpu-wheels.sh timm==1.0.31 safetensors huggingface_hub pyyaml
# ). Everything it prints goes to $OUT/gpu_checks.log when OUT is set. Three parts, each under the device
# tool's 600 s per call (every step has its own timeout):
#   bash scripts/gpu_checks.sh          # tests, protocol (vs ./baseline), new metrics, k-NN precisions, DINOv2 (≤ ~7 min)
#   bash scripts/gpu_checks.sh scale    # IMD of two sets to 1M×2048 with peak device memory (≤ ~8 min)
#   bash scripts/gpu_checks.sh old      # the checks already measured at commit 3fb00fa (Inception, training, approx)
#   bash scripts/gpu_checks.sh resident # issue 27: device-resident protocol vs ./baseline, profile, IMD to 1M (≤ ~5 min)
#   bash scripts/gpu_checks.sh sources  # issue 24: 50k PNGs streamed from a folder and a zip vs the bare forward (≤ ~6 min)
#   bash scripts/gpu_checks.sh score50k # issue 24: ganeval-score 50k vs 50k, cold and cached, with stage times (≤ ~9 min)
#   bash scripts/gpu_checks.sh everyday # the everyday job: 50k + 50k PNGs, ganeval-score beside pytorch-fid, torch-fidelity
#                                       # and clean-fid (scripts/bench_everyday.py; wheels: clean-fid, torch-fidelity,
#                                       # scipy 1.17 for pytorch-fid 0.3.0) and the CUDA tests of ganeval.torchmetrics (≤ ~9 min)
# An older commit's tree unpacked in ./baseline (git archive COMMIT | tar -x -C baseline; untracked, so it
# travels with the working tree) is timed beside this one in the protocol step.
set -u
OUT=${OUT:-/tmp/ganeval-gpu}; mkdir -p "$OUT"
PART=${1:-main}
exec > >(tee "$OUT/gpu_checks_$PART.log") 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
python3 -c "import torch, numpy, scipy; print('torch', torch.__version__, 'numpy', numpy.__version__, 'scipy', scipy.__version__)"
step() { echo; echo "=== $1 ($(date +%T))"; }
if [ "$PART" = main ]; then
  step "GPU tests"
  timeout 90 python3 -m pytest -q -m gpu -p no:cacheprovider tests 2>&1 | tail -8
  step "protocol: 100 runs of 10k vs 10k from pools of 50k / 20k, one 50k run (this tree, then ./baseline if present)"
  timeout 75 python3 scripts/bench_protocol.py --device cuda --runs 100 --skip-peers --scaling 10000 50000 --plot "$OUT/protocol_scaling_cuda.png"
  if [ -d baseline ]; then
    (cd baseline && PYTHONPATH=$PWD:/tmp/site timeout 75 python3 scripts/bench_protocol.py --device cuda --runs 100 --skip-peers --scaling 10000 50000 --plot "$OUT/protocol_scaling_cuda_baseline.png")
  fi
  step "precision/recall/density/coverage and IS per protocol run, 10k vs 10k (target: ≤ 0.05 s each)"
  timeout 60 python3 scripts/bench_metrics.py --only-new --skip-peers --device cuda --repeats 3
  step "exact k-NN candidates in float32 / bfloat16 / TF32 (certified: the same graph), 20k×2048"
  timeout 45 python3 scripts/knn_precision.py --device cuda --n 20000 --d 2048
  step "DINOv2 ViT-L/14 extraction vs timm's bare forward (target: ≥ 90 %)"
  if python3 -c "import timm" 2>/dev/null; then
    timeout 60 python3 scripts/bench_features.py --extractor dinov2 --device cuda --batch-size 128 --n 4096 --random-weights
  else
    echo "timm is not installed: add its wheels (see the top of this script)"
  fi
elif [ "$PART" = resident ]; then
  # issue 27 in one call of ~4.5 minutes: GPU tests, this tree against ./baseline (numpy and CUDA-tensor inputs,
  # fixed and per-run costs), a profile of this tree, `auto`'s choices, and IMD of two sets to 1M×2048
  step "GPU tests"
  timeout 100 python3 -m pytest -q -m gpu -p no:cacheprovider tests 2>&1 | tail -8
  step "protocol, this tree (numpy and CUDA-tensor inputs; per further run = what 100 runs pay per run)"
  timeout 90 python3 scripts/gpu_protocol.py --device cuda --label new --profile
  timeout 40 python3 scripts/gpu_protocol.py --device cuda --label new-auto --inputs cuda --sizes 50000 --imd-precision auto
  if [ -d baseline ]; then
    step "protocol, ./baseline"
    PYTHONPATH=$PWD/baseline:/tmp/site TREE_LABEL=baseline timeout 75 python3 scripts/gpu_protocol.py --device cuda
  fi
  step "knn_precision=auto on the data at hand (rows left undecided by the TF32 certificate; the choice)"
  timeout 40 python3 - <<'PY'
import torch
from ganeval.metrics import knn
from ganeval.metrics.synthetic import pool3_like_on
dev = torch.device("cuda")
spread = pool3_like_on(dev, 200000, 2048)
g = torch.Generator(device=dev).manual_seed(0)
clusters = (torch.randn(10, 2048, device=dev, generator=g) * 5)[torch.randint(0, 10, (200000,), device=dev, generator=g)]
clusters += 0.05 * torch.randn(200000, 2048, device=dev, generator=g)
for name, x in (("pool3-like", spread), ("10 clusters", clusters)):
    print(f"{name:12s} 200k: product choice {knn.measure_precision(dev)} (time ratio {knn._ratios[str(dev)]:.2f}), "
          f"undecided {knn.undecided_share(x, 5, 'tf32'):.3f} -> auto picks {knn.auto_precision(x, 5)}")
PY
  step "IMD of two pool3-like sets on the GPU (exact 5-NN; float32, TF32 and auto products; target 1M ≤ 60 s)"
  for p in float32 tf32 auto; do
    timeout 40 python3 scripts/imd_scaling.py --device cuda --generate device --sizes 200000 --precision $p
  done
  timeout 110 python3 scripts/imd_scaling.py --device cuda --generate device --sizes 1000000 --precision tf32 --no-knn-alone
elif [ "$PART" = sources ]; then
  # issue 24 (~6 min): the GPU tests of sources and preprocessing, then 50k PNGs of 256² from a folder and a zip:
  # bare decode (PIL, libspng), our pipeline, Inception extraction against the bare forward on resident tensors
  # (target ≥ 85 %), DINOv2 ViT-L/14 on the first 5000 (~20× slower; its rate is steady long before), both with random
  # weights through the real loading path (ganeval-score's own wall time: the score50k part).
  # Several GPUs: torchrun --nproc_per_node N -m ganeval.app.score REAL/ FAKE/ --features inception ...
  step "GPU tests of the resident protocol, the preprocessing modes and the PNG sources"
  timeout 90 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_device_resident.py tests/test_resize_modes.py \
    tests/test_sources_png.py 2>&1 | tail -4
  nproc; grep -m1 "model name" /proc/cpuinfo
  step "streamed extraction of 50k 256² PNGs from a folder and a zip vs the bare forward"
  timeout 330 python3 scripts/bench_sources.py --n 50000 --workers 15 --device cuda --extractors inception,dinov2 \
    --dinov2-n 5000 --batch-size 250 --forward-n 5000 --dir /tmp/bench_sources --keep
elif [ "$PART" = score50k ]; then
  # issue 24's end-to-end wall time (~5 min): ganeval-score on 50k PNGs against their zip, cold then cached
  step "50k PNGs of 256² and their zip (made, not timed)"
  timeout 90 python3 scripts/bench_sources.py --n 50000 --workers 15 --phases none --dir /tmp/bench_sources --keep \
    --extractors inception | grep -v "not the published"
  step "ganeval-score, 50k folder vs 50k zip, Inception (random weights), 15 workers: cold (one decoding pass: content hashed on the extraction pass), then cached; stage times from the log"
  for run in cold cached; do
    s0=$(date +%s.%N)
    timeout 240 python3 -c "import logging, sys; logging.basicConfig(level=logging.INFO, format='%(relativeCreated)7.0f ms \
%(name)s: %(message)s'); from ganeval.app.score import main; sys.exit(main(sys.argv[1:]))" /tmp/bench_sources/images \
      /tmp/bench_sources/images.zip --no-download --weights /tmp/bench_sources/inception_random.pth --num-workers 15 \
      --batch-size 250 --cache-dir /tmp/gcache --no-plots --no-samples --quiet 2>&1 | grep -v "not the published" | tail -14
    echo "$run: $(python3 -c "import time; print(f'{time.time() - $s0:.1f}')") s wall"
  done
elif [ "$PART" = everyday ]; then
  # knobs: EVERYDAY_N (PNGs per folder, default 50000), EVERYDAY_BUDGET (seconds for all timed runs, default 380),
  # EVERYDAY_TESTS=0 skips the CUDA tests
  if [ "${EVERYDAY_TESTS:-1}" = 1 ]; then
    step "CUDA tests of ganeval.torchmetrics (pools never copied to the host) and the device-resident protocol"
    timeout 45 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_torchmetrics_ddp.py tests/test_device_resident.py \
      2>&1 | tail -4
  fi
  nproc; grep -m1 "model name" /proc/cpuinfo
  step "the default metric stage (IMD + FID + KID) on 50k vs 50k feature arrays, each metric alone"
  timeout 90 python3 - <<'PY'
import time, numpy as np, torch
from ganeval.metrics.synthetic import pool3_like_on
from ganeval.protocol.full import score_full
from ganeval.protocol.settings import Settings
dev = torch.device("cuda")
x = pool3_like_on(dev, 100000, 2048).cpu().numpy()
real, fake = x[:50000], x[50000:] * 1.05
for name in ("fid", "kid", "imd"):
    opts = Settings(metrics=[name], device=str(dev)).metrics
    torch.cuda.synchronize(); t = time.perf_counter()
    got = score_full(real, fake, opts, seed=0, device=dev)
    torch.cuda.synchronize(); print(f"{name}: {time.perf_counter() - t:.2f} s  {got}", flush=True)
PY
  step "the everyday job, ${EVERYDAY_N:-50000} + ${EVERYDAY_N:-50000} PNGs of 256², one round, ganeval first"
  timeout 540 python3 scripts/bench_everyday.py --device cuda --n "${EVERYDAY_N:-50000}" --rounds 1 --timeout 150 \
    --budget "${EVERYDAY_BUDGET:-380}" --dir /tmp/bench_everyday --log "$OUT/everyday_cuda.log" \
    --tools "ganeval fid,pytorch-fid,ganeval default,torch-fidelity,clean-fid"
  for f in /tmp/bench_everyday/logs/ganeval_*.err; do echo "--- $f"; tail -3 "$f"; done
elif [ "$PART" = scale ]; then
  step "IMD of two sets to 1M×2048 (exact k-NN in strips; peak device memory; target 1M ≤ 60 s)"
  timeout 150 python3 scripts/imd_scaling.py --device cuda --sizes 100000 200000 500000
  timeout 300 python3 scripts/imd_scaling.py --device cuda --sizes 1000000 --no-knn-alone
elif [ "$PART" = old ]; then
  step "metrics, 10k vs 10k, 2048-d (one call each)"
  timeout 60 python3 scripts/bench_metrics.py --device cuda --skip-peers --approx-sizes
  step "Inception feature extraction throughput (batch 256, random weights)"
  timeout 45 python3 scripts/bench_features.py --device cuda --batch-size 256 --n 10240 --random-weights
  timeout 45 python3 scripts/bench_features.py --device cuda --batch-size 256 --n 10240 --random-weights --channels-last
  step "training: CIFAR-10 WGAN-GP iterations/s"
  timeout 45 python3 scripts/bench_training.py --device cuda --arch cifar10 --gan wgan_gp --cudnn-benchmark
  step "approximate kNN scaling (pynndescent; first call compiles)"
  timeout 100 python3 scripts/bench_protocol.py --device cuda --runs 0 --approx 50000 200000 --plot "$OUT/protocol_scaling_approx_cuda.png"
else
  echo "unknown part $PART: main, scale, old, resident, sources, score50k or everyday"; exit 2
fi
step done
