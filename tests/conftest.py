"""Fixtures shared across the test packages."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from threadpoolctl import threadpool_limits

from store.official.data import official_tree

# One thread per process for torch's and the BLAS libraries' pools (unless the caller set it):
# `make test` runs as many workers as cores (pytest -n 2), each starting `geneb-engine`
# processes, and a pool of one thread per core in each of them spins against the others (a
# five-second fit took minutes on a loaded machine). torch reads it when it loads, and so do
# the processes tests start; the pools already loaded (numpy's, by a pytest plugin) are set now.
os.environ.setdefault("OMP_NUM_THREADS", "1")
threadpool_limits(int(os.environ["OMP_NUM_THREADS"]))

# The user cache (`store.paths.user_cache_dir`: the files' digests of checkpoint revisions) in a
# folder of this run, never the user's; the processes tests start inherit it.
os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="geneb-test-cache-")

# The published GENEB reference files, written once from the data shipped in the package
# (store/official/reference_data/) into <temp dir>/geneb-official-<content hash>/. Read-only for
# the tests.
OFFICIAL_TREE = official_tree()
SUBMISSIONS = OFFICIAL_TREE / "submissions"                          # the 40 official files
SELF_REPORTED = OFFICIAL_TREE / "submissions-self-reported"          # splicebert-1024nt.json
LEADERBOARD = OFFICIAL_TREE / "leaderboard.json"


# The seconds each test file took in a measured run (`bench/test_order.py` writes it): the files
# run slowest first, so that `pytest -n 2 --dist loadfile --no-loadscope-reorder` (`make test`)
# hands the long files out at the start and ends with short ones on both workers.
DURATIONS = json.loads((Path(__file__).parent / "durations.json").read_text())


def pytest_collection_modifyitems(items) -> None:
    """Each file's tests together, in their order; the files slowest first (DURATIONS; files
    it does not name after those it names, in collection order)."""
    def slowest_first(item) -> float:
        return -DURATIONS.get(item.nodeid.split("::")[0], 0.0)

    items.sort(key=slowest_first)


@pytest.fixture(scope="session")
def official_store(tmp_path_factory):
    """A store holding the 40 official submissions and leaderboard.json, imported once per
    session. Read-only for the tests: copy it (`shutil.copytree`) before changing anything."""
    from store.official.submission import import_files
    from store.paths import resolve_store

    paths = resolve_store(tmp_path_factory.mktemp("official") / "store")
    import_files(paths, [SUBMISSIONS, LEADERBOARD])
    return paths
