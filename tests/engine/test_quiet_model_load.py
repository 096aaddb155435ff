"""A model load through the engine prints nothing of transformers' own: no tensor-parallel
notice ("The following layers were not sharded", which transformers 5 prints whenever the
`transformers.modeling_utils` logger is set to WARNING or above), no "Loading weights" bar,
and transformers' logging is as it was afterwards."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest  # noqa: E402
from transformers.utils import logging as hf_logging  # noqa: E402

from engine.encoders import EncoderOptions, build_encoder  # noqa: E402
from engine.registry import resolve_model  # noqa: E402
from tests.engine.tiny_models import build  # noqa: E402


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    root = tmp_path_factory.mktemp("quiet")
    return {kind: build(kind, root / f"tiny-{kind}") for kind in ("bert", "llama")}


@pytest.mark.parametrize("kind", ["bert", "llama"])
def test_loading_a_model_prints_nothing_and_leaves_logging_as_it_was(checkpoints, kind, capfd):
    verbosity = hf_logging.get_verbosity()
    bars = hf_logging.is_progress_bar_enabled()
    capfd.readouterr()
    encoder = build_encoder(resolve_model(str(checkpoints[kind]), {}),
                            EncoderOptions(device="cpu"))
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")
    assert encoder.encode(["ACGTACGTAC", "GGCCA"]).shape[0] == 2
    assert hf_logging.get_verbosity() == verbosity
    assert hf_logging.is_progress_bar_enabled() == bars
