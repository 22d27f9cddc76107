"""Commits: how every change to a table lands.

- `retry`: the optimistic commit loop (build from the base, swap through the catalog, on a
  conflict refresh and rebuild, with Iceberg's `commit.retry.*` backoff).
- `target`: where a table object's commits land and what its operations see (`main`, a
  branch, a streaming batch's guarded view, a staged create), as small objects a `Table`
  holds instead of `Table` subclasses.

This layer knows `Table` only for type checking: it works on a table's base (identifier,
metadata, metadata location) and its target.
"""
