"""The official GENEB formats and reference data.

- `formats`: submissions (schema 1.0), `leaderboard.json` and `leaderboard_tasks.json`, read and
  validated, one `Problem(file, field, rule)` each;
- `submission`: submissions in and out of the store (import, `export --submission`);
- `leaderboard`: the official web leaderboard's two files, derived from submissions;
- `reference`: the published aggregates beside the results;
- `data`: the reference data shipped in `reference_data/` (the pinned commit's files);
- `fetch`: the submissions `import --official` reads (shipped, or downloaded).
"""
