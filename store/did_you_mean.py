"""Did you mean: the known names closest to a name given (every option that takes names, the
engine's usage errors, a suite manifest's categories)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping


def suggestions(name: str, known: Iterable[str], aliases: Mapping[str, str] | None = None,
                n: int = 3) -> list[str]:
    """Up to `n` known names close to `name`, best first: the same name but for case, names
    it begins or is a part of, then difflib's closest (case-folded). `aliases` maps other
    spellings (a model's display name) to the name to suggest."""
    folded: dict[str, list[str]] = {}
    for k in known:
        folded.setdefault(k.casefold(), []).append(k)
    for alias, target in (aliases or {}).items():
        folded.setdefault(alias.casefold(), []).append(target)
    key = name.casefold()
    out = list(folded.get(key, []))
    if len(key) >= 2:   # what it begins (f1 -> f1_macro), and from 3 characters is part of
        out += [k for f, ks in folded.items() if f != key and f.startswith(key) for k in ks]
    if len(key) >= 3:
        out += [k for f, ks in folded.items() if f != key and key in f for k in ks]
    close = difflib.get_close_matches(key, list(folded), n=n, cutoff=0.6)
    if close:   # only those about as close as the closest: 'kmer3' -> kmer-3, not kmer-4
        best = difflib.SequenceMatcher(None, key, close[0]).ratio()
        out += [k for f in close if difflib.SequenceMatcher(None, key, f).ratio() >= best - 0.1
                for k in folded[f]]
    return list(dict.fromkeys(out))[:n]
