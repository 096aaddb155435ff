"""`geneb-engine site`: a static leaderboard site built from a store. `data` computes the
site's one document (with the report's functions), `build` writes it with the page templates
of `templates/` into a folder, atomically."""
