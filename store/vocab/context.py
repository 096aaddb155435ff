"""The context policy: what of a sequence a model sees (`fill --context`, `--context-length`).

A member of a result's variant (`store.vocab.variant`, the `context_policy` column) and of the
embeddings' identity: rows of two policies never pool. Its value is None for the default, which
is what every run did before the policy existed, byte for byte:

- `crop` (the default): each sequence cut to the model's own limit (its `max_tokens`, in its own
  units) on the model's own side: the start is kept (the right end cut) by every kind but
  Enformer, which keeps the centre. Value None.
- `crop:<side>` with `--context-length N`: each sequence first cut to N nucleotides, keeping its
  `left` end (the start), its `centre` or its `right` end; then the model's own limit as always
  (a sequence still over it is cut and counted as truncated). Value `crop-<side>-<N>`. Without a
  length only the model's own side is accepted (its limit counts tokens, not nucleotides): the
  default.
- `windows:<W>:<S>`: each sequence tiled with windows of W nucleotides every S nucleotides, the
  last one ending at the sequence's end (a sequence of at most W letters is one window); each
  window embedded as a sequence of its own (the model's limit applies inside it), and the
  sequence's embedding the mean of its windows', each weighing the same (SpliceBERT's recipe,
  with any window and stride). Value `windows-<W>-<S>`.

The values use letters, digits and '-' only: they name embeddings' folders (`<split>@<value>`).
"""

from __future__ import annotations

from dataclasses import dataclass

from store.vocab.errors import GenebError

CROP, WINDOWS = "crop", "windows"
SIDES: dict[str, str] = {"left": "the start kept, the right end cut",
                         "centre": "the middle kept, both ends cut evenly",
                         "right": "the end kept, the start cut"}
# The side each encoder kind keeps today (`store.vocab.encoder_kinds` names); `left` elsewhere.
OWN_SIDE: dict[str, str] = {"enformer": "centre"}
DEFAULT_SIDE = "left"
USAGE = ("crop, crop:<side> (left, centre or right, with --context-length N) or "
         "windows:<window>:<stride> (nucleotides)")


@dataclass(frozen=True)
class ContextPolicy:
    """One run's context policy (see the module); `mode` crop or windows."""

    mode: str = CROP
    side: str | None = None       # crop: the side kept (None: the model's own)
    length: int | None = None     # crop: nucleotides kept before the model's own limit
    window: int | None = None     # windows: nucleotides per window
    stride: int | None = None     # windows: nucleotides from one window's start to the next

    def value(self, own_side: str = DEFAULT_SIDE) -> str | None:
        """The variant value of this policy for a model whose own side is `own_side`."""
        if self.mode == WINDOWS:
            return f"windows-{self.window}-{self.stride}"
        if self.length is None:
            return None
        return f"crop-{self.side or own_side}-{self.length}"


def own_side(encoder_kind: str) -> str:
    """The side an encoder kind keeps when it cuts a sequence to its limit."""
    return OWN_SIDE.get(encoder_kind, DEFAULT_SIDE)


def _count(text: str, what: str, told: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise GenebError(f"--context {told}: the {what} must be a whole number of nucleotides "
                         f"of at least 1, not {text!r}")
    return n


def parse_context(text: str | None, length: int | None = None) -> ContextPolicy:
    """The policy `fill --context TEXT --context-length N` asks for (TEXT None: crop); one
    message naming what is wrong otherwise."""
    told = text or CROP
    mode, _, rest = told.partition(":")
    if length is not None and length < 1:
        raise GenebError(f"--context-length {length}: must be at least 1 nucleotide")
    if mode == CROP:
        if rest and rest not in SIDES:
            raise GenebError(f"--context {told}: the side must be one of {', '.join(SIDES)}")
        return ContextPolicy(CROP, side=rest or None, length=length)
    if mode == WINDOWS:
        parts = rest.split(":")
        if len(parts) != 2:
            raise GenebError(f"--context {told}: windows takes a window and a stride, "
                             "windows:<window>:<stride> (nucleotides, e.g. windows:1000:500)")
        window, stride = (_count(parts[0], "window", told), _count(parts[1], "stride", told))
        if stride > window:
            raise GenebError(f"--context {told}: a stride of {stride} over a window of "
                             f"{window} leaves nucleotides no window sees")
        if length is not None:
            raise GenebError("--context-length crops; with --context windows the window is "
                             "the context: leave out --context-length")
        return ContextPolicy(WINDOWS, window=window, stride=stride)
    raise GenebError(f"--context {told}: unknown policy {mode!r}; one of {USAGE}")


def check_side(policy: ContextPolicy, model_id: str, encoder_kind: str) -> None:
    """A crop on another side than the model's own needs a length in nucleotides."""
    if policy.mode == CROP and policy.length is None and policy.side not in (
            None, own_side(encoder_kind)):
        raise GenebError(
            f"model {model_id}: --context crop:{policy.side} needs --context-length N: the "
            f"model's own limit counts tokens and it keeps the {own_side(encoder_kind)} side; "
            "a side of your choosing is cut in nucleotides")


def context_label(value: str | None) -> str:
    """How readers name a row's context policy (None: crop at the model's own limit)."""
    return CROP if value is None else value


def axis_label(context: str, length: int | None) -> str:
    """A context policy as an x axis names it (`report --figures`, the dashboard): its length in
    nucleotides and the side kept (windows: each window's, and their stride), the default crop
    (length None) as the model's own limit."""
    if length is None:
        return "own limit"
    parts = context.split("-")
    return f"{length:,} " + (f"(windows, step {int(parts[2]):,})" if parts[0] == "windows"
                             else f"({parts[1]})")
