"""Every option that takes names refuses an unknown one: exit 2, one line on stderr naming the
option, the unknown name, the closest known names ("did you mean") and the valid values, no
traceback, and the store exactly as it was (`engine.commands.common.check_names`)."""

from __future__ import annotations

import pytest

from engine.cli import main
from engine.commands.common import StoreNames
from store.did_you_mean import check_names, suggestions
from store.paths import resolve_store
from store.vocab.errors import GenebError
from tests.engine.conftest import write_task


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    """A store with kmer-3 (full regime) on a two-category task folder, and the folder."""
    root = tmp_path_factory.mktemp("names")
    suite = root / "suite"
    suite.mkdir()
    write_task(suite / "bin_task.csv", 120, 60, 2, 1)
    write_task(suite / "tri_task.csv", 150, 60, 3, 2)
    (suite / "manifest.csv").write_text(
        "task_id,category,label\nbin_task,Promoters,Binary\ntri_task,Enhancers,Three\n")
    store = root / "store"
    assert main(["fill", "--store", str(store), "--suite", str(suite), "--models", "kmer-3",
                 "--regimes", "full"]) == 0
    return store, suite


def state(store) -> dict[str, tuple[int, int]]:
    """Every file of the store with its size and modification time."""
    return {str(p.relative_to(store)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(store.rglob("*")) if p.is_file()}


def run(*argv: str) -> int:
    """`main`'s exit status, usage errors (argparse exits) included."""
    try:
        return main(list(argv))
    except SystemExit as exc:
        return exc.code


def refused(capsys, store, *argv: str, close: str) -> str:
    before = state(store)
    capsys.readouterr()
    assert run(*argv, "--store", str(store)) == 2
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"geneb-engine {argv[0]}: ") and "Traceback" not in err
    assert "did you mean" in lines[0] and close in lines[0].split("did you mean", 1)[1], err
    assert out == ""
    assert state(store) == before
    return lines[0]


def test_every_command_taking_a_suite_gives_its_reader_each_option_it_reads():
    """`--suite` is read by one reader (`common.suite_of`), which reads options some commands
    do not take (`--data-dir`, `--subsample`, `--reference`): each such command has them or
    their defaults (`add_suite_arg`), so no `--suite` ends in a traceback (`prune --suite`
    did: its own `--suite` lacked `reference`)."""
    import argparse

    from engine.cli import build_parser
    from engine.commands.common import add_suite_arg

    probe = argparse.ArgumentParser()
    add_suite_arg(probe)
    read = {a.dest for a in probe._actions if a.dest != "help"} | set(probe._defaults)
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for name, parser in sub.choices.items():
        dests = {a.dest for a in parser._actions} | set(parser._defaults)
        if "suite" in dests:
            assert read <= dests, (name, read - dests)


@pytest.mark.parametrize("argv, close", [
    (("--models", "kmer3"), "kmer-3"),
    (("--models", "kmer-3", "--protocol", "mlp"), "mlp-h256"),
    (("--models", "kmer-3", "--tasks", "bin_tsk"), "bin_task"),
    (("--models", "kmer-3", "--regimes", "ful"), "full"),
])
def test_fill_names(filled, capsys, argv, close):
    store, suite = filled
    refused(capsys, store, "fill", "--suite", str(suite), *argv, close=close)


@pytest.mark.parametrize("argv, close", [
    (("--models", "kmer3"), "kmer-3"),
    (("--models", "KMER-3"), "kmer-3"),                    # a case-only difference
    (("--models", "GENERator-eukaryote-3b"), "GENERator-eukaryote-3b-base"),   # its display
    (("--source", "offical"), "official"),
    (("--regimes", "1shoot"), "1shot"),
    (("--category", "enhancer"), "Enhancers"),
    (("--tasks", "bin-task"), "bin_task"),
])
def test_status_names(filled, capsys, argv, close):
    store, suite = filled
    refused(capsys, store, "status", "--suite", str(suite), *argv, close=close)


@pytest.mark.parametrize("command", ["status", "tasks", "report", "fill", "prune"])
def test_suite_names(filled, capsys, command):
    store, _ = filled
    extra = ("--models", "kmer-3") if command == "fill" else ()
    line = refused(capsys, store, command, "--suite", "geneb-mni", *extra, close="geneb-mini")
    # a command that reads results also takes a suite the store has results on, by name
    reads = command in ("status", "report", "prune")
    assert line.endswith("choose from geneb-v1, geneb-mini, geneb-kinds, geneb-long, "
                         f"{'suite, ' if reads else ''}or a directory of <task_id>.csv files")


