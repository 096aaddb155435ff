"""The GENEB store: everything that persists and answers questions (no torch, no engine imports)."""

__version__ = "0.1.0"   # geneb's version (pyproject.toml reads it; engine and geneb_tui use it)
