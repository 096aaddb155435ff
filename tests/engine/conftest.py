"""Engine fixtures: small task folders in the official flat layout, built in the test."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest


def write_task(path: Path, n_train: int, n_test: int, n_classes: int, seed: int,
               length: int = 120) -> Path:
    """A task whose classes differ in base composition (learnable by a k-mer probe)."""
    rng = np.random.default_rng(seed)
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["text", "label", "split"])
        for split, n in (("train", n_train), ("test", n_test)):
            labels = np.arange(n) % n_classes
            rng.shuffle(labels)
            for lab in labels:
                p = np.full(4, 0.25)
                p[lab % 4] += 0.04
                p /= p.sum()
                w.writerow(["".join(rng.choice(list("ACGT"), size=length, p=p)), int(lab), split])
    return path


@pytest.fixture
def task_dir(tmp_path: Path) -> Path:
    """Three tasks: binary, 3-class and 4-class, with a manifest."""
    folder = tmp_path / "suite"
    folder.mkdir()
    write_task(folder / "bin_task.csv", 200, 80, 2, 1)
    write_task(folder / "tri_task.csv", 240, 90, 3, 2)
    write_task(folder / "quad_task.csv", 200, 80, 4, 3)
    (folder / "manifest.csv").write_text(
        "task_id,category,label\nbin_task,Promoters,Binary\ntri_task,Enhancers,Three\n"
        "quad_task,Promoters,Four\n")
    return folder


# --- a Hugging Face hub on this machine (tests.engine.local_hub) -----------------------------

@pytest.fixture
def undecided_hub(monkeypatch):
    """The hub may be asked (no HF_HUB_OFFLINE) and this process has not decided yet whether
    it may (`engine.encoders.hub.hub_problem`); the offline switch a run makes is undone."""
    from huggingface_hub import constants

    from engine.encoders import hub as hub_module

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")     # restored after the offline switch
    hub_module.hub_problem.cache_clear()
    yield
    hub_module.hub_problem.cache_clear()


@pytest.fixture
def listener(monkeypatch):
    """The hub's endpoint: a socket that counts the connections made to it, answering none."""
    from huggingface_hub import constants

    from tests.engine.local_hub import Listener

    server = Listener()
    monkeypatch.setattr(constants, "ENDPOINT", server.url)
    yield server
    server.sock.close()


@pytest.fixture
def answering_hub(monkeypatch):
    """The hub's endpoint: a server that answers (`tests.engine.local_hub.AnsweringHub`)."""
    from huggingface_hub import constants

    from tests.engine.local_hub import AnsweringHub

    server = AnsweringHub()
    monkeypatch.setattr(constants, "ENDPOINT", server.url)
    yield server
    server.close()


# --- small official stores: a few of the 40 official submissions (cheap sites and figures) ---

SMALL_STORES = {"one": ("GROVER",),
                "three": ("BioFM-265M", "DNABERT-S", "GENERator-eukaryote-1.2b-base"),
                "four": ("BioFM-265M", "DNABERT-S", "GENERator-eukaryote-3b-base", "GROVER")}


@pytest.fixture(scope="session")
def small_stores(tmp_path_factory) -> dict[str, Path]:
    """Name -> the root of a store holding those official submissions (`SMALL_STORES`),
    imported once per session. Read-only for the tests."""
    from store.official.submission import import_files
    from store.paths import resolve_store
    from tests.conftest import SUBMISSIONS

    roots = {}
    for name, models in SMALL_STORES.items():
        paths = resolve_store(tmp_path_factory.mktemp(f"small-{name}") / "store")
        import_files(paths, [SUBMISSIONS / f"{m}.json" for m in models])
        roots[name] = paths.root
    return roots


# A context sweep's store (issue 45): its models, and its two categories (the second's name
# carries HTML, Rich markup and mathtext: store text every surface must show literally), and
# the resamples of its site and of the reports its tests compare with it.
CONTEXT_MODELS = ("kmer-3", "kmer-4")
CONTEXT_CATEGORIES = ("Promoters", "Long <i>range</i> [b]$x^2$[/b]")
CONTEXT_RESAMPLES = "100"


@pytest.fixture(scope="session")
def context_sweep(tmp_path_factory) -> tuple[Path, Path, Path]:
    """(store, suite, site): CONTEXT_MODELS at context lengths 10 and 20 and at their own
    limit (`fill --context-lengths`), full regime, on four tasks, two in each of
    CONTEXT_CATEGORIES (every scope has intervals), and its site (`site --resamples
    CONTEXT_RESAMPLES`). Read-only for the tests."""
    import contextlib
    import io

    from engine.cli import main

    root = tmp_path_factory.mktemp("context-sweep")
    suite = root / "suite"
    suite.mkdir()
    for i in range(4):
        write_task(suite / f"task_{i}.csv", 30, 12, 2, i, length=40)
    (suite / "manifest.csv").write_text("task_id,category\n" + "".join(
        f"task_{i},{CONTEXT_CATEGORIES[i // 2]}\n" for i in range(4)))
    where = ["--store", str(root / "store"), "--suite", str(suite)]
    fill = ["fill", *where, "--models", *CONTEXT_MODELS, "--regimes", "full", "--json"]
    for argv in (fill, [*fill, "--context-lengths", "10", "20"],
                 ["site", *where, "--resamples", CONTEXT_RESAMPLES, "-o", str(root / "site")]):
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            assert main(argv) == 0, err.getvalue()
    return root / "store", suite, root / "site"
