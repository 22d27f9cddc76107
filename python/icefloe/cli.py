"""The `icefloe` command: look at and maintain Iceberg tables without a JVM.

    icefloe [--catalog NAME] [--uri URI] [--warehouse W] [--json] [--verbose] COMMAND ...

Commands: list [NAMESPACE], describe TABLE|NAMESPACE, schema, spec, uuid, location,
snapshots, history, files, partitions, refs (alias list-refs), properties get|set|remove,
expire-snapshots, remove-orphans, compact, rewrite-manifests, rollback, version.

Catalogs come from `~/.icefloe.yaml` or PyIceberg's `~/.pyiceberg.yaml` (same shape:
`catalog: {NAME: {uri: ..., warehouse: ..., type: ...}}`, optional `default-catalog`),
looked for in `$ICEFLOE_HOME` / `$PYICEBERG_HOME`, the home folder and the working folder;
`--uri` and `--warehouse` override (alone, `--warehouse W` is the filesystem catalog at W).
Where it overlaps with the `pyiceberg` command it answers to the same words. Errors go to
stderr with exit code 1 (2 for a malformed command line), with a traceback only under
`--verbose`.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from icefloe._cli_output import JsonOutput, Output, TextOutput

if TYPE_CHECKING:
    from icefloe.catalog import Catalog
    from icefloe.table import Table

__all__ = ["load_config", "main"]

CONFIG_FILES = (".icefloe.yaml", ".pyiceberg.yaml")


class CliError(Exception):
    """A user-facing failure of a command (bad argument, missing property, ...)."""


# ---------------------------------------------------------------- configuration
def _config_dirs() -> list[Path]:
    dirs = []
    for var in ("ICEFLOE_HOME", "PYICEBERG_HOME"):
        if os.environ.get(var):
            dirs.append(Path(os.environ[var]))
    dirs += [Path.home(), Path.cwd()]
    return dirs


def load_config() -> tuple[dict[str, Any], list[Path]]:
    """The catalogs of every config file found (`.icefloe.yaml` before `.pyiceberg.yaml`,
    `$ICEFLOE_HOME`/`$PYICEBERG_HOME` before home before the working folder; the first file
    naming a catalog wins) and the files read. `default-catalog` from the first file that
    sets it."""
    import yaml

    merged: dict[str, Any] = {"catalog": {}}
    read: list[Path] = []
    seen: set[Path] = set()
    for name in CONFIG_FILES:
        for d in _config_dirs():
            path = (d / name).resolve()
            if path in seen or not path.is_file():
                continue
            seen.add(path)
            try:
                doc = yaml.safe_load(path.read_text()) or {}
            except yaml.YAMLError as e:
                raise CliError(f"cannot parse config file {path}: {e}") from None
            if not isinstance(doc, dict):
                raise CliError(
                    f"config file {path}: expected a mapping at the top, found {type(doc).__name__}"
                )
            catalogs = doc.get("catalog") or {}
            if not isinstance(catalogs, dict):
                raise CliError(f"config file {path}: 'catalog' must map catalog names to their properties")
            for cname, props in catalogs.items():
                if not isinstance(props, dict):
                    raise CliError(f"config file {path}: catalog {cname!r} must be a mapping of properties")
                merged["catalog"].setdefault(str(cname).lower(), {str(k): str(v) for k, v in props.items()})
            if "default-catalog" in doc and "default-catalog" not in merged:
                merged["default-catalog"] = str(doc["default-catalog"])
            read.append(path)
    return merged, read


def _env_properties(name: str) -> dict[str, str]:
    """`PYICEBERG_CATALOG__<NAME>__<KEY>` (then `ICEFLOE_CATALOG__...`, which wins), read as
    PyIceberg's `Config` reads them: case-insensitive, and in `<KEY>` a `__` is `.` and a `_`
    is `-` (`..._S3__ACCESS_KEY_ID` is `s3.access-key-id`)."""
    out: dict[str, str] = {}
    for prefix in ("pyiceberg_", "icefloe_"):
        for k, v in os.environ.items():
            key = k.lower()
            if not key.startswith(prefix):
                continue
            parts = key[len(prefix) :].split("__", maxsplit=2)
            if len(parts) == 3 and parts[0] == "catalog" and parts[1].replace("_", "-") == name.lower():
                out[parts[2].replace("__", ".").replace("_", "-")] = v
    return out


def catalog_properties(args: argparse.Namespace) -> tuple[str, dict[str, str]]:
    if args.warehouse and not args.uri and not args.catalog:
        # `--warehouse W` alone: the filesystem catalog at W, whatever the config file says.
        return "default", {"type": "filesystem", "warehouse": args.warehouse}
    config, files = load_config()
    name = args.catalog or config.get("default-catalog") or "default"
    props = dict(config["catalog"].get(name.lower(), {}))
    props.update(_env_properties(name))
    if args.uri:
        props["uri"] = args.uri
    if args.warehouse:
        props["warehouse"] = args.warehouse
        if not args.uri and "uri" not in props:
            props.setdefault("type", "filesystem")
    if not props:
        where = ", ".join(str(f) for f in files) or "no config file found"
        if args.catalog:
            raise CliError(f"catalog {name!r} is not configured ({where})")
        raise CliError(
            "no catalog: give --warehouse W (filesystem catalog), --uri URI, or --catalog NAME "
            f"configured in ~/.icefloe.yaml or ~/.pyiceberg.yaml ({where})"
        )
    return name, props


def _load_catalog(args: argparse.Namespace) -> Catalog:
    from icefloe.catalog import load_catalog

    name, props = catalog_properties(args)
    return load_catalog(name, **props)


# ---------------------------------------------------------------- helpers
def _ms_to_iso(ms: int | None) -> str | None:
    if ms is None:
        return None
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.timezone.utc).isoformat(timespec="milliseconds")


_AGE = re.compile(r"^(\d+)\s*(ms|s|m|h|d|w)$")
_AGE_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_time(text: str) -> dt.datetime:
    """`--older-than`: an ISO-8601 date or time (UTC unless it names an offset), epoch
    milliseconds, or an age before now such as `7d`, `12h`, `30m`."""
    t = text.strip()
    m = _AGE.match(t)
    if m:
        return dt.datetime.now(dt.timezone.utc) - dt.timedelta(
            seconds=int(m.group(1)) * _AGE_UNITS[m.group(2)]
        )
    if t.isdigit():
        return dt.datetime.fromtimestamp(int(t) / 1000, tz=dt.timezone.utc)
    try:
        parsed = dt.datetime.fromisoformat(t.replace("Z", "+00:00"))
    except ValueError:
        raise CliError(
            f"cannot read time {text!r}: expected an ISO-8601 time (2026-11-20T10:00:00Z), "
            "epoch milliseconds, or an age such as 7d, 12h, 30m"
        ) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.timezone.utc)


def _result_fields(result: Any) -> dict[str, Any]:
    if dataclasses.is_dataclass(result) and not isinstance(result, type):
        return dataclasses.asdict(result)
    if isinstance(result, Mapping):
        return dict(result)
    return {"result": result}


def _arrow_rows(table: Any) -> tuple[list[str], list[dict[str, Any]]]:
    return list(table.column_names), table.to_pylist()


# ---------------------------------------------------------------- commands
def cmd_list(cat: Catalog, out: Output, args: argparse.Namespace) -> None:
    idents: list[tuple[str, ...]] = []
    if args.namespace:
        idents = list(cat.list_tables(args.namespace))
    if not idents:
        idents = list(cat.list_namespaces(args.namespace or ()))
    out.identifiers(idents)


def _table_view(t: Table) -> tuple[dict[str, Any], dict[str, Any]]:
    md = t.metadata
    snap = t.current_snapshot()
    text = {
        "Table format version": md.format_version,
        "Metadata location": t.metadata_location,
        "Table UUID": md.table_uuid,
        "Last Updated": md.last_updated_ms,
        "Partition spec": str(t.spec()),
        "Sort order": str(t.sort_order()),
        "Current schema": [f"Schema, id={md.current_schema_id}", *(str(f) for f in t.schema().fields)],
        "Current snapshot": str(snap) if snap else "None",
        "Snapshots": [
            f"Snapshot {s.snapshot_id}, schema {s.schema_id}: {s.manifest_list}" for s in t.snapshots()
        ],
        "Properties": dict(md.properties),
    }
    data = {
        "identifier": list(t.identifier),
        "metadata_location": t.metadata_location,
        "metadata": json.loads(md.to_json()),
    }
    return text, data


def cmd_describe(cat: Catalog, out: Output, args: argparse.Namespace) -> None:
    from icefloe.exceptions import NoSuchNamespaceError, NoSuchTableError

    ident = tuple(args.identifier.split("."))
    if args.entity in ("any", "namespace"):
        try:
            props = cat.load_namespace_properties(ident)
        except NoSuchNamespaceError:
            if args.entity == "namespace" or len(ident) == 1:
                raise
        else:
            out.mapping(f"Namespace {args.identifier}", props)
            return
    if args.entity in ("any", "table") and len(ident) > 1:
        text, data = _table_view(cat.load_table(args.identifier))
        out.document(text, data)
        return
    raise NoSuchTableError(f"table or namespace {args.identifier} does not exist")


def cmd_schema(cat: Catalog, out: Output, args: argparse.Namespace) -> None:
    schema = cat.load_table(args.table).schema()
    if isinstance(out, JsonOutput):
        out.document({}, json.loads(schema.to_json()))
        return
    rows = [
        {"name": f.name, "type": str(f.field_type), "doc": getattr(f, "doc", None) or ""}
        for f in schema.fields
    ]
    out.rows(f"Schema, id={schema.schema_id}", ["name", "type", "doc"], rows)


def cmd_spec(cat: Catalog, out: Output, args: argparse.Namespace) -> None:
    spec = cat.load_table(args.table).spec()
    out.text(str(spec), json.loads(spec.to_json()))


def cmd_uuid(cat: Catalog, out: Output, args: argparse.Namespace) -> None:
    u = cat.load_table(args.table).metadata.table_uuid
    out.text(u or "missing", {"uuid": u or "missing"})


def cmd_location(cat: Catalog, out: Output, args: argparse.Namespace) -> None:
    loc = cat.load_table(args.table).location()
    out.text(loc, loc)


def cmd_snapshots(cat: Catalog, out: Output, args: argparse.Namespace) -> None:
    """Java's `snapshots` metadata table: committed_at, snapshot_id, parent_id, operation,
    manifest_list, summary."""
    t = cat.load_table(args.table)
    rows = [
        {
            "committed_at": _ms_to_iso(s.timestamp_ms),
            "snapshot_id": s.snapshot_id,
            "parent_id": s.parent_snapshot_id,
            "operation": str(s.summary.operation) or None,
            "manifest_list": s.manifest_list,
            "summary": dict(s.summary.additional_properties),
        }
        for s in t.snapshots()
    ]
    cols = ["committed_at", "snapshot_id", "parent_id", "operation", "manifest_list", "summary"]
    out.rows(f"Snapshots of {args.table}", cols, rows)


def cmd_history(cat: Catalog, out: Output, args: argparse.Namespace) -> None:
    """Java's `history` metadata table: made_current_at, snapshot_id, parent_id,
    is_current_ancestor."""
    t = cat.load_table(args.table)
    ancestors: set[int] = set()
    sid = t.metadata.current_snapshot_id
    while sid is not None and sid not in ancestors:
        ancestors.add(sid)
        snap = t.snapshot_by_id(sid)
        sid = None if snap is None else snap.parent_snapshot_id
    rows = []
    for entry in t.history():
        snap = t.snapshot_by_id(entry.snapshot_id)
        rows.append(
            {
                "made_current_at": _ms_to_iso(entry.timestamp_ms),
                "snapshot_id": entry.snapshot_id,
                "parent_id": None if snap is None else snap.parent_snapshot_id,
                "is_current_ancestor": entry.snapshot_id in ancestors,
            }
        )
    out.rows(
        f"History of {args.table}",
        ["made_current_at", "snapshot_id", "parent_id", "is_current_ancestor"],
        rows,
    )


def cmd_refs(cat: Catalog, out: Output, args: argparse.Namespace) -> None:
    """Java's `refs` metadata table: name, type, snapshot_id, max_reference_age_in_ms,
    min_snapshots_to_keep, max_snapshot_age_in_ms."""
    t = cat.load_table(args.table)
    kind = (args.type or "").lower()
    if kind and kind not in ("branch", "tag"):
        raise CliError(f"--type must be branch or tag, found {args.type!r}")
    rows = []
    for name, ref in sorted(t.metadata.refs().items()):
        rtype = str(ref.get("type", "")).lower()
        if kind and rtype != kind:
            continue
        rows.append(
            {
                "name": name,
                "type": rtype.upper(),
                "snapshot_id": ref.get("snapshot-id"),
                "max_reference_age_in_ms": ref.get("max-ref-age-ms"),
                "min_snapshots_to_keep": ref.get("min-snapshots-to-keep"),
                "max_snapshot_age_in_ms": ref.get("max-snapshot-age-ms"),
            }
        )
    cols = [
        "name",
        "type",
        "snapshot_id",
        "max_reference_age_in_ms",
        "min_snapshots_to_keep",
        "max_snapshot_age_in_ms",
    ]
    out.rows(f"Refs of {args.table}", cols, rows)


def cmd_files(cat: Catalog, out: Output, args: argparse.Namespace) -> None:
    t = cat.load_table(args.table)
    cols, rows = _arrow_rows(t.inspect.files())
    if not isinstance(out, JsonOutput):
        wanted = (
            "content",
            "file_path",
            "file_format",
            "spec_id",
            "partition",
            "record_count",
            "file_size_in_bytes",
        )
        shown = [c for c in wanted if c in cols]
        cols = shown or cols
    out.rows(f"Files of {args.table}", cols, rows)


def cmd_partitions(cat: Catalog, out: Output, args: argparse.Namespace) -> None:
    t = cat.load_table(args.table)
    cols, rows = _arrow_rows(t.inspect.partitions())
    out.rows(f"Partitions of {args.table}", cols, rows)


def _split_entity(values: Sequence[str]) -> tuple[str, list[str]]:
    """PyIceberg's `properties get table IDENT ...` or the shorter `properties get IDENT ...`."""
    if values and values[0] in ("table", "namespace"):
        return values[0], list(values[1:])
    return "table", list(values)


