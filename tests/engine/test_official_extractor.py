"""A class written for the official harness, run by `fill` as `encoder = "official-extractor"`:
an unmodified file in the official interface (`from .base import BaseEmbeddingExtractor`)
gives the metrics of the built-in k-mer baseline when it computes the official 4-mer recipe,
resumes after a kill, carries its file's hash as the model revision, and a bad file is one
line, exit 2, the store as it was."""

from __future__ import annotations

import csv
import hashlib
import json
import textwrap
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest
import zarr

from engine.cli import main
from engine.encoders import EncoderOptions, build_encoder, harness_base, preflight
from engine.encoders.official_extractor import CALL_BATCHES, TRIAL
from engine.registry import resolve_model
from store.catalog import load_models
from store.db import query
from store.paths import resolve_store
from store.runnable import assess
from store.vocab.errors import GenebError
from tests.engine.conftest import write_task
from tests.engine.in_process import run
from tests.engine.processes import fill_cmd, results_of, temp_files
from tests.engine.processes import run as run_process
from tests.helpers import digest

# The official 4-mer recipe (upper case; windows holding another letter skipped; counts in
# lexicographic order, normalised to sum 1; float32), in the harness's interface. Every call
# appends its number of sequences to the file `log`.
FOUR_MER = '''
"""4-mer frequencies for the GENEB harness."""
import itertools

import numpy as np

from .base import BaseEmbeddingExtractor

_INDEX = {"".join(w): i for i, w in enumerate(itertools.product("ACGT", repeat=4))}


class FourMer(BaseEmbeddingExtractor):
    def __init__(self, name_model, device="cpu", log=None):
        self.name_model, self.device, self.log = name_model, device, log

    def extract_embeddings(self, sequences, batch_size=8):
        if self.log:
            with open(self.log, "a") as f:
                f.write(f"{len(sequences)}\\n")
        out = np.zeros((len(sequences), len(_INDEX)), dtype=np.float32)
        for row, seq in zip(out, sequences):
            text = seq.upper()
            for j in range(len(text) - 3):
                i = _INDEX.get(text[j:j + 4])
                if i is not None:
                    row[i] += 1
            total = row.sum()
            if total > 0:
                row /= total
        return out
'''
BATCH = 2                       # the entry's batch size: calls of 2 * CALL_BATCHES sequences
N_TRAIN, N_TEST = 200, 60
PER_SEED = ("task, regime, seed, mcc, acc, f1_macro, n_train, n_test, degenerate, converged")


def entry(model_id: str, extractor: str, **fields) -> str:
    lines = [f'model_id = "{model_id}"', 'encoder = "official-extractor"',
             f'extractor = "{extractor}"', f"batch_size = {BATCH}"]
    lines += [f"{k} = {v}" for k, v in fields.items()]
    return "[[model]]\n" + "\n".join(lines) + "\n"


def log_arg(log: Path) -> str:
    return "{ log = " + json.dumps(str(log)) + " }"


def make_store(root: Path, *entries: str, files: dict[str, str] | None = None) -> Path:
    """A store folder holding models.toml (the entries) and extractors/<name> files."""
    (root / "extractors").mkdir(parents=True, exist_ok=True)
    for name, text in (files or {"four_mer.py": FOUR_MER}).items():
        (root / "extractors" / name).write_text(textwrap.dedent(text))
    (root / "models.toml").write_text("\n".join(entries))
    return root


def cut(n: int) -> list[int]:
    """The sizes of the calls that embed a split of n rows."""
    step = BATCH * CALL_BATCHES
    return [step] * (n // step) + ([n % step] if n % step else [])


def calls(log: Path) -> list[int]:
    return [int(n) for n in log.read_text().split()] if log.exists() else []


def mixed_task(path: Path, seed: int) -> Path:
    """A binary task whose sequences hold lower case, N and IUPAC codes besides ACGT."""
    rng = np.random.default_rng(seed)
    letters = np.array(list("ACGTACGTACGTacgtNRY"))
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["text", "label", "split"])
        for split, n in (("train", 120), ("test", 50)):
            for i in range(n):
                p = np.ones(len(letters))
                p[i % 2] += 1.0                     # class 1 has more C, class 0 more A
                w.writerow(["".join(rng.choice(letters, 90, p=p / p.sum())), i % 2, split])
    return path


