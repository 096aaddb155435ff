"""The store's pins (`<store>/pins.toml`): the commit a hub repository's branch runs at, appended
to the user's file without touching what is written there, applied only where the model names
no commit of its own."""

from __future__ import annotations

import pytest

from store.catalog import ModelMeta
from store.paths import resolve_store
from store.pins import HEADER, Pin, pinned, read_pins, record_pins
from store.vocab.errors import GenebError

A, B, C = "a" * 40, "b" * 40, "c" * 40
USER = '# my note\n[[pin]]\nhub_id = "org/x"   # by hand\nbranch = "main"\ncommit = "' + A + '"'


def test_new_pins_are_appended_and_the_users_text_stays_as_written(tmp_path):
    paths = resolve_store(tmp_path / "store")
    assert read_pins(paths) == {}
    record_pins(paths, [Pin("org/y", "main", B, "by a test")])
    assert paths.pins.read_text().startswith(HEADER)
    paths.pins.write_text(USER)                          # no newline at the end
    record_pins(paths, [Pin("org/y", 'a "quoted" \\ branch\x7f', B), Pin("org/x", "main", C)])
    text = paths.pins.read_text()
    assert text.startswith(USER + "\n\n[[pin]]\n")
    assert read_pins(paths) == {
        ("org/x", "main"): Pin("org/x", "main", C),     # the last pin of a key counts
        ("org/y", 'a "quoted" \\ branch\x7f'): Pin("org/y", 'a "quoted" \\ branch\x7f', B)}
    record_pins(paths, [Pin("org/x", "main", C, "again")])      # held already: nothing written
    assert paths.pins.read_text() == text


@pytest.mark.parametrize(("text", "problem"), [
    ("[[pin]\n", "not valid TOML"),
    ("pin = 1\n", "'pin' must be a list of tables"),
    (f'[[pin]]\nhub_id = "o/x"\nbranch = "main"\ncommit = "{A[:12]}"\n',
     f"pin 1: commit '{A[:12]}' is not a commit (40 hex characters)"),
    (f'[[pin]]\nhub_id = "o/x"\ncommit = "{A}"\n', "pin 1: 'branch' must be a non-empty string"),
    (f'[[pin]]\nhub_id = "o/x"\nbranch = "main"\ncommit = "{A}"\nrevision = "v1"\n',
     "pin 1: unknown field(s) ['revision']"),
])
def test_a_broken_pins_file_is_one_line_naming_it(tmp_path, text, problem):
    paths = resolve_store(tmp_path)
    paths.pins.write_text(text)
    with pytest.raises(GenebError) as caught:
        read_pins(paths)
    assert str(caught.value).startswith(f"{paths.pins}: {problem}"), caught.value
    assert "\n" not in str(caught.value)


def test_a_pin_names_the_commit_of_its_repository_and_branch_only():
    pins = {("org/x", "main"): Pin("org/x", "main", A), ("org/x", "v2"): Pin("org/x", "v2", B)}

    def model(**fields) -> ModelMeta:
        return ModelMeta.one_off("m", **{"hub_id": "org/x", **fields})

    assert pinned(model(), pins).revision == A                      # no revision: main
    assert pinned(model(revision="main"), pins).revision == A
    assert pinned(model(revision="v2"), pins).revision == B
    assert pinned(model(revision="v3"), pins).revision == "v3"      # no pin of v3
    assert pinned(model(revision=C), pins).revision == C            # its own commit wins
    assert pinned(model(hub_id="org/other"), pins).revision is None
    assert pinned(model(path="/ckpt"), pins).revision is None       # a folder runs as it is
