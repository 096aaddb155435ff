"""Task and model domains: the shipped task table against the spec, the models' domain fields,
and the in-domain rule on hand-built cases."""

from __future__ import annotations

import pytest

from store.catalog import geneb_v1_domains, geneb_v1_tasks, load_models, parse_model_entries
from store.domains import IN, KINGDOMS, MULTIPLE, OUT, TASK_KINGDOMS, UNKNOWN, domain
from store.manifest import read_manifest, suite_tasks
from store.official.data import benchmark_spec, model_meta
from store.vocab.errors import GenebError

HUMAN = (["animals"], ["Homo sapiens"])
NT_LIKE = (["animals", "fungi", "protists", "bacteria"], [])


def test_the_task_table_covers_the_spec_with_a_source_for_each_task():
    table = geneb_v1_domains()
    assert sorted(table) == sorted(t["id"] for t in benchmark_spec()["tasks"])
    for task_id, row in table.items():
        assert row["source"].strip(), task_id
        assert row["kingdom"] in TASK_KINGDOMS, task_id
        assert row["organism"].strip(), task_id
        if UNKNOWN in (row["kingdom"], row["organism"]) or row["organism"] == MULTIPLE:
            assert row["note"].strip(), f"{task_id}: an unknown or multiple fact says why"


def test_geneb_v1_tasks_carry_their_domain():
    tasks = {t.task_id: t for t in geneb_v1_tasks()}
    yeast = tasks["InstaDeepAI_nucleotide_transformer_downstream_tasks_H3"]
    assert (yeast.organism, yeast.kingdom, yeast.source_benchmark) == (
        "Saccharomyces cerevisiae", "fungi", "NT")
    maize = tasks["InstaDeepAI_plant-genomic-benchmark_lncrna.z_mays"]
    assert (maize.organism, maize.kingdom, maize.source_benchmark) == ("Zea mays", "plants", "PGB")
    assert tasks["leannmlindsey_GUE_mouse_0"].organism == "Mus musculus"
    counts = {k: sum(t.kingdom == k for t in tasks.values()) for k in TASK_KINGDOMS}
    assert counts["plants"] == 10 and counts["bacteria"] == 5 and counts["unknown"] == 6


@pytest.mark.parametrize(("model", "kingdom", "organism", "expected"), [
    (HUMAN, "animals", "Homo sapiens", IN),
    (HUMAN, "animals", "Mus musculus", OUT),          # a closed species list: mouse is outside
    (HUMAN, "fungi", "Saccharomyces cerevisiae", OUT),
    (HUMAN, "animals", MULTIPLE, UNKNOWN),            # human and worm: part in, part out
    (NT_LIKE, "fungi", "Saccharomyces cerevisiae", IN),
    (NT_LIKE, "animals", MULTIPLE, IN),               # no species list: the kingdom decides
    (NT_LIKE, "plants", "Zea mays", OUT),
    (NT_LIKE, "viruses", MULTIPLE, OUT),
    (NT_LIKE, UNKNOWN, UNKNOWN, UNKNOWN),
    (NT_LIKE, "mixed", MULTIPLE, UNKNOWN),
    (([], []), "animals", "Homo sapiens", UNKNOWN),   # the model's domain not established
    ((["bacteria", "archaea", "viruses"], []), "bacteria", "Escherichia coli", IN),
])
def test_the_in_domain_rule(model, kingdom, organism, expected):
    assert domain(*model, kingdom, organism) == expected


def test_the_catalog_models_domains_and_zero_shot():
    models = load_models()
    for m in models.values():
        assert set(m.pretraining_kingdoms) <= set(KINGDOMS)
        assert not m.pretraining_kingdoms or m.domain_source, m.model_id
    meta = model_meta()
    assert {k: m.zero_shot for k, m in models.items() if k in meta} == {
        k: v["zero_shot"] for k, v in meta.items()}
    hyena = models["hyenadna-large-1m-seqlen-hf"]
    assert (hyena.pretraining_kingdoms, hyena.pretraining_organisms, hyena.context) == (
        ("animals",), ("Homo sapiens",), 1_000_000)
    assert models["kmer-3"].pretraining_kingdoms == ()
    evo = models["evo-1-131k-base"]
    assert domain(evo.pretraining_kingdoms, evo.pretraining_organisms, "animals",
                  "Homo sapiens") == OUT


def test_an_entry_with_a_kingdom_outside_the_vocabulary_is_refused():
    entry = {"model_id": "m", "hub_id": "x/m", "pretraining_kingdoms": ["mammals"]}
    with pytest.raises(GenebError, match="pretraining_kingdoms holds 'mammals'"):
        parse_model_entries([entry], "models.toml")
    with pytest.raises(GenebError, match="'pretraining_kingdoms' must be a list of strings"):
        parse_model_entries([{**entry, "pretraining_kingdoms": "animals"}], "models.toml")


def test_a_manifest_gives_organism_and_kingdom(tmp_path):
    path = tmp_path / "manifest.csv"
    path.write_text("task_id,category,organism,kingdom\n"
                    "a,Promoters,Zea mays,plants\nb,Promoters,,\n")
    tasks = suite_tasks("mine", read_manifest(path))
    assert [(t.organism, t.kingdom) for t in tasks] == [("Zea mays", "plants"),
                                                        (UNKNOWN, UNKNOWN)]
    path.write_text("task_id,category,kingdom\na,Promoters,plant\n")
    with pytest.raises(GenebError, match=r"manifest.csv, line 2: kingdom 'plant' is not one of"):
        read_manifest(path)


def test_domain_split_means_the_in_and_out_tasks_of_each_entry():
    import polars as pl

    from store.analyses.domains import domain_split

    scores = pl.DataFrame({"model": ["h", "h", "h", "h", "n"],
                           "task": ["hs", "mm", "yeast", "x", "hs"], "category": ["c"] * 5,
                           "value": [0.8, 0.4, 0.2, 0.9, 0.5]})
    flags = {("h", "hs"): IN, ("h", "mm"): OUT, ("h", "yeast"): OUT, ("h", "x"): UNKNOWN,
             ("n", "hs"): IN}
    split = domain_split(scores, lambda m, t: flags[(m, t)])
    assert split.to_dicts() == [
        {"model": "h", "in_micro": 0.8, "n_in": 1, "out_micro": pytest.approx(0.3), "n_out": 2,
         "n_unknown": 1},
        {"model": "n", "in_micro": 0.5, "n_in": 1, "out_micro": None, "n_out": 0,
         "n_unknown": 0}]


def test_a_task_catalog_written_before_the_domains_gets_the_built_in_ones(tmp_path):
    from store.paths import StorePaths
    from store.tables.catalogs import known_tasks, pair_domains, tasks_frame

    paths = StorePaths(tmp_path)
    h3 = geneb_v1_tasks()[0]
    old = tasks_frame([h3]).drop("organism", "kingdom")       # as an older catalog holds it
    row = known_tasks(paths, old).filter(task_id=h3.task_id).row(0, named=True)
    assert (row["organism"], row["kingdom"]) == ("Saccharomyces cerevisiae", "fungi")
    of = pair_domains(paths)
    assert of("hyenadna-large-1m-seqlen-hf", h3.task_id) == OUT
    assert of("nucleotide-transformer-v2-50m-multi-species", h3.task_id) == IN
    assert of("no-such-model", h3.task_id) == UNKNOWN
