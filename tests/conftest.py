"""Fixtures shared across the test packages."""

from __future__ import annotations

import os
import tempfile

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


@pytest.fixture(scope="session")
def official_store(tmp_path_factory):
    """A store holding the 40 official submissions and leaderboard.json, imported once per
    session. Read-only for the tests: copy it (`shutil.copytree`) before changing anything."""
    from store.official.submission import import_files
    from store.paths import resolve_store

    paths = resolve_store(tmp_path_factory.mktemp("official") / "store")
    import_files(paths, [SUBMISSIONS, LEADERBOARD])
    return paths
