"""Dotted multi-part names of nested fields as Spark spells them (`s.a`, "s.`x.y`"), shared by
the Spark functions (`icefloe.spark.update`'s keys) and the in-process writes
(`Table.update`'s keys)."""

from __future__ import annotations

from collections.abc import Sequence


def multipart(key: str) -> list[str] | None:
    """A dotted key as Spark's multi-part identifier (backticks quote a part, `` is a
    backtick inside one); None when it is not one.

    Written by hand rather than with sqlglot: Spark takes keywords as unquoted parts
    (`s.select`, `s.from`), which sqlglot's Spark dialect refuses."""
    parts: list[str] = []
    i, n = 0, len(key)
    while True:
        if i < n and key[i] == "`":
            part, i = [], i + 1
            while True:
                if i >= n:
                    return None
                if key[i] == "`":
                    if i + 1 < n and key[i + 1] == "`":
                        part.append("`")
                        i += 2
                        continue
                    i += 1
                    break
                part.append(key[i])
                i += 1
            parts.append("".join(part))
        else:
            j = key.find(".", i)
            j = n if j < 0 else j
            part_text = key[i:j].strip()
            if not part_text or "`" in part_text:
                return None
            parts.append(part_text)
            i = j
        if i == n:
            return parts
        if key[i] != ".":
            return None
        i += 1


def display(path: Sequence[str]) -> str:
    """A path as Spark spells it, parts holding a dot or a backtick quoted."""
    return ".".join("`" + p.replace("`", "``") + "`" if ("." in p or "`" in p) else p for p in path)