def cmd_properties(cat: Catalog, out: Output, args: argparse.Namespace) -> None:
    entity, rest = _split_entity(args.args)
    want = {"get": (1, 2), "set": (3, 3), "remove": (2, 2)}[args.action]
    if not want[0] <= len(rest) <= want[1]:
        usage = {"get": "IDENTIFIER [NAME]", "set": "IDENTIFIER NAME VALUE", "remove": "IDENTIFIER NAME"}
        raise CliError(f"usage: icefloe properties {args.action} [table|namespace] {usage[args.action]}")
    ident = rest[0]
    if entity == "namespace":
        _namespace_properties(cat, out, args.action, ident, rest[1:])
        return
    t = cat.load_table(ident)
    if args.action == "get":
        if len(rest) == 1:
            out.mapping(f"Properties of {ident}", t.properties)
            return
        name = rest[1]
        if name not in t.properties:
            raise CliError(f"Could not find property {name} on table {ident}")
        out.text(t.properties[name], t.properties[name])
    elif args.action == "set":
        name, value = rest[1], rest[2]
        with t.transaction() as tx:
            tx.set_properties({name: value})
        out.text(f"Set {name}={value} on {ident}", {"set": {name: value}, "table": ident})
    else:
        name = rest[1]
        if name not in t.properties:
            raise CliError(f"Property {name} does not exist on {ident}")
        with t.transaction() as tx:
            tx.remove_properties(name)
        out.text(f"Property {name} removed from {ident}", {"removed": [name], "table": ident})


