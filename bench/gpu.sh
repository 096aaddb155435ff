#!/usr/bin/env bash
# Device benchmark, one prepared script for a lent CUDA machine (Python 3.12 with torch,
# transformers, numpy, scikit-learn, pandas, pyarrow; no zarr/duckdb/polars/textual, no network).
#
# Measures, at realistic shapes (n=30,000 train rows, d=1,024, 2 and 10 classes):
#   1. the batched probe solver (geneb-v1-converged: every fit of a (model, task) cell, float64,
#      tolerance 1e-6) on CUDA and on the CPU, against scikit-learn converged on the CPU
#      (bench/probe.py --skip-official: the official-loop comparison is a CPU-only matter);
#   1b. geneb-v1-array-api (scikit-learn's own lbfgs on CUDA tensors) against the exact CPU path:
#      its largest |MCC difference| on the fixtures and its speed (bench/array_api.py);
#   2. the Hugging Face encoder's embedding throughput on CUDA (bf16) against the official
#      extractors' naive loop, step by step (length-sorted, token budget, background
#      preparation, the padding mask as keys, torch.compile, the whole encoder: tokens/s,
#      ratio, max abs difference; bench/embed.py --compile), when that script is present;
#   3. its model FLOPs utilisation at a real size: a random-initialised 115M-parameter BERT
#      (bench/mfu.py: tokens/s, TFLOP/s, MFU against the device's bf16 peak; goal >= 40 %).
# Where there is no CUDA device it says so, lists what it would measure, and exits 0.
#
#   bash bench/gpu.sh            # PYTHON=... to choose the interpreter (default python3)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1

if ! "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    echo "no CUDA device (or no torch for $PY) here. On a CUDA machine this script measures:"
    echo "  - bench/probe.py --skip-official: batched solver (cuda and cpu) vs scikit-learn"
    echo "    converged, n=30,000 x d=1,024, 2 and 10 classes (ratio lines per device)"
    echo "  - bench/array_api.py --device cuda: geneb-v1-array-api's max |MCC difference| and"
    echo "    speed against the exact CPU path"
    [ -f bench/embed.py ] && echo "  - bench/embed.py --compile: HF encoder steps (cuda, bf16) vs the official naive loop"
    echo "  - bench/mfu.py: MFU of a random-initialised 115M-parameter BERT at bf16"
    exit 0
fi

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
"$PY" -c 'import torch, sklearn; print("torch", torch.__version__, "cuda", torch.version.cuda,
"scikit-learn", sklearn.__version__, "cpu threads", torch.get_num_threads())'
echo "== batched probe solver =="
"$PY" bench/probe.py --skip-official --classes 2 10
echo "== geneb-v1-array-api (scikit-learn's lbfgs on CUDA tensors) vs the exact CPU path =="
"$PY" bench/array_api.py --device cuda
if [ -f bench/embed.py ]; then
    echo "== Hugging Face encoder =="
    "$PY" bench/embed.py --device cuda --compile
fi
echo "== model FLOPs utilisation (random-initialised 115M-parameter BERT, bf16) =="
"$PY" bench/mfu.py
