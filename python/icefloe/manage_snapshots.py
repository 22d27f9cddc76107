"""`table.manage_snapshots()`: branches, tags and the current snapshot (PyIceberg's
`ManageSnapshots` shape, Iceberg Java's `ManageSnapshots` rules).

    with table.manage_snapshots() as ms:
        ms.create_tag(snapshot_id, "v1").create_branch(snapshot_id, "audit")

Each operation is recorded and re-derived from the table's current metadata when the change
commits, so a concurrent commit in between is met with the same checks (an ancestor rule that
no longer holds is an error, not a silent move). All operations of one `with` block commit as
one new metadata version.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Union

from icefloe import _native
from icefloe.commit.retry import commit_with_retry
from icefloe.exceptions import ValidationError

if TYPE_CHECKING:
    from icefloe.table import Table

MAIN_BRANCH = "main"

Update = dict[str, Any]
Op = Union[Callable[["_Refs"], list[Update]], "_Cherrypick"]


@dataclass(frozen=True)
class SnapshotRef:
    """A branch or tag (PyIceberg's `SnapshotRef`): the snapshot it points at and its
    retention settings."""

    snapshot_id: int
    snapshot_ref_type: str  # "branch" | "tag"
    min_snapshots_to_keep: int | None = None
    max_snapshot_age_ms: int | None = None
    max_ref_age_ms: int | None = None

    @staticmethod
    def from_json(d: dict[str, Any]) -> SnapshotRef:
        return SnapshotRef(
            snapshot_id=int(d["snapshot-id"]),
            snapshot_ref_type=str(d["type"]).lower(),
            min_snapshots_to_keep=d.get("min-snapshots-to-keep"),
            max_snapshot_age_ms=d.get("max-snapshot-age-ms"),
            max_ref_age_ms=d.get("max-ref-age-ms"),
        )

    def to_update(self, name: str) -> Update:
        u: Update = {
            "action": "set-snapshot-ref",
            "ref-name": name,
            "snapshot-id": self.snapshot_id,
            "type": self.snapshot_ref_type,
        }
        for key, value in (
            ("min-snapshots-to-keep", self.min_snapshots_to_keep),
            ("max-snapshot-age-ms", self.max_snapshot_age_ms),
            ("max-ref-age-ms", self.max_ref_age_ms),
        ):
            if value is not None:
                u[key] = value
        return u


def table_refs(metadata: _native.TableMetadata) -> dict[str, SnapshotRef]:
    """The table's refs by name (`main` included when the table has a current snapshot)."""
    md = json.loads(metadata.to_json())
    refs = {name: SnapshotRef.from_json(r) for name, r in (md.get("refs") or {}).items()}
    current = md.get("current-snapshot-id")
    if MAIN_BRANCH not in refs and current is not None and current != -1:
        refs[MAIN_BRANCH] = SnapshotRef(snapshot_id=int(current), snapshot_ref_type="branch")
    return refs


class _Refs:
    """The metadata an operation is derived from: snapshots by id (parent links and times)
    and the refs, as they are after the operations before it in the same change."""

    def __init__(self, metadata: _native.TableMetadata) -> None:
        md = json.loads(metadata.to_json())
        self.snapshots: dict[int, dict[str, Any]] = {
            int(s["snapshot-id"]): s for s in md.get("snapshots", [])
        }
        self.refs = table_refs(metadata)

    def snapshot(self, snapshot_id: int) -> dict[str, Any]:
        s = self.snapshots.get(int(snapshot_id))
        if s is None:
            raise ValidationError(f"cannot find snapshot with id {snapshot_id}")
        return s

    def ancestors(self, snapshot_id: int | None) -> list[int]:
        """`snapshot_id` and its ancestors, newest first (stops at an expired parent)."""
        out: list[int] = []
        while snapshot_id is not None and snapshot_id in self.snapshots and snapshot_id not in out:
            out.append(snapshot_id)
            parent = self.snapshots[snapshot_id].get("parent-snapshot-id")
            snapshot_id = None if parent is None else int(parent)
        return out

    def head(self, branch: str) -> int | None:
        ref = self.refs.get(branch)
        return None if ref is None else ref.snapshot_id

    def branch(self, name: str) -> SnapshotRef:
        ref = self.refs.get(name)
        if ref is None:
            raise ValidationError(f"branch {name!r} does not exist")
        if ref.snapshot_ref_type != "branch":
            raise ValidationError(f"ref {name!r} is a tag, not a branch")
        return ref


def _positive(name: str, value: int | None) -> int | None:
    if value is not None and (not isinstance(value, int) or value <= 0):
        raise ValidationError(f"{name} must be a positive integer, found {value!r}")
    return value


def _name(name: str, what: str) -> str:
    if not isinstance(name, str) or not name:
        raise ValidationError(f"a {what} needs a non-empty name, found {name!r}")
    return name


class ManageSnapshots:
    """Branch, tag and current-snapshot changes, committed together by `commit()` (or at the
    end of a `with` block)."""

    def __init__(self, table: Table) -> None:
        self._table = table
        self._ops: list[Op] = []
        self._committed = False

    # ---- tags and branches ----
    def create_tag(
        self, snapshot_id: int, tag_name: str, max_ref_age_ms: int | None = None
    ) -> ManageSnapshots:
        _name(tag_name, "tag")
        _positive("max_ref_age_ms", max_ref_age_ms)

        def op(s: _Refs) -> list[Update]:
            if tag_name in s.refs:
                raise ValidationError(f"ref {tag_name!r} already exists")
            s.snapshot(snapshot_id)
            return [SnapshotRef(snapshot_id, "tag", max_ref_age_ms=max_ref_age_ms).to_update(tag_name)]

        return self._add(op)

    def create_branch(
        self,
        snapshot_id: int,
        branch_name: str,
        max_ref_age_ms: int | None = None,
        max_snapshot_age_ms: int | None = None,
        min_snapshots_to_keep: int | None = None,
    ) -> ManageSnapshots:
        _name(branch_name, "branch")
        for n, v in (
            ("max_ref_age_ms", max_ref_age_ms),
            ("max_snapshot_age_ms", max_snapshot_age_ms),
            ("min_snapshots_to_keep", min_snapshots_to_keep),
        ):
            _positive(n, v)

        def op(s: _Refs) -> list[Update]:
            if branch_name in s.refs:
                raise ValidationError(f"ref {branch_name!r} already exists")
            s.snapshot(snapshot_id)
            ref = SnapshotRef(
                snapshot_id, "branch", min_snapshots_to_keep, max_snapshot_age_ms, max_ref_age_ms
            )
            return [ref.to_update(branch_name)]

        return self._add(op)

    def remove_tag(self, tag_name: str) -> ManageSnapshots:
        def op(s: _Refs) -> list[Update]:
            ref = s.refs.get(tag_name)
            if ref is None or ref.snapshot_ref_type != "tag":
                raise ValidationError(f"tag {tag_name!r} does not exist")
            return [{"action": "remove-snapshot-ref", "ref-name": tag_name}]

        return self._add(op)

    def remove_branch(self, branch_name: str) -> ManageSnapshots:
        def op(s: _Refs) -> list[Update]:
            if branch_name == MAIN_BRANCH:
                raise ValidationError("cannot remove the main branch")
            s.branch(branch_name)
            return [{"action": "remove-snapshot-ref", "ref-name": branch_name}]

        return self._add(op)

    def rename_branch(self, name: str, new_name: str) -> ManageSnapshots:
        _name(new_name, "branch")

        def op(s: _Refs) -> list[Update]:
            if name == MAIN_BRANCH:
                raise ValidationError("cannot rename the main branch")
            ref = s.branch(name)
            if new_name in s.refs:
                raise ValidationError(f"ref {new_name!r} already exists")
            return [{"action": "remove-snapshot-ref", "ref-name": name}, ref.to_update(new_name)]

        return self._add(op)

    def replace_tag(self, tag_name: str, snapshot_id: int) -> ManageSnapshots:
        def op(s: _Refs) -> list[Update]:
            ref = s.refs.get(tag_name)
            if ref is None or ref.snapshot_ref_type != "tag":
                raise ValidationError(f"tag {tag_name!r} does not exist")
            s.snapshot(snapshot_id)
            return [SnapshotRef(snapshot_id, "tag", max_ref_age_ms=ref.max_ref_age_ms).to_update(tag_name)]

        return self._add(op)

    def replace_branch(self, branch_name: str, snapshot_id: int) -> ManageSnapshots:
        """Points `branch_name` at any snapshot (Java's `replaceBranch(name, snapshotId)`)."""

        def op(s: _Refs) -> list[Update]:
            ref = s.branch(branch_name)
            s.snapshot(snapshot_id)
            return [_moved(ref, snapshot_id).to_update(branch_name)]

        return self._add(op)

    def fast_forward(self, branch_name: str, to: str) -> ManageSnapshots:
        """Moves `branch_name` to the head of `to`, which must descend from it (Java's
        `fastForwardBranch`); a branch that does not exist yet (`main` of a table written
        only through a write-audit-publish branch) is created there, as Java does."""

        def op(s: _Refs) -> list[Update]:
            target = s.refs.get(to)
            if target is None:
                raise ValidationError(f"ref {to!r} does not exist")
            if branch_name not in s.refs:
                _name(branch_name, "branch")
                return [SnapshotRef(target.snapshot_id, "branch").to_update(branch_name)]
            ref = s.branch(branch_name)
            if ref.snapshot_id not in s.ancestors(target.snapshot_id):
                raise ValidationError(
                    f"cannot fast-forward {branch_name!r}: its snapshot {ref.snapshot_id} is not an "
                    f"ancestor of {to!r} ({target.snapshot_id})"
                )
            return [_moved(ref, target.snapshot_id).to_update(branch_name)]

        return self._add(op)

    def set_min_snapshots_to_keep(self, branch_name: str, min_snapshots_to_keep: int) -> ManageSnapshots:
        _positive("min_snapshots_to_keep", min_snapshots_to_keep)
        return self._retention(branch_name, min_snapshots_to_keep=min_snapshots_to_keep)

    def set_max_snapshot_age_ms(self, branch_name: str, max_snapshot_age_ms: int) -> ManageSnapshots:
        _positive("max_snapshot_age_ms", max_snapshot_age_ms)
        return self._retention(branch_name, max_snapshot_age_ms=max_snapshot_age_ms)

    def set_max_ref_age_ms(self, ref_name: str, max_ref_age_ms: int) -> ManageSnapshots:
        _positive("max_ref_age_ms", max_ref_age_ms)

        def op(s: _Refs) -> list[Update]:
            ref = s.refs.get(ref_name)
            if ref is None:
                raise ValidationError(f"ref {ref_name!r} does not exist")
            return [_replace(ref, max_ref_age_ms=max_ref_age_ms).to_update(ref_name)]

        return self._add(op)

    # ---- the current snapshot (main) ----
    def set_current_snapshot(
        self, snapshot_id: int | None = None, ref_name: str | None = None
    ) -> ManageSnapshots:
        """Makes a snapshot (by id, or the head of a ref) the table's current one; any
        snapshot, ancestor or not (Java's `setCurrentSnapshot`)."""
        if (snapshot_id is None) == (ref_name is None):
            raise ValidationError("set_current_snapshot needs exactly one of snapshot_id and ref_name")

        def op(s: _Refs) -> list[Update]:
            target = snapshot_id
            if ref_name is not None:
                ref = s.refs.get(ref_name)
                if ref is None:
                    raise ValidationError(f"ref {ref_name!r} does not exist")
                target = ref.snapshot_id
            assert target is not None
            s.snapshot(target)
            return [_main(s, target)]

        return self._add(op)

    def rollback_to_snapshot(self, snapshot_id: int) -> ManageSnapshots:
        """Makes an ancestor of the current snapshot current again (Java's `rollbackTo`)."""

        def op(s: _Refs) -> list[Update]:
            s.snapshot(snapshot_id)
            if snapshot_id not in s.ancestors(s.head(MAIN_BRANCH)):
                raise ValidationError(
                    f"cannot roll back to snapshot {snapshot_id}: it is not an ancestor of the current "
                    f"snapshot {s.head(MAIN_BRANCH)}"
                )
            return [_main(s, snapshot_id)]

        return self._add(op)

    def rollback_to_timestamp(self, timestamp_ms: int) -> ManageSnapshots:
        """Makes current the newest ancestor of the current snapshot committed strictly
        before `timestamp_ms` (Java's `rollbackToTime`)."""

        def op(s: _Refs) -> list[Update]:
            for sid in s.ancestors(s.head(MAIN_BRANCH)):
                if int(s.snapshots[sid]["timestamp-ms"]) < timestamp_ms:
                    return [_main(s, sid)]
            raise ValidationError(f"cannot roll back: no valid snapshot older than {timestamp_ms}")

        return self._add(op)

    def cherrypick_snapshot(self, snapshot_id: int) -> ManageSnapshots:
        """Publishes a snapshot onto `main` (Java's `cherrypick`, the publish step of
        write-audit-publish): fast-forwards when its parent is the current snapshot, else
        re-applies an `append` or dynamic partition overwrite as a new snapshot recording
        `source-snapshot-id` (and `published-wap-id`); a WAP id publishes once."""
        return self._add(_Cherrypick(int(snapshot_id)))

    # ---- commit ----
    def commit(self) -> Table:
        if self._committed:
            raise ValidationError("this change was committed already")
        self._committed = True
        if self._ops:
            ops = list(self._ops)
            commit_with_retry(self._table, lambda md: apply_ops(md, ops))
        return self._table

    def _add(self, op: Op) -> ManageSnapshots:
        if self._committed:
            raise ValidationError("this change was committed already")
        self._ops.append(op)
        return self

    def _retention(self, branch_name: str, **changes: int) -> ManageSnapshots:
        def op(s: _Refs) -> list[Update]:
            return [_replace(s.branch(branch_name), **changes).to_update(branch_name)]

        return self._add(op)

    def __enter__(self) -> ManageSnapshots:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.commit()


def apply_ops(metadata: _native.TableMetadata, ops: list[Op]) -> tuple[_native.TableMetadata, list[str]]:
    """Each op derived from the metadata as the ops before it left it, applied in order. The
    versions in between have no file, so the whole change is one new version. Returns the
    files written (a cherry-pick's manifests)."""
    md, written = metadata, []
    try:
        for op in ops:
            if isinstance(op, _Cherrypick):
                md, files = _native.cherrypick(md, op.snapshot_id)
                written += files
                continue
            updates = op(_Refs(md))
            if updates:
                md = md.apply_updates(json.dumps(updates))
    except Exception:
        _native.delete_files(written)
        raise
    return md, written


@dataclass(frozen=True)
class _Cherrypick:
    snapshot_id: int


def _replace(ref: SnapshotRef, **changes: Any) -> SnapshotRef:
    return SnapshotRef(**{**ref.__dict__, **changes})


def _moved(ref: SnapshotRef, snapshot_id: int) -> SnapshotRef:
    return _replace(ref, snapshot_id=snapshot_id)


def _main(s: _Refs, snapshot_id: int) -> Update:
    main = s.refs.get(MAIN_BRANCH) or SnapshotRef(snapshot_id, "branch")
    return _moved(main, snapshot_id).to_update(MAIN_BRANCH)
