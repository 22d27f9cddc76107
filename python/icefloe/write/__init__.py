"""The write layer: how new files become snapshots (internal; the API is `Table`'s and
`icefloe.spark`'s). Below the `Table` façade and above scans, I/O and the model.

- `pending`: a write's scope (one write id, every file it made aborted on failure) and the
  commits of appends and overwrites; `row_delta`: the row-delta commit of merge-on-read
  changes and its isolation rules; `overwrite`: what an overwrite removes and the partial
  rewrites of copy-on-write; `lineage`: v3 row lineage carried through rewrites;
  `merge_condition`: a MERGE's ON clause as row filters and join keys; `options`: write
  options.
- Above those: `row_level` (delete / update / upsert in process), `merge` (MERGE in process
  and the merge commit Spark shares), `add_files`, `branch` (writes to a branch or tag head),
  `streaming_commit` (a streaming batch committed once).

`pyproject.toml`'s import-linter contracts hold these layers.
"""
