"""What a checkpoint folder loaded through transformers must hold and do, checked before a run
writes anything (`engine.encoders.preflight`), without loading the model:

- its own tokenizer files (`TOKENIZER_FILES`): without them transformers builds a tokenizer of
  its special tokens only, which maps every sequence to its unknown token;
- weights transformers can load, in the file it would take (`WEIGHT_FILES`, in its order): a
  safetensors file whose size is what its header's offsets name (a truncated copy is not), the
  shards an index names, a `.bin` that `torch.load(weights_only=True)` reads (no pickled Python
  objects; a zip archive read memory-mapped, as transformers reads it, so its tensors are not);
- a tokenizer that knows DNA: of a sample of the suite's sequences (`SAMPLE_SEQUENCES`, drawn
  by `engine.fill.validate_tasks`, each cut to `SAMPLE_LETTERS`), at most `UNKNOWN_LIMIT` of
  the nucleotides may end in its unknown token (`unknown_share`; the generic encoder loads the
  tokenizer: `engine.encoders.hf.check_tokenizer`).

Cheap on multi-GB checkpoints (headers and archive directories, never the tensors' bytes), and
nothing is cached: every run checks the files as they are.
"""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Sequence
from pathlib import Path

# The files of a tokenizer transformers reads (a whole tokenizer, its configuration, which may
# name a tokenizer class or its code, or a vocabulary); special_tokens_map.json alone is none.
TOKENIZER_FILES: tuple[str, ...] = ("tokenizer.json", "tokenizer_config.json", "vocab.txt",
                                    "vocab.json", "tokenizer.model", "spiece.model",
                                    "sentencepiece.bpe.model")
# The weights transformers' from_pretrained looks for in a folder, in the order it takes them.
WEIGHT_FILES: tuple[str, ...] = ("model.safetensors", "model.safetensors.index.json",
                                 "pytorch_model.bin", "pytorch_model.bin.index.json")
# A tokenizer that maps more than this share of the sampled nucleotides to its unknown token is
# refused: most of what the model would see is that one token (a tokenizer of another alphabet,
# or of its special tokens only).
UNKNOWN_LIMIT = 0.5
SAMPLE_SEQUENCES = 64            # sequences of the suite the tokenizer check tokenizes
SAMPLE_LETTERS = 1_000           # of each, the first letters
_MAX_HEADER = 100_000_000        # safetensors refuses a longer header
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def tokenizer_files_problem(folder: Path) -> str | None:
    """Why `folder` holds no tokenizer of its own (None: it holds one of TOKENIZER_FILES)."""
    if any((folder / name).is_file() for name in TOKENIZER_FILES):
        return None
    return (f"{folder} holds no tokenizer files (looked for {', '.join(TOKENIZER_FILES)}): "
            "without them transformers builds a tokenizer that maps every sequence to its "
            "unknown token; save the tokenizer the model was trained with into the folder "
            "(tokenizer.save_pretrained)")


def weights_problem(folder: Path) -> str | None:
    """Why transformers cannot load the weights of `folder` (None: the file it would take, and
    every shard its index names, reads)."""
    name = next((n for n in WEIGHT_FILES if (folder / n).is_file()), None)
    if name is None:
        return (f"{folder} holds no weights (looked for {', '.join(WEIGHT_FILES)}); save the "
                "model into it with save_pretrained")
    file = folder / name
    if not name.endswith(".index.json"):
        return _file_problem(file)
    try:
        shards = sorted(set(json.loads(file.read_text(encoding="utf-8"))["weight_map"].values()))
        if not all(isinstance(s, str) for s in shards):
            raise TypeError
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError):
        return f"{file}: not a weights index (JSON with a weight_map of shard file names)"
    for shard in shards:
        path = folder / shard
        if not path.is_file():
            return f"{file} names the shard {shard}, which {folder} lacks"
        if problem := _file_problem(path):
            return problem
    return None


def _file_problem(file: Path) -> str | None:
    return _safetensors_problem(file) if file.suffix == ".safetensors" else _torch_problem(file)


def safetensors_header(file: Path) -> tuple[int, dict]:
    """The header of a safetensors file: its length and its JSON object (the file is 8 bytes,
    the header's length little-endian, the header naming each tensor's dtype, shape and byte
    range, `data_offsets`, from the header's end, then those bytes). OSError when the file
    cannot be read, ValueError saying why when it has no such header."""
    with open(file, "rb") as f:
        head = f.read(8)
        length = int.from_bytes(head, "little")
        if len(head) < 8 or length > _MAX_HEADER:
            raise ValueError("not a safetensors file (its first 8 bytes name no header)")
        raw = f.read(length)
    if len(raw) < length:
        raise ValueError(f"truncated: {8 + len(raw):,} bytes, less than its {length:,}-byte "
                         "header; copy or download it again")
    header = json.loads(raw)                # UnicodeDecodeError, JSONDecodeError: ValueErrors
    if not isinstance(header, dict):
        raise ValueError("not a safetensors file (its header is no JSON object)")
    return length, header


