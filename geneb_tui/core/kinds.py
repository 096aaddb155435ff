"""Which of the dashboard's views read classification results only as yet (`not_shown`: one
line is said instead of showing classification numbers for a selection of another task kind,
`store.vocab.kinds`). Imported at start-up: the standard library and the vocabulary only."""

from __future__ import annotations

from store.vocab.kinds import CLASSIFICATION

# The views that read classification results only as yet, and the command that answers for the
# other kinds (its `--kind`), or what to do instead.
CLASSIFICATION_ONLY: dict[str, str] = {
    "significance": "Significance reads classification results only as yet: "
                    "`geneb-engine report --kind {kind}` gives the rank tests of {kind} tasks",
    "recommend": "Recommend reads classification results only as yet: "
                 "`geneb-engine recommend --kind {kind}` answers for {kind} tasks",
    "missing": "Missing evaluations lists classification cells only as yet: "
               "`geneb-engine fill --suite SUITE` computes the missing {kind} cells",
}


def not_shown(view: str, kind: str) -> str | None:
    """The one line said instead of `view` (a key of CLASSIFICATION_ONLY) for a selection of
    `kind`; None where the view shows that kind."""
    line = CLASSIFICATION_ONLY.get(view)
    return None if line is None or kind == CLASSIFICATION else line.format(kind=kind)


def marks_apply(kind: str) -> bool:
    """Whether the tasks' easy / hard / high-variance marks apply to `kind`: their thresholds
    (`store.analyses.difficulty`) are MCC's, so they are left out for the other kinds."""
    return kind == CLASSIFICATION


def no_marks_note(kind: str) -> str:
    """What a tasks table of `kind` says instead of the marks' thresholds."""
    return (f"no easy / hard / high-var marks (their thresholds are MCC's, not {kind} "
            "tasks')")
