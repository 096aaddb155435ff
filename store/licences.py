"""Which licences permit commercial use: the one rule behind `models`, the dashboard, the site,
`export` and `recommend --licence-allows commercial` / `--licence`.

A catalog model records the licence of its weights and of its code (`ModelMeta.weights_licence`,
`code_licence`: an SPDX id where one applies, else the licence's name, else `unknown`; `none`
for the weights of a model that has none, the k-mer baselines), with where each was read
(`licence_source`). A model is usable commercially only when both are known and each permits it.

The table (`COMMERCIAL`) holds the SPDX ids met in the catalog and their close kin, read from
the licences themselves:

- permissive and copyleft open-source licences (Apache-2.0, MIT, the BSD licences, the GPL
  family) allow commercial use: the Open Source Definition forbids restricting a field of
  endeavour, business included (copyleft adds conditions on redistribution, not on use);
- CC-BY-4.0 and CC0-1.0 allow it; the Creative Commons "NC" licences (CC-BY-NC-*, e.g.
  CC-BY-NC-SA-4.0 of the Nucleotide Transformer weights) permit non-commercial use only, as
  PolyForm Noncommercial 1.0.0 (the DNAGPT code) does by its name and purpose.

Any other name (a custom licence, a licence file without an SPDX id) is `CHECK`: the terms must
be read by the user, so no constraint counts it as allowed; `unknown` is said to be unknown.
"""

from __future__ import annotations

UNKNOWN = "unknown"     # no licence found in a public record (the entry says what was checked)
NO_WEIGHTS = "none"     # a model without weights (the k-mer baselines)

ALLOWED = "allowed"
NOT_ALLOWED = "not allowed"
CHECK = "check the terms"

# SPDX id -> whether it permits commercial use (see the module).
COMMERCIAL: dict[str, bool] = {
    "Apache-2.0": True, "MIT": True, "BSD-2-Clause": True, "BSD-3-Clause": True,
    "GPL-2.0-only": True, "GPL-3.0-only": True, "GPL-3.0-or-later": True,
    "LGPL-3.0-only": True, "AGPL-3.0-only": True, "MPL-2.0": True,
    "CC-BY-4.0": True, "CC0-1.0": True,
    "CC-BY-NC-4.0": False, "CC-BY-NC-SA-4.0": False, "CC-BY-NC-ND-4.0": False,
    "PolyForm-Noncommercial-1.0.0": False,
}
_BY_KEY = {k.lower(): k for k in COMMERCIAL}


def spdx(licence: str | None) -> str | None:
    """The SPDX id of the table that `licence` names (any case), else None."""
    return _BY_KEY.get((licence or "").strip().lower())


def commercial_use(licence: str | None) -> str:
    """Whether `licence` permits commercial use: ALLOWED, NOT_ALLOWED, CHECK (a licence the
    table does not hold) or UNKNOWN (none recorded); a model without weights (NO_WEIGHTS) is
    ALLOWED: there is nothing to licence."""
    text = (licence or "").strip()
    if not text or text.lower() == UNKNOWN:
        return UNKNOWN
    if text.lower() == NO_WEIGHTS:
        return ALLOWED
    known = spdx(text)
    if known is None:
        return CHECK
    return ALLOWED if COMMERCIAL[known] else NOT_ALLOWED


def licence_text(weights: str | None, code: str | None) -> str:
    """A model's licences in one short cell: 'Apache-2.0' when both are, else
    'weights X, code Y' ('unknown' where not recorded)."""
    w, c = weights or UNKNOWN, code or UNKNOWN
    return w if w == c else f"weights {w}, code {c}"


def commercial_problems(weights: str | None, code: str | None) -> list[str]:
    """Why a model with these licences cannot be said to permit commercial use, one phrase per
    licence ([] when both do)."""
    out = []
    for what, licence in (("weights", weights), ("code", code)):
        verdict = commercial_use(licence)
        if verdict == UNKNOWN:
            out.append(f"{what} licence unknown")
        elif verdict == NOT_ALLOWED:
            out.append(f"{what} licence {licence} does not permit commercial use")
        elif verdict == CHECK:
            out.append(f"{what} licence {licence}: check the terms")
    return out


def allowed_problems(weights: str | None, code: str | None, allowed: tuple[str, ...]
                     ) -> list[str]:
    """Why a model with these licences is outside the `allowed` list (SPDX ids or names, any
    case), one phrase per licence ([] when both are in it; weights `none` always are)."""
    wanted = {a.strip().lower() for a in allowed}
    out = []
    for what, licence in (("weights", weights), ("code", code)):
        text = (licence or "").strip()
        if not text or text.lower() == UNKNOWN:
            out.append(f"{what} licence unknown")
        elif text.lower() == NO_WEIGHTS and what == "weights":
            continue
        elif text.lower() not in wanted:
            out.append(f"{what} licence {text} not in {', '.join(allowed)}")
    return out
