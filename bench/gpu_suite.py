"""The end-to-end run of bench/gpu.sh, prepared: a generated geneb-sized suite and a >= 100M
parameter checkpoint written by `save_pretrained`, for `geneb-engine fill` to compute.

As issue 33's first GPU run: a directory suite of four tasks of 27,500 sequences each (22,000
train, 5,500 test), 100-500 bp drawn uniformly, two classes whose base composition differs a
little (learnable, as tests/engine/conftest.py:write_task makes them), about 33M nucleotides;
and a BERT of 115M parameters (16 layers, width 768; bench/mfu.py's `checkpoint`, with a
single-nucleotide tokenizer) with random weights drawn from seed 0. Prints the folders and the
sizes. Needs torch, transformers and numpy only (no store packages).

    python bench/gpu_suite.py OUT                         # OUT/suite, OUT/bert-115m
    .venv/bin/python bench/gpu_suite.py OUT --sequences 200 --layers 1 --width 64   # quick
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
from mfu import checkpoint  # noqa: E402

LETTERS = np.frombuffer(b"ACGT", dtype=np.uint8)


def write_suite(folder: Path, tasks: int, sequences: int, seed: int = 0) -> int:
    """`tasks` flat task files (text,label,split), 4/5 train; returns the nucleotides."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    total = 0
    for t in range(tasks):
        lengths = rng.integers(100, 501, size=sequences)
        labels = np.arange(sequences) % 2
        rng.shuffle(labels)
        p = np.full((2, 4), 0.25)
        p[0, 0] += 0.04
        p[1, 2] += 0.04
        p /= p.sum(axis=1, keepdims=True)
        lines = ["text,label,split"]
        for i, (n, label) in enumerate(zip(lengths, labels, strict=True)):
            text = LETTERS[rng.choice(4, size=n, p=p[label])].tobytes().decode()
            lines.append(f"{text},{label},{'train' if i < sequences * 4 // 5 else 'test'}")
        (folder / f"gen_task_{t}.csv").write_text("\n".join(lines) + "\n")
        total += int(lengths.sum())
    return total


def write_model(folder: Path, layers: int, width: int) -> int:
    """bench/mfu.py's configuration and tokenizer, with random weights saved; the parameters."""
    import torch
    from transformers import BertConfig, BertModel

    checkpoint(folder, layers, width, 512)
    torch.manual_seed(0)
    model = BertModel(BertConfig.from_pretrained(folder), add_pooling_layer=False)
    model.save_pretrained(folder)
    return sum(p.numel() for p in model.parameters())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="where OUT/suite and OUT/bert-115m go")
    ap.add_argument("--tasks", type=int, default=4)
    ap.add_argument("--sequences", type=int, default=27_500, help="per task (default 27,500)")
    ap.add_argument("--layers", type=int, default=16)
    ap.add_argument("--width", type=int, default=768)
    args = ap.parse_args()
    nucleotides = write_suite(args.out / "suite", args.tasks, args.sequences)
    params = write_model(args.out / "bert-115m", args.layers, args.width)
    print(f"suite {args.out / 'suite'}: {args.tasks} tasks x {args.sequences:,} sequences of "
          f"100-500 bp, {nucleotides:,} nt; model {args.out / 'bert-115m'}: "
          f"{params / 1e6:.1f}M parameters ({args.layers} layers, width {args.width}), "
          "random weights, save_pretrained")
    return 0


if __name__ == "__main__":
    sys.exit(main())
