"""geneb-tui: the terminal dashboard over the GENEB store (reads the store, never computes)."""