def _namespace_properties(cat: Catalog, out: Output, action: str, ident: str, rest: list[str]) -> None:
    if action == "get":
        props = cat.load_namespace_properties(ident)
        if not rest:
            out.mapping(f"Properties of {ident}", props)
            return
        if rest[0] not in props:
            raise CliError(f"Could not find property {rest[0]} on namespace {ident}")
        out.text(props[rest[0]], props[rest[0]])
    elif action == "set":
        cat.update_namespace_properties(ident, updates={rest[0]: rest[1]})
        out.text(f"Updated {rest[0]} on {ident}", {"set": {rest[0]: rest[1]}, "namespace": ident})
    else:
        summary = cat.update_namespace_properties(ident, removals={rest[0]})
        if rest[0] not in list(summary.removed):
            raise CliError(f"Property {rest[0]} does not exist on {ident}")
        out.text(f"Property {rest[0]} removed from {ident}", {"removed": [rest[0]], "namespace": ident})


def _report(out: Output, title: str, result: Any) -> None:
    out.mapping(title, _result_fields(result))


def cmd_expire(cat: Catalog, out: Output, args: argparse.Namespace) -> None:
    t = cat.load_table(args.table)
    kwargs: dict[str, Any] = {}
    if args.older_than is not None:
        kwargs["older_than"] = parse_time(args.older_than)
    if args.retain_last is not None:
        kwargs["retain_last"] = args.retain_last
    result = t.maintenance.expire_snapshots(**kwargs)
    _report(out, f"Expired snapshots of {args.table}", result)


