"""Task and model domains: the kingdom vocabulary and the in-domain rule for a (model, task).

A task names one organism (a species, `MULTIPLE` when it spans several, `UNKNOWN`) and one
kingdom (`KINGDOMS`, `MIXED` when its species span several kingdoms, `UNKNOWN`); geneb-v1's are
shipped in `catalogs/task_domains.csv` with a source for each row (`store.catalog`), a
directory suite's come from its `manifest.csv`. A model names the kingdoms it was pretrained on
and, where its pretraining data is a closed list of species (human-only, human and mouse), those
species (`store.catalog.ModelMeta.pretraining_kingdoms`, `pretraining_organisms`).

`domain` is the one rule: "in", "out" or "unknown".
"""

from __future__ import annotations

from collections.abc import Iterable

KINGDOMS: tuple[str, ...] = (
    "animals", "plants", "fungi", "protists", "bacteria", "archaea", "viruses",
)
MIXED = "mixed"          # a task whose species span several kingdoms
UNKNOWN = "unknown"      # not established (the source says why)
TASK_KINGDOMS: tuple[str, ...] = (*KINGDOMS, MIXED, UNKNOWN)
MULTIPLE = "multiple"    # a task's organism when it spans several species

IN, OUT = "in", "out"
DOMAINS: tuple[str, ...] = (IN, OUT, UNKNOWN)
# The cells of each domain, in words (`--domain`'s messages and titles).
DOMAIN_WORDS = {IN: "in their model's pretraining domain", OUT: "out of their model's "
                "pretraining domain", UNKNOWN: "of unknown domain"}


def domain(model_kingdoms: Iterable[str], model_organisms: Iterable[str],
           task_kingdom: str | None, task_organism: str | None) -> str:
    """Whether a task lies in a model's pretraining domain:

    - "unknown" when the model's kingdoms are not known (none given), or the task's kingdom is
      unknown or mixed;
    - "out" when the task's kingdom is not one of the model's;
    - when the model lists its species (a closed list: human-only, human and mouse), "in" if
      the task's organism is one of them, "out" if it is another species, "unknown" if the
      task's organism is unknown or several species;
    - "in" otherwise (the model spans the task's kingdom without a closed species list).
    """
    kingdoms, organisms = set(model_kingdoms), set(model_organisms)
    if not kingdoms or task_kingdom in (None, "", MIXED, UNKNOWN):
        return UNKNOWN
    if task_kingdom not in kingdoms:
        return OUT
    if not organisms:
        return IN
    if task_organism in (None, "", MULTIPLE, UNKNOWN):
        return UNKNOWN
    return IN if task_organism in organisms else OUT
