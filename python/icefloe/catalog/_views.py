"""The view half of a catalog (PyIceberg's names: `create_view`, `load_view`, `list_views`,
`view_exists`, `drop_view`, `rename_view`; Java's `replace` and property updates beside
them). New metadata is built here, as Java's `BaseMetastoreViewCatalog` builds it; a catalog
stores it through three hooks (`_create_view_record`, `_commit_view`, `_load_view_record`)
and lists, drops and renames its own rows. A catalog without views keeps the hooks' refusal,
a `NotSupportedError` naming the catalog (Java's HadoopCatalog is no `ViewCatalog` either)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from icefloe.exceptions import NoSuchViewError, NotSupportedError, ValidationError
from icefloe.schema import Schema
from icefloe.view import View, ViewMetadata, ViewVersion, new_version

if TYPE_CHECKING:
    import pyarrow as pa

Identifier = tuple[str, ...]


def _schema(schema: Schema | pa.Schema) -> Schema:
    return schema if isinstance(schema, Schema) else Schema.from_arrow(schema)


class ViewCatalogMixin:
    """Views of a catalog (see the module's docstring)."""

    name: str

    if TYPE_CHECKING:  # Catalog's

        @staticmethod
        def table_identifier(identifier: Any) -> Identifier: ...

        @staticmethod
        def identifier_to_tuple(identifier: Any) -> Identifier: ...

    # ---- the hooks a catalog with views implements ----
    def _refuse_views(self) -> NotSupportedError:
        return NotSupportedError(
            f"{type(self).__name__} {self.name!r} does not support views (as Iceberg Java's "
            "HadoopCatalog); use a SQL or REST catalog"
        )

    def _view_default_location(self, identifier: Identifier) -> str:
        raise self._refuse_views()

    def _create_view_record(
        self, identifier: Identifier, metadata: ViewMetadata, location_given: bool
    ) -> View:
        raise self._refuse_views()

    def _load_view_record(self, identifier: Identifier) -> View | None:
        raise self._refuse_views()

    def _commit_view(self, base: View, new: ViewMetadata) -> View:
        raise self._refuse_views()

    def list_views(self, namespace: Any) -> list[Identifier]:
        raise self._refuse_views()

    def drop_view(self, identifier: Any) -> None:
        """Removes the view from the catalog (NoSuchViewError if absent); its files stay, as Java's."""
        raise self._refuse_views()

    def rename_view(self, from_identifier: Any, to_identifier: Any) -> None:
        raise self._refuse_views()

    # ---- the API ----
    def load_view(self, identifier: Any) -> View:
        parts = self.table_identifier(identifier)
        view = self._load_view_record(parts)
        if view is None:
            raise NoSuchViewError(f"view {'.'.join(parts)} does not exist")
        return view

    def view_exists(self, identifier: Any) -> bool:
        return self._load_view_record(self.table_identifier(identifier)) is not None

    def create_view(
        self,
        identifier: Any,
        schema: Schema | pa.Schema,
        view_version: ViewVersion | None = None,
        *,
        sql: str | None = None,
        dialect: str = "spark",
        default_namespace: Iterable[str] | None = None,
        default_catalog: str | None = None,
        location: str | None = None,
        properties: Mapping[str, str] | None = None,
    ) -> View:
        """A new view of `schema`: `view_version` (PyIceberg's form), or one query `sql` in
        `dialect` whose unqualified names resolve in `default_namespace` (default: the view's
        own namespace) of `default_catalog` (None: this catalog)."""
        parts = self.table_identifier(identifier)
        version = self._version(parts, view_version, sql, dialect, default_namespace, default_catalog)
        where = location or self._view_default_location(parts)
        metadata = ViewMetadata.new(where, _schema(schema), version, dict(properties or {}))
        return self._create_view_record(parts, metadata, location is not None)

    def replace_view(
        self,
        identifier: Any,
        schema: Schema | pa.Schema,
        view_version: ViewVersion | None = None,
        *,
        sql: str | None = None,
        dialect: str = "spark",
        default_namespace: Iterable[str] | None = None,
        default_catalog: str | None = None,
        location: str | None = None,
        properties: Mapping[str, str] | None = None,
    ) -> View:
        """A new current version of an existing view (Java's `ViewBuilder.replace`): an equal
        earlier version or schema is reused; `properties` are set over the view's."""
        parts = self.table_identifier(identifier)
        base = self.load_view(parts)
        version = self._version(parts, view_version, sql, dialect, default_namespace, default_catalog)
        new = base.metadata.with_version(_schema(schema), version, properties, location)
        return self._commit_view(base, new)

    def create_or_replace_view(
        self, identifier: Any, schema: Schema | pa.Schema, *args: Any, **kwargs: Any
    ) -> View:
        if self.view_exists(identifier):
            return self.replace_view(identifier, schema, *args, **kwargs)
        return self.create_view(identifier, schema, *args, **kwargs)

    def update_view_properties(
        self, identifier: Any, updates: Mapping[str, str] | None = None, removals: Iterable[str] = ()
    ) -> View:
        """Sets and removes view properties in one commit (Java's `UpdateViewProperties`)."""
        removals = list(removals)
        both = set(removals) & set(updates or {})
        if both:
            raise ValidationError(f"properties both updated and removed: {sorted(both)}")
        base = self.load_view(identifier)
        return self._commit_view(base, base.metadata.with_properties(updates, removals))

    @staticmethod
    def _version(
        parts: Identifier,
        view_version: ViewVersion | None,
        sql: str | None,
        dialect: str,
        default_namespace: Iterable[str] | None,
        default_catalog: str | None,
    ) -> ViewVersion:
        if (view_version is None) == (sql is None):
            raise ValidationError("give a view its query: either view_version or sql")
        if view_version is not None:
            return view_version
        assert sql is not None
        namespace = parts[:-1] if default_namespace is None else tuple(default_namespace)
        return new_version(sql, namespace, dialect=dialect, default_catalog=default_catalog)
