"""Task health (`geneb-engine audit`): what a task's data give away before any model sees it.

UI-free and light (numpy and the standard library), over plain sequences and labels:
`sequences` (the one standard form of a sequence, its reverse complement, its hash),
`duplicates` (exact and reverse-complement copies within and across splits, conflicting
labels), `near` (near duplicates across splits: MinHash with LSH banding, verified exactly),
`features` (the shortcut features: length, GC, mono- and di-nucleotide composition),
`crosstask` (sequences shared between tasks), `verdict` (the rules and their thresholds) and
`report` (one task's audit as plain data). The shortcut probes are fitted by the engine
(`engine/audit.py`, the geneb-v1 probe itself); the store's table is `store/tables/audit.py`.
"""
