#!/usr/bin/env bash
# Device benchmark of issue 33, one prepared script for a lent CUDA machine (Python 3.12 with
# torch, transformers, numpy, scikit-learn, pandas, pyarrow; the store's packages zarr, polars,
# duckdb and deltalake maybe not; no network).
#
# BUDGET: at most 8 minutes on one GPU. Every step runs under `timeout` (seconds below); their
# sum is 465 s, so a step that hangs costs its own limit and the rest still run.
#
#   step                                                                      limit
#   1. pipeline vs forward, MFU: bench/mfu.py, the 115M BERT, bf16 autocast     60 s
#      and bf16 weights (--dtype bfloat16, no autocast)                         60 s
#   2. probe variants: bench/probe.py (batched solver, cuda and cpu, vs         75 s
#      scikit-learn converged, n=30,000 x d=1,024, 2 and 10 classes) and
#      bench/array_api.py (geneb-v1-array-api vs the exact CPU path)            45 s
#   3. end-to-end: bench/gpu_suite.py writes a geneb-sized suite (4 tasks x     30 s
#      27,500 sequences, 100-500 bp) and a 115M BERT (save_pretrained);
#      `geneb-engine fill --jobs auto` computes its 12 cells                   140 s
#      then `status --perf` (the runs table: tokens/s, TFLOP/s, MFU)            15 s
#   4. bench/cluster.py --throughput <that store>: the full benchmark           40 s
#      (40 models x 100 tasks) projected on 1, 8 and 64 GPUs
# Step 3 and 4 need the store's packages; where one is missing the script says which and runs
# the rest.
#
#   bash bench/gpu.sh            # PYTHON=... to choose the interpreter (default python3)
#   bash bench/gpu.sh --dry      # the plan only (also where there is no CUDA device); exit 0
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_VERBOSITY=error
STORE_PACKAGES="zarr polars duckdb deltalake"

plan() {
    echo "bench/gpu.sh, at most 8 minutes on one GPU (each step under timeout):"
    echo "  1. bench/mfu.py: pipeline vs forward and MFU of a 115M BERT, bf16 autocast (60 s);"
    echo "     and bf16 weights, --dtype bfloat16 (60 s)"
    echo "  2. bench/probe.py --skip-official --classes 2 10 (75 s); bench/array_api.py --device cuda (45 s)"
    echo "  3. bench/gpu_suite.py: 4 tasks x 27,500 sequences of 100-500 bp, 115M BERT (30 s);"
    echo "     geneb-engine fill --jobs auto (140 s); geneb-engine status --perf (15 s)"
    echo "  4. bench/cluster.py --throughput <store>: 40 models x 100 tasks on 1, 8, 64 GPUs (40 s)"
    echo "  steps 3 and 4 need the store's packages ($STORE_PACKAGES)"
}

if [ "${1:-}" = "--dry" ]; then
    plan
    exit 0
fi
if ! "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null; then
    echo "no CUDA device (or no torch for $PY) here: nothing measured. The plan:"
    plan
    exit 0
fi

step() {    # step LIMIT TITLE COMMAND...: the command under `timeout`, its failure reported
    local limit=$1 title=$2
    shift 2
    echo "== $title (limit ${limit} s) =="
    local start=$SECONDS rc=0
    timeout "$limit" "$@" || rc=$?
    if [ "$rc" = 124 ]; then echo "!! $title: stopped at its ${limit} s limit"
    elif [ "$rc" != 0 ]; then echo "!! $title: exit $rc"; fi
    echo "-- $title: $((SECONDS - start)) s"
}

nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
"$PY" -c 'import torch, sklearn, transformers; print("torch", torch.__version__, "cuda",
torch.version.cuda, "transformers", transformers.__version__, "scikit-learn",
sklearn.__version__, "cpu threads", torch.get_num_threads())'
MISSING=$("$PY" -c 'import importlib.util, sys
print(" ".join(p for p in sys.argv[1:] if importlib.util.find_spec(p) is None))' $STORE_PACKAGES)

step 60 "pipeline vs forward, MFU: 115M BERT, bf16 autocast" "$PY" bench/mfu.py
step 60 "pipeline vs forward, MFU: 115M BERT, bf16 weights" "$PY" bench/mfu.py --dtype bfloat16
step 75 "probe variants: batched solver vs scikit-learn converged" \
    "$PY" bench/probe.py --skip-official --classes 2 10
step 45 "geneb-v1-array-api vs the exact CPU path" "$PY" bench/array_api.py --device cuda

if [ -n "$MISSING" ]; then
    echo "== end-to-end fill, status --perf and the projection: skipped, the store's package(s)" \
         "$MISSING not installed here =="
    exit 0
fi
WORK=$(mktemp -d /tmp/geneb-gpu-XXXXXX)
step 30 "a geneb-sized suite and a 115M BERT" "$PY" bench/gpu_suite.py "$WORK"
step 140 "end-to-end: fill --jobs auto, 4 tasks x 3 regimes" \
    "$PY" -m engine.cli fill --store "$WORK/store" --suite "$WORK/suite" \
    --models "$WORK/bert-115m" --jobs auto
step 15 "status --perf" "$PY" -m engine.cli status --store "$WORK/store" --perf
step 40 "the full benchmark projected from this run's throughput" \
    "$PY" bench/cluster.py --throughput "$WORK/store" --probe-tasks 1
