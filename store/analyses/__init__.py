"""The analyses of GENEB, computed from the store: each function returns a polars frame.

The layer's entry is `compute.compute`: a `question.Question` in, every frame of its answer out
(the report's, which `report --figures` draws). Its steps, which the site and the dashboard
take too: `cells` (the seed means a question covers, the per-seed rows, the scores of each
regime), `point` (the point analyses), `ranktests`, `intervals` (the bootstrap's frames),
`claims`; the presets of every reader (resamples, seed, level) are `presets`. Definitions are
in each function's docstring.

Nothing is imported here: `presets` is read before numpy and polars are loaded (the command
line's defaults, the dashboard's first frame); import each function from its module.
"""