def _safetensors_problem(file: Path) -> str | None:
    """The file must end where the last tensor's byte range does (`safetensors_header`)."""
    try:
        size = file.stat().st_size
        length, header = safetensors_header(file)
        ends = [int(v["data_offsets"][1]) for k, v in header.items() if k != "__metadata__"]
    except OSError as exc:
        return f"{file}: cannot be read ({exc.strerror})"
    except json.JSONDecodeError:
        return f"{file}: not a safetensors file (its header is no JSON)"
    except ValueError as exc:
        return f"{file}: {exc}"
    except (KeyError, TypeError, AttributeError, IndexError):
        return f"{file}: not a safetensors file (its header names no tensors' byte ranges)"
    need = 8 + length + max(ends, default=0)
    if size < need:
        return (f"{file}: truncated: {size:,} of the {need:,} bytes its header names; copy or "
                "download it again")
    if size > need:
        return (f"{file}: {size - need:,} bytes beyond the {need:,} its header names; "
                "transformers refuses it")
    return None


def _torch_problem(file: Path) -> str | None:
    """A torch.save file read as transformers reads it: `weights_only=True` (tensors and plain
    containers; a pickled object of any other class is refused, never built), memory-mapped
    when it is a zip archive (the tensors' bytes are not read), whole in the legacy format."""
    import torch  # lazy: torch

    try:
        if file.stat().st_size == 0:
            return f"{file}: empty; copy or save the weights again"
        zipped = zipfile.is_zipfile(file)
        torch.load(file, map_location="cpu", weights_only=True, mmap=zipped)
    except OSError as exc:
        return f"{file}: cannot be read ({exc.strerror})"
    except Exception as exc:  # noqa: BLE001 - UnpicklingError, torch's zip reader, EOFError...
        return f"{file}: torch.load(weights_only=True) refuses it: {_why(exc)}"
    return None


def _why(exc: Exception) -> str:
    """What a torch.load error says was wrong, in one line without terminal colours: the
    weights-only unpickler's refusal, a truncated archive, else its first line."""
    lines = [line.strip() for line in _ANSI.sub("", str(exc)).splitlines() if line.strip()]
    refused = next((line.split(":", 1)[1].strip() for line in lines
                    if line.startswith("WeightsUnpickler error:")), None)
    if refused is not None:
        return ("it holds pickled Python objects, not only tensors "
                f"({refused.split(' Please use ')[0]}); nothing of it was run")
    if "central directory" in str(exc):
        return "a zip archive without its directory at the end: truncated; copy it again"
    first = f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__
    return f"not a torch.save file, or a damaged one ({first})"


def unknown_share(tokenizer, texts: Sequence[str]) -> tuple[float, str]:
    """The share of `texts` a tokenizer does not know, and of what: for a fast tokenizer (its
    tokens' character offsets known) the share of the letters that no token other than the
    unknown one covers ("nucleotides": a letter dropped counts as unknown too), else the share
    of the tokens that are the unknown token ("tokens"). Special tokens are not added."""
    import numpy as np  # lazy: numpy

    unk = tokenizer.unk_token_id
    if getattr(tokenizer, "is_fast", False):
        encoded = tokenizer(list(texts), add_special_tokens=False, return_offsets_mapping=True)
        unknown = 0
        for text, ids, offsets in zip(texts, encoded["input_ids"], encoded["offset_mapping"],
                                      strict=True):
            spans = np.asarray([o for i, o in zip(ids, offsets, strict=True) if i != unk],
                               dtype=np.int64).reshape(-1, 2)
            edges = np.zeros(len(text) + 1, dtype=np.int64)
            np.add.at(edges, spans[:, 0], 1)
            np.add.at(edges, spans[:, 1], -1)
            unknown += int((np.cumsum(edges[:-1]) <= 0).sum())
        return unknown / max(sum(map(len, texts)), 1), "nucleotides"
    ids = tokenizer(list(texts), add_special_tokens=False)["input_ids"]
    total = sum(map(len, ids))
    return (sum(x.count(unk) for x in ids) / total if unk is not None and total else 0.0,
            "tokens")


def unknown_problem(share: float, unit: str, unk: str | None, sampled: int, of: str) -> str | None:
    """Why a tokenizer that does not know `share` of the sampled `unit` (`unknown_share`) is
    refused; None at most UNKNOWN_LIMIT."""
    if share <= UNKNOWN_LIMIT:
        return None
    what = f"{share:.0%} of the {unit} of {sampled} sequences sampled from {of}"
    said = (f"maps {what} to its unknown token {unk}" if unit == "nucleotides" and unk else
            f"drops {what}" if unit == "nucleotides" else f"gives its unknown token {unk} "
            f"for {what}")
    return (f"its tokenizer {said}: not a DNA tokenizer, or the wrong tokenizer files (refused "
            f"above {UNKNOWN_LIMIT:.0%})")