@pytest.mark.parametrize("argv, close", [
    (("--models", "kmer3"), "kmer-3"),
    (("--tasks", "tri-task"), "tri_task"),
    (("--categories", "promoters"), "Promoters"),
    (("--categories", "Histone"), "Histone Mod."),
    (("--sources", "locl"), "local"),
    (("--regimes", "10-shot"), "10shot"),
])
def test_export_csv_names(filled, tmp_path, capsys, argv, close):
    store, _ = filled
    out = tmp_path / "x.csv"
    line = refused(capsys, store, "export", "--csv", str(out), *argv, close=close)
    assert not out.exists()                # never a header-only file for a typo
    assert {"--categories": "--category"}.get(argv[0], argv[0]) in line   # the one spelling


@pytest.mark.parametrize("argv, close", [
    (("--submission", "kmer3"), "kmer-3"),
    (("--submission", "kmer-3", "--provenance", "verifed"), "verified"),
])
def test_export_submission_names(filled, tmp_path, capsys, argv, close):
    store, _ = filled
    refused(capsys, store, "export", *argv, "-o", str(tmp_path), close=close)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, close", [
    (("--source", "offical"), "official"),
    (("--regime", "10-shot"), "10shot"),
    (("--metric", "MCC"), "mcc"),
    (("--metric", "f1"), "f1_macro"),
    (("--versus", "mlp"), "mlp-h256"),
    (("--category", "promoter"), "Promoters"),
    (("--tasks", "tri-task"), "tri_task"),
])
def test_report_names(filled, capsys, argv, close):
    store, suite = filled
    refused(capsys, store, "report", "--suite", str(suite), *argv, close=close)


def test_tasks_names(filled, capsys):
    store, suite = filled
    line = refused(capsys, store, "tasks", "--suite", str(suite), "--category", "promoters",
                   close="Promoters")
    assert "choose from Promoters, Enhancers" in line     # the suite's own categories


@pytest.mark.parametrize("argv, close", [
    (("--architecture", "hyena"), "Hyena"),
    (("--tokenization", "kmer"), "k-mer"),
    (("--pretraining", "humans"), "human"),
    (("--scale", "1B"), ">1B"),
])
def test_models_names(filled, capsys, argv, close):
    store, _ = filled
    line = refused(capsys, store, "models", *argv, close=close)
    assert "choose from" in line


def test_the_message_lists_the_valid_values_or_says_where_they_are(filled):
    store, _ = filled
    names = StoreNames(resolve_store(store))
    with pytest.raises(GenebError) as small:
        names.check_sources(["offical"], option="--source")
    assert str(small.value) == (
        "--source: unknown source 'offical' (did you mean official?); choose from local, "
        "official, verified, reproduced, self-reported")
    with pytest.raises(GenebError) as large:
        names.check_models(["kmer3", "grover"])
    assert str(large.value).startswith(
        "--models: unknown model 'kmer3' (did you mean kmer-3?) and 'grover' (did you mean "
        "GROVER?); `geneb-engine models` lists the")
    assert names.check_models(["kmer-3", "GROVER"]) == ["kmer-3", "GROVER"]   # exact: fine


def test_suggestions_put_case_only_differences_first():
    known = ["kmer-3", "kmer-4", "KMER-3x", "Histone Mod.", "mlp-h256"]
    assert suggestions("KMER-3", known)[0] == "kmer-3"
    assert suggestions("histone mod.", known) == ["Histone Mod."]
    assert suggestions("mlp", known) == ["mlp-h256"]
    assert suggestions("zzz", known) == []
    with pytest.raises(GenebError, match=r"unknown regime 'x'; choose from full, 10shot"):
        check_names("regime", ["x"], ["full", "10shot"])


@pytest.mark.parametrize("argv, said", [
    (["validat"], "geneb-engine: argument COMMAND: invalid choice: 'validat' (did you mean "
                  "validate?) (choose from 'demo', 'fill', "),
    (["data", "verfy"], "geneb-engine data: argument VERB: invalid choice: 'verfy' (did you "
                        "mean verify?) (choose from 'download', 'verify', 'where', 'variants', "
                        "'long-range')"),
    (["xyz"], "geneb-engine: argument COMMAND: invalid choice: 'xyz' (choose from 'demo', "
              "'fill', "),
])
def test_a_mistyped_command_is_one_line_with_the_closest(capsys, argv, said):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.startswith(said) and len(err.splitlines()) == 1