@pytest.fixture(scope="module")
def suite(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("suite") / "tiny"
    folder.mkdir()
    write_task(folder / "task_a.csv", N_TRAIN, N_TEST, 2, 21)
    mixed_task(folder / "task_m.csv", 22)
    return folder


def fill(store: Path, suite: Path, *models: str, regimes=("full", "10shot", "1shot")) -> None:
    assert main(["fill", "--store", str(store), "--suite", str(suite), "--models", *models,
                 "--regimes", *regimes]) == 0


def per_seed(store: Path, model: str):
    return query(resolve_store(store),
                 f"SELECT {PER_SEED} FROM results WHERE model = ? ORDER BY ALL", [model])


def revision(file: Path, **args) -> str:
    """The documented revision, computed here: sha256 of the file's bytes, a NUL, then the init
    arguments but the device as compact sorted JSON."""
    text = json.dumps(args, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(file.read_bytes() + b"\0" + text.encode()).hexdigest()


def test_the_official_4mer_recipe_gives_the_kmer_4_metrics(tmp_path, suite):
    log = tmp_path / "calls.log"
    store = make_store(tmp_path / "store", entry("ext-4mer", "extractors/four_mer.py:FourMer",
                                                 extractor_args=log_arg(log)))
    fill(store, suite, "ext-4mer", "kmer-4")
    ours, official = per_seed(store, "kmer-4"), per_seed(store, "ext-4mer")
    assert official.height == 2 * 3 * 5 and official.equals(ours)
    # One trial call, then calls of BATCH * CALL_BATCHES sequences from row 0 of each split.
    assert calls(log) == [len(TRIAL), *cut(N_TRAIN), *cut(N_TEST), *cut(120), *cut(50)]
    # The revision: the file's hash and its init arguments, in every row and both splits.
    file = store / "extractors" / "four_mer.py"
    want = revision(file, name_model="ext-4mer", log=str(log))
    rows = query(resolve_store(store), "SELECT DISTINCT model_revision FROM results WHERE "
                                       "model = 'ext-4mer'")
    assert rows["model_revision"].to_list() == [want]
    attrs = zarr.open_group(str(store / "embeddings.zarr" / "ext-4mer" / "task_a" / "test")).attrs
    assert attrs["model_revision"] == want
    assert attrs["encoder"] == {"encoder": "official-extractor", "extractor": "four_mer.py:FourMer",
                                "args": {"name_model": "ext-4mer", "log": str(log)},
                                "device": "cpu", "batch_size": BATCH}


def test_a_killed_fill_resumes_from_the_finished_calls(tmp_path, suite):
    def store_with(name: str, log: Path) -> Path:
        return make_store(tmp_path / name, entry("ext-4mer", "extractors/four_mer.py:FourMer",
                                                 extractor_args=log_arg(log)))

    only_a = ("--tasks", "task_a", "--device", "cpu")
    reference = store_with("reference", tmp_path / "reference.log")
    done = run_process(fill_cmd(reference, suite, *only_a, models=("ext-4mer",)))
    assert done.returncode == 0, done.stderr

    log = tmp_path / "killed.log"
    store = store_with("store", log)
    # Killed in its third write: task_a's train rows of the first two calls are stored.
    killed = run_process(fill_cmd(store, suite, *only_a, models=("ext-4mer",)),
                         GENEB_FAILPOINT="rows-written:3")
    assert killed.returncode == -9, killed.stderr
    step = BATCH * CALL_BATCHES
    assert calls(log) == [len(TRIAL), step, step, step]
    log.unlink()
    again = run_process(fill_cmd(store, suite, *only_a, models=("ext-4mer",)))
    assert again.returncode == 0, again.stderr
    # Only the rest: the third call again (its rows were not marked done), the last, the test.
    assert calls(log) == [len(TRIAL), step, N_TRAIN - 3 * step, N_TEST]
    assert results_of(store).equals(results_of(reference))
    assert temp_files(store) == []


def test_editing_the_file_changes_the_revision_and_recomputes(tmp_path, suite):
    log = tmp_path / "calls.log"
    store = make_store(tmp_path / "store", entry("ext-4mer", "extractors/four_mer.py:FourMer",
                                                 extractor_args=log_arg(log)))
    file = store / "extractors" / "four_mer.py"
    fill(store, suite, "ext-4mer", regimes=("full",))
    first = revision(file, name_model="ext-4mer", log=str(log))
    log.unlink()
    fill(store, suite, "ext-4mer", regimes=("10shot",))      # unchanged: the embeddings reused
    assert calls(log) == [len(TRIAL)]
    file.write_text(file.read_text() + "# edited\n")
    second = revision(file, name_model="ext-4mer", log=str(log))
    assert second != first
    log.unlink()
    fill(store, suite, "ext-4mer", regimes=("1shot",))       # edited: embedded again
    assert sum(calls(log)) == len(TRIAL) + N_TRAIN + N_TEST + 120 + 50
    def revisions(view: str) -> list[tuple[str, str]]:
        return query(resolve_store(store), f"SELECT regime, model_revision FROM {view} "
                                           "GROUP BY ALL ORDER BY regime").rows()

    # The first revision's cells are stale now: left out of what readers show.
    assert revisions("results") == [("1shot", second)]
    assert revisions("stale_results") == [("10shot", first), ("full", first)]
    attrs = zarr.open_group(str(store / "embeddings.zarr" / "ext-4mer" / "task_a" / "train")).attrs
    assert attrs["model_revision"] == second


def test_absolute_harness_imports_and_sibling_modules_load(tmp_path):
    files = {
        "helpers.py": '''
            import numpy as np

            def lengths(sequences):
                return np.array([[len(s), s.count("G")] for s in sequences], dtype=np.float32)
        ''',
        "absolute.py": '''
            from extractors.base import BaseEmbeddingExtractor

            from .helpers import lengths


            class Lengths(BaseEmbeddingExtractor):
                def extract_embeddings(self, sequences, batch_size=8):
                    return lengths(sequences)
        ''',
    }
    store = make_store(tmp_path / "store", entry("ext-len", "extractors/absolute.py:Lengths"),
                       files=files)
    model = load_models(store / "models.toml")["ext-len"]
    assert model.extractor == f"{store / 'extractors' / 'absolute.py'}:Lengths"
    encoder = build_encoder(model, EncoderOptions(device="cpu"))
    assert isinstance(encoder.instance, harness_base.BaseEmbeddingExtractor)
    assert encoder.instance.name_model == "ext-len" and encoder.instance.device == "cpu"
    assert encoder.embed(["GGA", "ACGTG"]).tolist() == [[3, 2], [5, 2]]


# Bad files: one line naming the file and class, exit 2, no traceback, the store unchanged.

NAN = '''
    import numpy as np

    from .base import BaseEmbeddingExtractor


    class Bad(BaseEmbeddingExtractor):
        def extract_embeddings(self, sequences, batch_size=8):
            return np.full((len(sequences), 4), np.nan, dtype=np.float32)
'''
BAD_FILES = {
    "missing file": ("gone.py:Bad", None, "gone.py does not exist"),
    "missing class": ("bad.py:Bad", "X = 1\n", "the file has no class Bad"),
    "transposed": ("bad.py:Bad", NAN.replace("(len(sequences), 4), np.nan",
                                             "(4, len(sequences)), 0.5"), "shape (4, 2)"),
    "one row short": ("bad.py:Bad", NAN.replace("len(sequences), 4), np.nan",
                                                "len(sequences) - 1, 4), 0.5"), "shape (1, 4)"),
    "one value per sequence": ("bad.py:Bad", NAN.replace("(len(sequences), 4)",
                                                         "len(sequences)"), "shape (2,)"),
    "NaN": ("bad.py:Bad", NAN, "NaN or infinite values (as float32) in 2 row(s)"),
    "raises": ("bad.py:Bad", NAN.replace("return np.full", "raise RuntimeError('no GPU')\n"
                                         "            np.full"),
               "raised RuntimeError: no GPU at bad.py:9"),
    "does not load": ("bad.py:Bad", "import not_a_module_anywhere\n",
                      "loading it raised ModuleNotFoundError"),
}


@pytest.fixture(scope="module")
def filled(tmp_path_factory, suite) -> Path:
    """A store with content: task_a filled with kmer-3, full regime."""
    store = tmp_path_factory.mktemp("bad-extractors") / "store"
    assert main(["fill", "--store", str(store), "--suite", str(suite), "--models", "kmer-3",
                 "--regimes", "full", "--tasks", "task_a"]) == 0
    return store


@pytest.mark.parametrize("case", BAD_FILES)
def test_a_bad_extractor_is_one_line_and_the_store_unchanged(filled, suite, capsys, case):
    spec, text, problem = BAD_FILES[case]
    folder = filled / "extractors"
    folder.mkdir(exist_ok=True)
    (folder / "bad.py").write_text(textwrap.dedent(text or ""))
    (filled / "models.toml").write_text(entry("ext-bad", f"extractors/{spec}"))
    before = digest(filled)     # the pair's lock included: none is taken for a bad class
    rc, err = run(capsys, "fill", "--store", str(filled), "--suite", str(suite), "--models",
                  "ext-bad", "--tasks", "task_a", "--regimes", "full", "--device", "cpu")
    assert rc == 2 and "Traceback" not in err and len(err.splitlines()) == 1, err
    file, _, name = spec.partition(":")
    assert "model ext-bad: " in err and problem in err, err
    assert str(folder / file) in err and (case == "missing file" or f"{file}:{name}" in err)
    assert digest(filled) == before


@pytest.mark.parametrize(("field", "problem"), [
    ('extractor = "extractors/x.txt"', "'path/to/file.py:ClassName'"),
    ('extractor = "x.py:Not-a-class"', "'path/to/file.py:ClassName'"),
    ('extractor = "x.py:X"\nextractor_args = { device = "cuda" }', "extractor_args.device is"),
    ('extractor = "x.py:X"\nextractor_args = [1]', "'extractor_args' must be a table"),
    ('extractor = "x.py:X"\nextractor_args = { when = 1979-05-27 }', "no dates"),
    ('extractor = "x.py:X"\nrevision = "' + "a" * 40 + '"', "remove 'revision'"),
])
def test_a_bad_entry_names_the_file_entry_and_field(tmp_path, capsys, field, problem):
    (tmp_path / "models.toml").write_text(
        f'[[model]]\nmodel_id = "e"\nencoder = "official-extractor"\n{field}\n')
    rc, err = run(capsys, "models", "--store", str(tmp_path))
    assert rc == 2 and len(err.splitlines()) == 1, err
    assert "models.toml: model entry 1 (e)" in err and problem in err, err


def test_extractor_fields_belong_to_official_extractor_entries(tmp_path):
    (tmp_path / "models.toml").write_text(
        '[[model]]\nmodel_id = "e"\nhub_id = "o/e"\nextractor = "x.py:X"\n')
    with pytest.raises(GenebError, match="'extractor' belongs to encoder = \"official-extractor"):
        load_models(tmp_path / "models.toml")


def test_its_revision_cannot_be_pinned_on_the_command_line(tmp_path):
    store = make_store(tmp_path, entry("ext-4mer", "extractors/four_mer.py:FourMer"))
    catalog = load_models(store / "models.toml")
    with pytest.raises(GenebError, match="hash of its extractor file"):
        resolve_model("ext-4mer@" + "a" * 40, catalog)


def test_the_dashboard_offers_it_exactly_when_preflight_passes(tmp_path):
    store = make_store(tmp_path, entry("ext-4mer", "extractors/four_mer.py:FourMer"),
                       entry("ext-gone", "extractors/gone.py:FourMer"))
    catalog = load_models(store / "models.toml")
    for model_id, runnable in (("ext-4mer", True), ("ext-gone", False)):
        meta = catalog[model_id]
        a = assess(asdict(meta), model_id)
        assert a.runnable is runnable, a
        if runnable:
            preflight(meta)
            assert a.needs == "your extractor four_mer.py:FourMer"
        else:
            with pytest.raises(GenebError, match="gone.py does not exist"):
                preflight(meta)
            assert "gone.py does not exist" in a.why
