"""Did you mean: the known names closest to a name given (every option that takes names, the
engine's usage errors, a suite manifest's categories)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence

from store.vocab.errors import GenebError

LIST_UP_TO = 16     # an error lists the valid values when there are at most this many


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


def check_names(kind: str, given: Sequence[str] | None, known: Iterable[str], *,
                option: str | None = None, listing: str | None = None,
                aliases: Mapping[str, str] | None = None, quote: bool = True,
                more: str = "") -> list[str]:
    """`given` (every name matched exactly: ids are case-sensitive) when each is in `known`;
    else one GenebError naming the option, every unknown name with the closest known ones
    ("did you mean"; a case-only difference is suggested first) and the valid values (listed
    when there are at most LIST_UP_TO, else `listing`: what lists them). Every command checks
    its name options through this before it reads or writes anything else. `quote=False`
    shows the names bare (the wording `fill --tasks` has always had); `more` ends the list of
    valid values (what else the option takes)."""
    given = list(given or [])
    values = list(dict.fromkeys(known))
    valid = set(values)
    unknown = [g for g in dict.fromkeys(given) if g not in valid]
    if not unknown:
        return given
    parts = []
    for name in unknown:
        close = suggestions(name, values, aliases)
        parts.append((repr(name) if quote else name)
                     + (f" (did you mean {', '.join(close)}?)" if close else ""))
    if not values:
        hint = listing or f"there is no {kind} to choose from"
    elif len(values) <= LIST_UP_TO or not listing:
        hint = f"choose from {', '.join(values)}"
    else:
        hint = listing
    where = f"{option}: " if option else ""
    raise GenebError(f"{where}unknown {kind} {' and '.join(parts)}; {hint}{more}")