def cmd_remove_orphans(cat: Catalog, out: Output, args: argparse.Namespace) -> None:
    t = cat.load_table(args.table)
    kwargs: dict[str, Any] = {"dry_run": args.dry_run, "allow_recent": args.allow_recent}
    if args.older_than is not None:
        kwargs["older_than"] = parse_time(args.older_than)
    result = t.maintenance.remove_orphan_files(**kwargs)
    _report(out, f"Orphan files of {args.table}", result)


def cmd_compact(cat: Catalog, out: Output, args: argparse.Namespace) -> None:
    t = cat.load_table(args.table)
    result = t.maintenance.rewrite_data_files()
    _report(out, f"Compaction of {args.table}", result)


def cmd_rewrite_manifests(cat: Catalog, out: Output, args: argparse.Namespace) -> None:
    t = cat.load_table(args.table)
    result = t.maintenance.rewrite_manifests(spec_id=args.spec_id, sort_by=args.sort_by)
    _report(out, f"Manifests of {args.table} rewritten", result)


def cmd_rollback(cat: Catalog, out: Output, args: argparse.Namespace) -> None:
    t = cat.load_table(args.table)
    before = t.metadata.current_snapshot_id
    with t.manage_snapshots() as m:
        m.rollback_to_snapshot(args.snapshot_id)
    out.text(
        f"Rolled back {args.table} from snapshot {before} to {args.snapshot_id}",
        {"table": args.table, "previous_snapshot_id": before, "current_snapshot_id": args.snapshot_id},
    )


