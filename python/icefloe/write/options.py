"""Writer options users pass to `append` / `icefloe.spark.append`, checked once.

They reach the Rust writer (`_native.write_data_files`) as keyword arguments:
`mode` ("fanout": unsorted input, one open file per partition, bounded by
`max_open_files`; "clustered": input sorted by partition, one open file; default fanout),
`max_open_files`, `sort` (sort each partition's rows by the table's sort order, spilling
sorted runs past `sort_buffer_bytes` and merging them; by default on when the table has a
sort order, as Iceberg Java's Spark writes order a sorted table's rows, `False` to write
rows in input order) and `sort_buffer_bytes`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from icefloe.exceptions import ValidationError

_TYPES: dict[str, type] = {"mode": str, "max_open_files": int, "sort": bool, "sort_buffer_bytes": int}
_MODES = ("fanout", "clustered")


def write_kwargs(options: Mapping[str, Any] | None) -> dict[str, Any]:
    """The validated keyword arguments for `write_data_files`; ValidationError naming each
    unknown option or bad value."""
    if not options:
        return {}
    problems = []
    for k, v in options.items():
        t = _TYPES.get(k)
        if t is None:
            problems.append(f"unknown write option '{k}' (known: {', '.join(sorted(_TYPES))})")
        elif not isinstance(v, t) or (t is int and isinstance(v, bool)):
            problems.append(f"write option '{k}' must be {t.__name__}, found {v!r}")
        elif k == "mode" and v not in _MODES:
            problems.append(f"write option 'mode' must be one of {_MODES}, found {v!r}")
        elif isinstance(v, int) and not isinstance(v, bool) and v <= 0:
            problems.append(f"write option '{k}' must be positive, found {v}")
    if problems:
        raise ValidationError("; ".join(problems))
    return dict(options)
