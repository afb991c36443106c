#!/usr/bin/env bash
# The GPU checks of ganeval, as one script for a lent GPU machine (Python 3.12 with torch, numpy, scipy,
# pandas, matplotlib, scikit-learn, tqdm; the rest travels as wheels in .whl, made by
# ../shared/tools/gpu-wheels.sh). Everything it prints goes to $OUT/gpu_checks.log when OUT is set.
set -u
OUT=${OUT:-/tmp/ganeval-gpu}; mkdir -p "$OUT"
exec > >(tee "$OUT/gpu_checks.log") 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
python3 -c "import torch, numpy, scipy; print('torch', torch.__version__, 'numpy', numpy.__version__, 'scipy', scipy.__version__)"
step() { echo; echo "=== $1 ($(date +%T))"; }
step "GPU tests"
timeout 120 python3 -m pytest -q -m gpu -p no:cacheprovider tests 2>&1 | tail -8
step "metrics, 10k vs 10k, 2048-d (one call each)"
timeout 60 python3 scripts/bench_metrics.py --device cuda --skip-peers --approx-sizes
step "protocol: 100 runs of 10k vs 10k from pools of 50k / 20k, then scaling"
timeout 120 python3 scripts/bench_protocol.py --device cuda --runs 100 --skip-peers --scaling 1000 5000 10000 50000 --plot "$OUT/protocol_scaling_cuda.png"
step "feature extraction throughput (batch 256, random weights)"
timeout 45 python3 scripts/bench_features.py --device cuda --batch-size 256 --n 10240 --random-weights
timeout 45 python3 scripts/bench_features.py --device cuda --batch-size 256 --n 10240 --random-weights --channels-last
step "training: CIFAR-10 WGAN-GP iterations/s"
timeout 45 python3 scripts/bench_training.py --device cuda --arch cifar10 --gan wgan_gp --cudnn-benchmark
step "approximate kNN scaling (pynndescent; first call compiles)"
timeout 100 python3 scripts/bench_protocol.py --device cuda --runs 0 --approx 50000 200000 --plot "$OUT/protocol_scaling_approx_cuda.png"
step done
