"""The GENEB store: everything that persists and answers questions (no torch, no engine imports)."""