def cmd_version(cat: Catalog | None, out: Output, args: argparse.Namespace) -> None:
    from icefloe import __version__

    out.text(__version__, {"version": __version__})


# ---------------------------------------------------------------- parser
def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="icefloe",
        description="Look at and maintain Apache Iceberg tables (no JVM).",
        epilog="Catalogs: ~/.icefloe.yaml or ~/.pyiceberg.yaml (catalog: {NAME: {uri, warehouse, ...}}).",
    )
    p.add_argument("--catalog", help="catalog name in the config file (default: 'default')")
    p.add_argument("--uri", help="catalog URI (sqlite:///..., postgresql://..., http(s)://... for REST)")
    p.add_argument("--warehouse", help="warehouse location (alone: the filesystem catalog there)")
    p.add_argument("--json", action="store_true", help="print JSON for scripts")
    p.add_argument("--output", choices=("text", "json"), help="pyiceberg's spelling of --json")
    p.add_argument("--verbose", action="store_true", help="show tracebacks of errors")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    def command(name: str, func: Any, help: str, aliases: Sequence[str] = ()) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, help=help, aliases=list(aliases))
        sp.set_defaults(func=func)
        return sp

    command("list", cmd_list, "tables of a namespace, or namespaces").add_argument("namespace", nargs="?")
    sp = command("describe", cmd_describe, "a table's metadata or a namespace's properties")
    sp.add_argument("--entity", choices=("any", "namespace", "table"), default="any")
    sp.add_argument("identifier")
    for name, func, text in (
        ("schema", cmd_schema, "the current schema"),
        ("spec", cmd_spec, "the default partition spec"),
        ("uuid", cmd_uuid, "the table's UUID"),
        ("location", cmd_location, "the table's location"),
        ("snapshots", cmd_snapshots, "snapshots (Java's snapshots table)"),
        ("history", cmd_history, "snapshot log (Java's history table)"),
        ("files", cmd_files, "data and delete files of the current snapshot"),
        ("partitions", cmd_partitions, "partitions with their counts"),
        ("compact", cmd_compact, "rewrite small data files (rewrite_data_files)"),
    ):
        command(name, func, text).add_argument("table")
    sp = command("refs", cmd_refs, "branches and tags", aliases=("list-refs",))
    sp.add_argument("table")
    sp.add_argument("--type", help="branch or tag")
    sp = command("properties", cmd_properties, "get, set or remove table (or namespace) properties")
    sp.add_argument("action", choices=("get", "set", "remove"))
    sp.add_argument("args", nargs="+", metavar="[table|namespace] IDENTIFIER [NAME [VALUE]]")
    sp = command("expire-snapshots", cmd_expire, "expire old snapshots")
    sp.add_argument("table")
    sp.add_argument("--older-than", help="ISO-8601 time, epoch ms, or an age such as 7d")
    sp.add_argument("--retain-last", type=int, help="keep at least this many snapshots")
    sp = command("remove-orphans", cmd_remove_orphans, "delete files no snapshot references")
    sp.add_argument("table")
    sp.add_argument("--older-than", help="ISO-8601 time, epoch ms, or an age such as 3d")
    sp.add_argument("--dry-run", action="store_true", help="list the files, delete nothing")
    sp.add_argument(
        "--allow-recent",
        action="store_true",
        help="allow --older-than under 24 hours (only when nothing writes to the table meanwhile)",
    )
    sp = command(
        "rewrite-manifests", cmd_rewrite_manifests, "cluster manifests by partition (rewrite_manifests)"
    )
    sp.add_argument("table")
    sp.add_argument(
        "--spec-id", type=int, help="rewrite the manifests of this spec (default: the current one)"
    )
    sp.add_argument(
        "--sort-by",
        action="append",
        metavar="FIELD",
        help="cluster by this partition field (repeat for several, in order; default: the whole partition)",
    )
    sp = command("rollback", cmd_rollback, "make an earlier snapshot current")
    sp.add_argument("table")
    sp.add_argument("snapshot_id", type=int)
    command("version", cmd_version, "icefloe's version")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    want_json = args.json or args.output == "json"
    out: Output = JsonOutput(args.verbose) if want_json else TextOutput(args.verbose)
    try:
        if args.func is cmd_version:
            cmd_version(None, out, args)
            return 0
        catalog = _load_catalog(args)
        args.func(catalog, out, args)
    except KeyboardInterrupt:
        print("icefloe: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1
    except Exception as e:
        out.error(e)
        return 1
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
