"""`geneb-engine compare STORE SUBMISSION --presets`: each recipe preset and batch size a store
holds of a submission's model compared on its own, and the one that reproduces it named.

A store holds GROVER's local rows at three variants: normalized and reference@8 one test
prediction off the official file (+1e-3 on every cell), reference@4 equal to it (the k-shot
seeds spread around the official mean). `--presets` compares each with the file and says
reference@4 reproduces it.
"""

from __future__ import annotations

import json

from tests.conftest import SUBMISSIONS
from tests.engine.test_cli_compare import reproduced_rows, run
from tests.helpers import digest
from tests.store.local_rows import local_store

OFF = 1e-3


def variant(rows: list[dict], preset: str | None, shift: float) -> list[dict]:
    return [{**r, "recipe_preset": preset, "compute_precision": "float32",
             **{m: r[m] + shift for m in ("mcc", "acc", "f1_macro")}} for r in rows]


def test_the_batch_size_that_reproduces_a_submission_is_named(tmp_path, capsys):
    rows = reproduced_rows("GROVER")
    store = local_store(tmp_path / "store", "GROVER",
                        variant(rows, None, OFF) + variant(rows, "reference@8", OFF)
                        + variant(rows, "reference@4", 0.0)).root
    before = digest(store)
    rc, out, err = run(capsys, str(store), str(SUBMISSIONS / "GROVER.json"), "--presets",
                       "--tol", "1e-9", "--json")
    assert rc == 0, err
    doc = json.loads(out)
    assert doc["reproduced_by"] == {"GROVER": ["reference@4"]}
    verdicts = {c["preset"]: (c["reproduces"], c["compared"], c["beyond"])
                for c in doc["candidates"]}
    assert verdicts == {"reference@4": (True, 900, 0), "reference@8": (False, 900, 900),
                        "normalized": (False, 900, 900)}
    assert all(abs(c["largest"] - OFF) < 1e-9 for c in doc["candidates"]
               if not c["reproduces"])
    rc, out, _ = run(capsys, str(store), str(SUBMISSIONS / "GROVER.json"), "--presets",
                     "--tol", "1e-9")
    assert rc == 0 and "GROVER: reproduced by reference@4" in out
    assert digest(store) == before          # compare only reads


def test_presets_need_a_store_and_submissions(tmp_path, capsys):
    rc, _, err = run(capsys, str(SUBMISSIONS / "GROVER.json"), str(SUBMISSIONS), "--presets")
    assert rc == 2 and "--presets compares a store with submission files" in err
    assert len(err.strip().splitlines()) == 1
