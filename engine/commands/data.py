"""`geneb-engine data download | verify | where | variants | long-range`: the geneb-v1 task
data, and public variant-effect and long-range sets turned into a folder suite.

`download` fetches the pinned revision of the official dataset (`DeepPavlov/geneb-tasks`, else
its mirror `darlednik/geneb-tasks`) with huggingface_hub into
`<store>/data/geneb-v1/<revision>/` (`StorePaths.data_dir`; or `--data-dir`); an interrupted
download resumes; every file's sha256 goes into `geneb-data.json`. Offline, it says what to
download and where to put it, once the hub has not answered one short request (about 2 s).
`verify` checks every file against its recorded sha256, then reads
every task as `fill` does: a task that cannot be read is a problem too, and it shows how many
sequences of each task hold IUPAC codes, U, lower case or other letters. It records each
geneb-v1 task's letter counts and profile (class balance, sequence lengths:
`store.catalog.TaskProfile`) in the task catalog of the store, where the store exists
(`geneb-engine tasks` shows them).
`variants` reads files of TraitGym, BEND or the Genomics Long-Range Benchmark
(`engine.variant_sets`) and writes them as a folder suite of variant tasks given by coordinates
(`-o DIR`, an output folder: `store.output_folder`), to fill with `--reference`.
`long-range` likewise writes the Genomics Long-Range Benchmark's and DNALongBench's element
files (`engine.interval_sets`) as classification or regression tasks given by genome intervals.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from engine.commands.common import console, emit_json, positive_int, store_of
from engine.encoders.hub import hub_problem
from engine.hub_data import (
    DATA_MANIFEST,
    DATASET_REPO,
    MIRROR_REPO,
    PINNED_REVISION,
    data_dir_for,
    read_data_manifest,
    verify_data,
    write_data_manifest,
)
from engine.interval_sets import CHROMATIN_BIN, CHROMATIN_LABELS, read_long_range
from engine.interval_sets import FORMATS as INTERVAL_FORMATS
from engine.task_files import task_sources
from engine.variant_sets import FORMATS, HUB, HUB_PREFIX, read_variants, suite_files
from store.catalog import LetterCounts, TaskProfile, geneb_v1_tasks
from store.csv_in import RowProblems
from store.output_folder import output_folder, write_output
from store.paths import store_named
from store.vocab.errors import GenebError
from store.vocab.ids import check_id
from store.vocab.kinds import SEVERAL_TARGETS, TaskKind

VARIANTS_GENERATOR = "geneb-engine data variants"
LONG_RANGE_GENERATOR = "geneb-engine data long-range"


def register(sub, common) -> None:
    p = sub.add_parser("data", parents=[common], help="download and check the geneb-v1 task data")
    verbs = p.add_subparsers(dest="verb", required=True, metavar="VERB")
    d = verbs.add_parser("download", parents=[common],
                         help=f"fetch {DATASET_REPO} at the pinned revision (resumable)")
    d.add_argument("--revision", default=PINNED_REVISION,
                   help=f"dataset revision (default: the pinned geneb-v1 one, {PINNED_REVISION})")
    d.add_argument("--data-dir", metavar="PATH",
                   help="download here instead of <store>/data/geneb-v1/<revision>")
    d.set_defaults(handler=download)
    v = verbs.add_parser("verify", parents=[common],
                         help="check the downloaded files against their recorded sha256")
    v.add_argument("--revision", default=PINNED_REVISION)
    v.add_argument("--data-dir", metavar="PATH")
    v.set_defaults(handler=verify)
    w = verbs.add_parser("where", parents=[common],
                         help="where geneb-v1 data is looked for, and what is there")
    w.add_argument("--revision", default=PINNED_REVISION)
    w.add_argument("--data-dir", metavar="PATH")
    w.set_defaults(handler=where)
    x = verbs.add_parser("variants", parents=[common],
                         help="write TraitGym, BEND or Long-Range Benchmark variant files as a "
                              "folder suite (fill it with --reference)")
    x.add_argument("--format", required=True, choices=sorted(FORMATS),
                   help="the files' format: traitgym (its test.parquet tables), bend (its "
                        "variant_effects_*.bed), lrb (the Long-Range Benchmark's variant CSVs)")
    _suite_args(x, "that file of the set's Hugging Face dataset at its pinned revision "
                "(traitgym, lrb)", "the width of each variant's window in bases (the "
                "manifest's window)", "; needed for traitgym, which has no split")
    x.set_defaults(handler=variants)
    r = verbs.add_parser("long-range", parents=[common],
                         help="write Long-Range Benchmark or DNALongBench interval files as a "
                              "folder suite (fill it with --reference)")
    r.add_argument("--format", required=True, choices=sorted(INTERVAL_FORMATS),
                   help="the files' format: lrb (the Long-Range Benchmark's element CSVs, "
                        "e.g. regulatory_elements/promoter_dataset.csv), dnalongbench (its "
                        "enhancer-target gene TSV)")
    r.add_argument("--kind", choices=("classification", "regression", "tracks", "multilabel"),
                   default="classification",
                   help="the tasks' kind (default classification); tracks: the Long-Range "
                        "Benchmark's bulk RNA expression folder (TASK=bulk_rna_expression/ "
                        "or hub:bulk_rna_expression), one target per tissue; multilabel: its "
                        "chromatin features file (chromatin_features/histones_and_dnase.csv), "
                        "one label per mark, with --labels")
    r.add_argument("--labels", choices=CHROMATIN_LABELS, type=str.lower,
                   help="--kind multilabel: the chromatin features' label column: histones "
                        "(the histone marks task) or dnase (DNA accessibility)")
    _suite_args(r, "that file of the Long-Range Benchmark's Hugging Face dataset at its pinned "
                "revision (lrb)", "take this many bases centred on each interval (the "
                "Long-Range Benchmark's sequence_length; default: the interval as given)")
    r.set_defaults(handler=long_range)


def _suite_args(p, hub: str, window: str, chroms: str = "") -> None:
    """The arguments of a verb writing a folder suite of tasks over a genome: TASK=FILE..,
    --window (required where `chroms` is said, i.e. for variants), --test-chroms, -o."""
    p.add_argument("tasks", nargs="+", metavar="TASK=FILE",
                   help="a task id and the file it is read from (CSV, TSV/BED or Parquet); "
                        f"FILE hub:<path> downloads {hub}")
    p.add_argument("--window", type=positive_int, required=bool(chroms), metavar="BASES",
                   help=window)
    p.add_argument("--test-chroms", nargs="+", metavar="CHROM",
                   help="the chromosomes held out as the test split (the files' split column, "
                        f"if any, is then not read){chroms}")
    p.add_argument("-o", "--output", required=True, metavar="DIR",
                   help="the folder to write the suite into (its <task>.csv files and "
                        "manifest.csv)")


def offline_message(repo: str, revision: str, target: Path, reason: str) -> str:
    return (
        f"cannot download dataset {repo} at revision {revision} ({reason}). On a machine with "
        f"internet run `hf download {repo} --repo-type dataset --revision {revision} "
        f"--local-dir <folder>` (or the harness's downloader), then copy the folder to "
        f"{target} (it must hold tasks/<task_id>/train.csv and test.csv) or pass "
        f"--data-dir <folder> to fill; flat <task_id>.csv files (text,label,split) work too")


def _snapshot(repo: str, revision: str, target: Path) -> None:
    from huggingface_hub import snapshot_download  # lazy: huggingface_hub

    snapshot_download(repo_id=repo, repo_type="dataset", revision=revision, local_dir=target,
                      allow_patterns=["tasks/*/*.csv", "*.md", "*.json"])


def fetch(target: Path, revision: str = PINNED_REVISION) -> dict:
    """Download (or resume) the snapshot into `target` and record its checksums. Whether the
    hub may be asked is the run's one decision (`engine.encoders.hub.hub_problem`: HF_HUB_OFFLINE,
    or one request that must be answered within REACH_TIMEOUT_S), made before the download, whose
    own retries would take about a minute to give up on a hub that cannot be reached."""
    from huggingface_hub import errors  # lazy: huggingface_hub


    if (problem := hub_problem()) is not None:
        raise GenebError(offline_message(DATASET_REPO, revision, target, problem))
    target.mkdir(parents=True, exist_ok=True)
    reasons = []
    for repo in (DATASET_REPO, MIRROR_REPO):
        try:
            _snapshot(repo, revision, target)
        except (errors.RepositoryNotFoundError, errors.RevisionNotFoundError,
                errors.GatedRepoError) as exc:
            reasons.append(f"{repo}: {type(exc).__name__}")
            continue
        except (errors.OfflineModeIsEnabled, errors.LocalEntryNotFoundError, OSError,
                errors.HfHubHTTPError) as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            reasons.append(f"{repo}: {first}")
            continue
        except Exception as exc:    # httpx connection errors and the like
            if "connect" in type(exc).__name__.lower() or "timeout" in type(exc).__name__.lower():
                reasons.append(f"{repo}: {type(exc).__name__}")
                continue
            raise
        manifest = write_data_manifest(target, repo, revision)
        if manifest["n_tasks"] == 0:
            raise GenebError(f"{target}: the download holds no tasks/<task_id>/ folders; check "
                             f"the revision ({revision})")
        return manifest
    if target.is_dir() and not any(target.iterdir()):
        target.rmdir()          # leave no empty snapshot folder behind
    raise GenebError(offline_message(DATASET_REPO, revision, target, "; ".join(reasons)))


def download(args) -> int:
    # With --data-dir it writes only there: the store is checked, never read.
    paths = store_of(args, write=True) if args.data_dir is None else \
        store_named(args.store, write=False)
    target = data_dir_for(paths, args.data_dir, args.revision, check="creatable")
    manifest = fetch(target, args.revision)
    summary = {"data_dir": str(target), "dataset": manifest["dataset"],
               "revision": manifest["revision"], "n_tasks": manifest["n_tasks"],
               "n_files": len(manifest["files"]), "manifest": str(target / DATA_MANIFEST)}
    if args.json:
        emit_json(summary)
    else:
        console.print(f"geneb-v1 data: {summary['n_tasks']} tasks, {summary['n_files']} files "
                      f"from {summary['dataset']}@{summary['revision'][:12]} in {target} "
                      f"(checksums in {DATA_MANIFEST})")
    return 0


def verify(args) -> int:
    paths = store_of(args)
    target = data_dir_for(paths, args.data_dir, args.revision, check="folder")
    bad = verify_data(target)
    letters, profiles, unread = read_tasks(target)
    if paths.root.is_dir() and letters:
        record(paths, letters, profiles)
    if args.json:
        emit_json({"data_dir": str(target), "problems": bad + unread,
                   "letters": {t: asdict(c) for t, c in letters.items()}})
        return 1 if bad or unread else 0
    if bad:
        console.print(f"{len(bad)} file(s) differ from {target / DATA_MANIFEST}:")
        for line in bad[:50]:
            console.print(f"  {line}")
    else:
        console.print(f"{target}: every file matches its recorded checksum")
    if unread:
        console.print(f"{len(unread)} task(s) cannot be read:")
        for line in unread:
            console.print(f"  {line}")
    held = {t: c.summary() for t, c in letters.items() if c.summary()}
    if held:
        console.print(f"{len(held)} of {len(letters)} task(s) hold sequences with letters other "
                      "than upper-case ACGTN:")
        for task_id, summary in held.items():
            console.print(f"  {task_id}: {summary}")
    elif letters:
        console.print(f"{len(letters)} task(s) read: every sequence is upper-case ACGTN")
    return 1 if bad or unread else 0


def read_tasks(root: Path) -> tuple[dict[str, LetterCounts], dict[str, TaskProfile], list[str]]:
    """Every task of `root` read as `fill` reads it: letter counts and profile by task, and a
    problem line for each task that cannot be read."""
    letters, profiles, unread = {}, {}, []
    for task_id, load in task_sources(root).items():
        try:
            data = load()
        except GenebError as exc:
            unread.append(f"task {task_id}: {exc}")
            continue
        letters[task_id], profiles[task_id] = data.letters, data.profile
    return letters, profiles, unread


def record(paths, letters: dict[str, LetterCounts], profiles: dict[str, TaskProfile]) -> None:
    """The letter counts and profiles of the geneb-v1 tasks read, into the store's task
    catalog (a task's data hash stays what `fill` recorded)."""
    from store.tables.catalogs import register_tasks  # lazy: polars, pyarrow

    register_tasks(paths, [t for t in geneb_v1_tasks() if t.task_id in letters],
                   letters=letters, profiles=profiles)


def where(args) -> int:
    target = data_dir_for(store_of(args), args.data_dir, args.revision, check="folder")
    n = len(task_sources(target)) if target.is_dir() else 0
    manifest = read_data_manifest(target) if target.is_dir() else None
    info = {"data_dir": str(target), "n_tasks": n,
            "revision": manifest["revision"] if manifest else None}
    if args.json:
        emit_json(info)
    else:
        rev = f", revision {info['revision']}" if info["revision"] else ""
        console.print(f"{target}: {n} task(s){rev}")
    return 0


def variants(args) -> int:
    """Read each TASK=FILE of `--format` and write the tasks as one folder suite into `-o`:
    every file's problems in one message, nothing written before all are read."""
    out, given = _suite_output(args, VARIANTS_GENERATOR,
                               "mendelian=mendelian_traits_matched_9/test.parquet")
    tasks = _read_each(given, lambda file: read_variants(file, args.format,
                                                         bool(args.test_chroms)))
    files = suite_files(tasks, args.window, tuple(args.test_chroms or ()) or None,
                        {t: _source(args.format, f) for t, f in given.items()})
    write_output(out, files, last="manifest.csv")
    n = sum(len(rows) for rows in tasks.values())
    if args.json:
        emit_json({"output": str(out.path), "tasks": {t: len(r) for t, r in tasks.items()}})
    else:
        console.print(f"{len(tasks)} variant task(s), {n} variants, written to {out.path}; fill "
                      f"them with `geneb-engine fill --suite {out.path} --reference "
                      "<genome.fa>`", markup=False, highlight=False)
    return 0


def _suite_output(args, generator: str, example: str):
    """The output folder `-o` (`store.output_folder`) and each TASK=FILE of the command line
    (task id -> a path, or a `hub:` name), checked before anything is read."""
    out = output_folder("-o", args.output, generator=generator,
                        store=store_named(args.store, write=False),
                        is_for="give a new folder for the suite")
    given: dict[str, Path | str] = {}
    for spec in args.tasks:
        task, eq, file = spec.partition("=")
        if not eq or not file:
            raise GenebError(f"{spec!r}: give each task as TASK=FILE (e.g. {example})")
        check_id("task", task, spec)
        if task in given:
            raise GenebError(f"task {task} is given twice; give each task once")
        given[task] = file if file.startswith(HUB_PREFIX) else Path(file).expanduser()
    return out, given


def _read_each(given: dict[str, Path | str], read) -> dict:
    """`read` of each task's file: every file's problems in one message."""
    tasks, errors = {}, []
    for task, file in given.items():
        try:
            tasks[task] = read(file)
        except GenebError as exc:
            errors.append(exc)
    if errors:
        raise RowProblems.merged(errors)
    return tasks


def long_range(args) -> int:
    """Read each TASK=FILE of `--format` (`engine.interval_sets`) and write the tasks as one
    folder suite of tasks given by genome intervals into `-o`: every file's problems in one
    message, nothing written before all are read."""
    kind = TaskKind(args.kind)
    if kind in SEVERAL_TARGETS and args.window is None:
        raise GenebError(f"--kind {kind}: each row's sequence is a window centred on its "
                         "position; give its width with --window (the Long-Range Benchmark's "
                         "sequence_length, 100000 by default there)")
    if args.labels is not None and kind is not TaskKind.MULTILABEL:
        raise GenebError(f"--labels {args.labels} names the chromatin features' label column; "
                         "it goes with --kind multilabel")
    if kind is TaskKind.MULTILABEL and args.window < CHROMATIN_BIN:
        raise GenebError(f"--window {args.window}: the chromatin features' labels describe the "
                         f"{CHROMATIN_BIN} bases around each position; give --window "
                         f"{CHROMATIN_BIN} or more (the Long-Range Benchmark's loader refuses "
                         "less)")
    out, given = _suite_output(args, LONG_RANGE_GENERATOR,
                               "promoter=hub:regulatory_elements/promoter_dataset.csv")
    read = _read_each(given, lambda file: read_long_range(file, args.format, kind,
                                                          bool(args.test_chroms), args.labels))
    files = suite_files({t: r.rows for t, r in read.items()}, args.window,
                        tuple(args.test_chroms or ()) or None,
                        {t: _source(args.format, f) for t, f in given.items()}, kind,
                        columns=next(iter(read.values())).columns)
    write_output(out, files, last="manifest.csv")
    n = sum(len(r.rows) for r in read.values())
    left = {f"{t}: {', '.join(f'{c} {why}' for why, c in r.left_out.items())}"
            for t, r in read.items() if r.left_out}
    if args.json:
        emit_json({"output": str(out.path), "tasks": {t: len(r.rows) for t, r in read.items()},
                   "left_out": {t: r.left_out for t, r in read.items()}})
    else:
        for line in sorted(left):
            console.print(f"left out: {line}", markup=False, highlight=False)
        console.print(f"{len(read)} {kind} task(s), {n} intervals, written to {out.path}; "
                      f"fill them with `geneb-engine fill --suite {out.path} --reference "
                      "<genome.fa>`", markup=False, highlight=False)
    return 0


def _source(fmt: str, file: Path | str) -> str:
    """Where a task's variants came from, as its manifest label says it."""
    if isinstance(file, str):
        repo, revision = HUB[fmt]
        return f"{fmt}: {repo}@{revision[:12]} {file[len(HUB_PREFIX):]}"
    return f"{fmt}: {file.name}"
