"""Spark SQL as Iceberg's Spark runtime reads it: sqlglot's Spark dialect plus the statements
Iceberg's SQL extensions add (`IcebergSparkSessionExtensions`) and the temporal clauses of
Spark 3.3+ that sqlglot's Spark dialect does not know.

Every statement `icefloe.spark.sql` runs is parsed here, never split by hand. What the
dialect adds, each as sqlglot's dialects extend its base parser:

- time travel: `[FOR] SYSTEM_VERSION AS OF v` and `[FOR] SYSTEM_TIME AS OF ts` (Spark's
  `temporalClause`; `VERSION AS OF` / `TIMESTAMP AS OF` / `FOR SYSTEM_TIME AS OF` parse already);
- partition transforms as Iceberg writes them (`bucket(16, id)`, `days(ts)`, `truncate(4, s)`,
  a column) in `PARTITIONED BY (...)`, kept as written (`Transform`) instead of being read as
  Spark functions (sqlglot reads `day(ts)` as `DAY(CAST(ts AS DATE))`);
- `ALTER TABLE t ADD PARTITION FIELD transform [AS name]`, `DROP PARTITION FIELD transform|name`
  and `REPLACE PARTITION FIELD a WITH b [AS name]`;
- `USE NAMESPACE|DATABASE|SCHEMA ns`, `SHOW TABLES [IN|FROM ns] [[LIKE] 'pattern']` and `SHOW
  NAMESPACES|DATABASES|SCHEMAS [IN|FROM ns] [[LIKE] 'pattern']`.

Statements sqlglot leaves as an `exp.Command` (`CALL`, `ALTER TABLE ... WRITE ORDERED BY`,
`CREATE BRANCH`, ...) are named by `command_kind`, so that an unsupported one fails with
its name.
"""

from __future__ import annotations

from typing import Any, ClassVar

from sqlglot import exp
from sqlglot.dialects.spark import Spark
from sqlglot.parsers.spark import SparkParser
from sqlglot.tokens import Tokenizer, TokenType
from sqlglot.trie import new_trie

__all__ = [
    "AddPartitionField",
    "AlterColumnPosition",
    "DropPartitionField",
    "IcebergSpark",
    "IdentifierFields",
    "RefChange",
    "ReplacePartitionField",
    "ShowNamespaces",
    "ShowTables",
    "Transform",
    "UnsetProperties",
    "WriteSpec",
    "command_kind",
]


class Transform(exp.Expression):
    """A partition transform as written: `this` its name (`bucket`, `days`, ...), its
    `expressions` the arguments (number literals and one column). A bare column is an
    `exp.Column`, not a Transform."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "expressions": True}


class AddPartitionField(exp.Expression):
    arg_types: ClassVar[dict[str, bool]] = {"this": True, "alias": False}


class DropPartitionField(exp.Expression):
    arg_types: ClassVar[dict[str, bool]] = {"this": True}


class ReplacePartitionField(exp.Expression):
    arg_types: ClassVar[dict[str, bool]] = {"this": True, "expression": True, "alias": False}


class WriteSpec(exp.Expression):
    """`WRITE [DISTRIBUTED BY PARTITION] [[LOCALLY] ORDERED BY fields | UNORDERED]`:
    `expressions` the sort fields (`exp.Ordered` over a column or Transform), `distributed`,
    `locally`, `unordered` flags as written."""

    arg_types: ClassVar[dict[str, bool]] = {
        "expressions": False,
        "distributed": False,
        "locally": False,
        "unordered": False,
        "ordered": False,
    }


class IdentifierFields(exp.Expression):
    """`SET IDENTIFIER FIELDS a, b` (`drop` False) or `DROP IDENTIFIER FIELDS a` (True):
    `expressions` the column paths as strings (exp.Literal)."""

    arg_types: ClassVar[dict[str, bool]] = {"expressions": True, "drop": False}


class RefChange(exp.Expression):
    """`CREATE [OR REPLACE] | REPLACE | DROP  BRANCH | TAG [IF [NOT] EXISTS] name [AS OF VERSION n]
    [RETAIN n unit] [WITH SNAPSHOT RETENTION [n SNAPSHOTS] [n unit]]`. Durations in ms."""

    arg_types: ClassVar[dict[str, bool]] = {
        "this": True,  # the ref's name
        "kind": True,  # BRANCH | TAG
        "action": True,  # CREATE | REPLACE | CREATE OR REPLACE | DROP
        "exists": False,  # IF NOT EXISTS (create) / IF EXISTS (drop)
        "version": False,
        "retain": False,
        "min_snapshots": False,
        "max_snapshot_age": False,
    }


class AlterColumnPosition(exp.Expression):
    """`ALTER COLUMN path FIRST | AFTER other` (sqlglot's Spark does not parse the position)."""

    arg_types: ClassVar[dict[str, bool]] = {"this": True, "after": False}


class UnsetProperties(exp.Expression):
    """`UNSET TBLPROPERTIES [IF EXISTS] ('k', ...)`: `expressions` the keys (strings)."""

    arg_types: ClassVar[dict[str, bool]] = {"expressions": True, "exists": False}


_TIME_UNITS_MS = {"DAYS": 86_400_000, "HOURS": 3_600_000, "MINUTES": 60_000}


class ShowTables(exp.Expression):
    """`SHOW TABLES [IN|FROM ns] [[LIKE] 'pattern']`: `this` the namespace (an exp.Table of
    its parts) or None, `like` the pattern or None."""

    arg_types: ClassVar[dict[str, bool]] = {"this": False, "like": False}


class ShowNamespaces(exp.Expression):
    """`SHOW NAMESPACES|DATABASES|SCHEMAS [IN|FROM ns] [[LIKE] 'pattern']`: `this` the parent
    namespace (an exp.Table of its parts) or None, `like` the pattern or None."""

    arg_types: ClassVar[dict[str, bool]] = {"this": False, "like": False}


_NAMESPACE_WORDS = ("NAMESPACE", "DATABASE", "SCHEMA")


class _IcebergSparkParser(SparkParser):
    VERSION_PHRASES: ClassVar[dict[tuple[str, ...], str]] = {
        **SparkParser.VERSION_PHRASES,
        ("FOR", "SYSTEM_VERSION"): "VERSION",
        ("SYSTEM_VERSION", "AS", "OF"): "VERSION",
        ("SYSTEM_TIME", "AS", "OF"): "TIMESTAMP",
    }

    PROPERTY_PARSERS: ClassVar[dict[str, Any]] = {
        **SparkParser.PROPERTY_PARSERS,
        "PARTITIONED BY": lambda self: self._parse_iceberg_partitioned_by(),
    }

    ALTER_PARSERS: ClassVar[dict[str, Any]] = {
        **SparkParser.ALTER_PARSERS,
        "ADD": lambda self: self._parse_iceberg_alter_add(),
        "DROP": lambda self: self._parse_iceberg_alter_drop(),
        "REPLACE": lambda self: self._parse_iceberg_alter_replace(),
        "CREATE": lambda self: self._parse_iceberg_ref_change(),
        "WRITE": lambda self: self._parse_iceberg_write_spec(),
        "SET": lambda self: self._parse_iceberg_alter_set(),
        "UNSET": lambda self: self._parse_iceberg_unset(),
        "ALTER": lambda self: self._parse_iceberg_alter_column(),
    }

    SHOW_PARSERS: ClassVar[dict[str, Any]] = {
        **SparkParser.SHOW_PARSERS,
        "TABLES": lambda self: self._parse_iceberg_show_tables(),
        "NAMESPACES": lambda self: self._parse_iceberg_show_namespaces(),
        "DATABASES": lambda self: self._parse_iceberg_show_namespaces(),
        "SCHEMAS": lambda self: self._parse_iceberg_show_namespaces(),
    }
    SHOW_TRIE: ClassVar[dict[Any, Any]] = new_trie(key.split(" ") for key in SHOW_PARSERS)

    STATEMENT_PARSERS: ClassVar[dict[Any, Any]] = {
        **SparkParser.STATEMENT_PARSERS,
        TokenType.CREATE: lambda self: self._parse_iceberg_create(),
        TokenType.ALTER: lambda self: self._parse_iceberg_alter(),
        TokenType.USE: lambda self: self._parse_iceberg_use(),
        TokenType.SHOW: lambda self: self._parse_show(),
        TokenType.REPLACE: lambda self: self._parse_iceberg_replace_table(),
        TokenType.MERGE: lambda self: self._parse_iceberg_merge(),
    }

    def _parse_iceberg_merge(self) -> exp.Expr | None:
        """Spark 4.1's `MERGE WITH SCHEMA EVOLUTION INTO ...`: the MERGE, marked in its meta."""
        evolve = self._match_text_seq("WITH", "SCHEMA", "EVOLUTION")
        merge = self._parse_merge()
        if evolve and merge is not None:
            merge.meta["schema_evolution"] = True
        return merge

    def _at_namespace(self) -> bool:
        return bool(self._curr and self._curr.text.upper() in _NAMESPACE_WORDS)

    def _parse_iceberg_create(self) -> exp.Expr | None:
        """`CREATE NAMESPACE|DATABASE|SCHEMA [IF NOT EXISTS] ns [COMMENT c] [LOCATION l] [WITH
        DBPROPERTIES|PROPERTIES (k = v, ...)]` (Spark's `createNamespace`, clauses in any order):
        a `Create` whose `properties` hold them; other CREATEs as sqlglot parses them."""
        if not self._at_namespace():
            return self._parse_create()
        kind = self._curr.text.upper() if self._curr else "NAMESPACE"
        self._advance()
        exists = self._match_text_seq("IF", "NOT", "EXISTS")
        this = self._parse_table_parts()
        props: list[exp.Expr] = []
        while self._curr:
            if self._match(TokenType.COMMENT):
                props.append(exp.SchemaCommentProperty(this=self._parse_string()))
            elif self._match_text_seq("LOCATION"):
                props.append(exp.LocationProperty(this=self._parse_string()))
            elif self._match(TokenType.WITH) and self._match_texts(("DBPROPERTIES", "PROPERTIES")):
                props.extend(self._parse_iceberg_property_list())
            else:
                self.raise_error("Expecting COMMENT, LOCATION or WITH DBPROPERTIES")
        return self.expression(
            exp.Create(
                this=this,
                kind=kind,
                exists=exists,
                properties=exp.Properties(expressions=props) if props else None,
            )
        )

    def _parse_iceberg_alter(self) -> exp.Expr | None:
        """`ALTER NAMESPACE|DATABASE|SCHEMA ns SET DBPROPERTIES|PROPERTIES (k = v, ...)` and `...
        SET LOCATION l`: an `Alter` of kind NAMESPACE with one `AlterSet` (its `expressions` the
        properties, or its `location`); `... UNSET DBPROPERTIES|PROPERTIES (k, ...)` (Spark 4's
        form) one `UnsetProperties`; other ALTERs as sqlglot parses them."""
        if not self._at_namespace():
            alter = self._parse_alter()
            if isinstance(alter, exp.Alter) and alter.args.get("options"):
                # sqlglot reads trailing properties as options (`ALTER COLUMN c TYPE double
                # COMMENT 'x'` as a table comment); Spark's ALTER TABLE has none: its parser
                # refuses them, and so does this one
                self.raise_error(f"Syntax error at or near {alter.args['options'][0].sql(dialect='spark')!r}")
            return alter
        self._advance()
        this = self._parse_table_parts()
        if self._match_text_seq("UNSET"):
            if not self._match_texts(("DBPROPERTIES", "PROPERTIES")):
                self.raise_error("Expecting DBPROPERTIES or PROPERTIES after UNSET")
            keys = self._parse_wrapped_csv(lambda: self._parse_string() or self._parse_var(any_token=True))
            unset = UnsetProperties(expressions=[exp.Literal.string(k.name) for k in keys])
            return self.expression(exp.Alter(this=this, kind="NAMESPACE", actions=[unset]))
        if not self._match(TokenType.SET):
            self.raise_error("Expecting SET or UNSET after ALTER NAMESPACE name")
        if self._match_text_seq("LOCATION"):
            action = exp.AlterSet(location=self._parse_string())
        elif self._match_texts(("DBPROPERTIES", "PROPERTIES")):
            action = exp.AlterSet(
                expressions=[exp.Properties(expressions=self._parse_iceberg_property_list())]
            )
        else:
            self.raise_error("Expecting DBPROPERTIES, PROPERTIES or LOCATION after SET")
        return self.expression(exp.Alter(this=this, kind="NAMESPACE", actions=[action]))

    def _parse_iceberg_property_list(self) -> list[exp.Expr]:
        """Spark's `propertyList`: `(key [=] value, ...)`, keys and values strings or names."""

        def one() -> exp.Expr:
            key = self._parse_string() or self._parse_var(any_token=True)
            self._match(TokenType.EQ)
            value = self._parse_string() or self._parse_primary() or self._parse_var(any_token=True)
            if key is None or value is None:
                self.raise_error("Expecting key = value")
                return exp.Property()
            return exp.Property(this=exp.Literal.string(key.name), value=exp.Literal.string(value.name))

        return self._parse_wrapped_csv(one)

    def _parse_iceberg_replace_table(self) -> exp.Expr | None:
        """`REPLACE TABLE ...`: a `Create` with `replace` set, marked `replace_only` in its meta
        (no `OR CREATE`: the table must exist)."""
        tree = self._parse_create()
        if isinstance(tree, exp.Create):
            tree.meta["replace_only"] = True
        return tree

    # ---- partition transforms ----
    def _parse_iceberg_transform(self) -> exp.Expr | None:
        if self._curr and self._next and self._next.token_type == TokenType.L_PAREN:
            name = exp.to_identifier(self._curr.text.lower())
            self._advance(2)
            args = self._parse_csv(lambda: self._parse_number() or self._parse_column())
            self._match_r_paren()
            return self.expression(Transform(this=name, expressions=args))
        return self._parse_column()

    def _parse_iceberg_partitioned_by(self) -> exp.PartitionedByProperty:
        self._match_l_paren()
        fields = self._parse_csv(self._parse_iceberg_transform)
        self._match_r_paren()
        return self.expression(exp.PartitionedByProperty(this=exp.Schema(expressions=fields)))

    # ---- ALTER TABLE extensions ----
    def _parse_iceberg_alter_add(self) -> Any:
        if self._match_text_seq("PARTITION", "FIELD"):
            field = self._parse_iceberg_transform()
            alias = self._parse_id_var() if self._match(TokenType.ALIAS) else None
            return self.expression(AddPartitionField(this=field, alias=alias))
        return self._parse_alter_table_add()

    def _parse_iceberg_alter_drop(self) -> Any:
        if self._match_text_seq("IDENTIFIER", "FIELDS"):
            return self.expression(IdentifierFields(expressions=self._parse_iceberg_field_list(), drop=True))
        if self._match_texts(("BRANCH", "TAG")):
            kind = self._prev.text.upper()
            exists = self._match_text_seq("IF", "EXISTS")
            name = self._parse_id_var(any_token=True)
            return self.expression(RefChange(this=name, kind=kind, action="DROP", exists=exists))
        if self._match_text_seq("PARTITION", "FIELD"):
            return self.expression(DropPartitionField(this=self._parse_iceberg_transform()))
        return self._parse_alter_table_drop()

    def _parse_iceberg_alter_replace(self) -> Any:
        if self._match_texts(("BRANCH", "TAG"), advance=False):
            return self._parse_iceberg_ref_options("REPLACE")
        if self._match_text_seq("PARTITION", "FIELD"):
            old = self._parse_iceberg_transform()
            if not self._match(TokenType.WITH):
                self.raise_error("Expecting WITH in REPLACE PARTITION FIELD")
            new = self._parse_iceberg_transform()
            alias = self._parse_id_var() if self._match(TokenType.ALIAS) else None
            return self.expression(ReplacePartitionField(this=old, expression=new, alias=alias))
        return SparkParser.ALTER_PARSERS["REPLACE"](self)

    # ---- branches and tags ----
    def _parse_iceberg_ref_change(self) -> Any:
        action = "CREATE OR REPLACE" if self._match_text_seq("OR", "REPLACE") else "CREATE"
        if not self._match_texts(("BRANCH", "TAG"), advance=False):
            self.raise_error("Expecting BRANCH or TAG after CREATE")
        return self._parse_iceberg_ref_options(action)

    def _parse_iceberg_ref_options(self, action: str) -> RefChange:
        self._match_texts(("BRANCH", "TAG"))
        kind = self._prev.text.upper()
        exists = action == "CREATE" and self._match_text_seq("IF", "NOT", "EXISTS")
        name = self._parse_id_var(any_token=True)
        ref = RefChange(this=name, kind=kind, action=action, exists=exists)
        if self._match_text_seq("AS", "OF", "VERSION"):
            ref.set("version", self._parse_iceberg_long())
        if self._match_text_seq("RETAIN"):
            ref.set("retain", self._parse_iceberg_duration())
        if kind == "BRANCH" and self._match_text_seq("WITH", "SNAPSHOT", "RETENTION"):
            number = self._parse_iceberg_long()
            if self._match_text_seq("SNAPSHOTS"):
                ref.set("min_snapshots", number)
                if self._curr and self._curr.token_type == TokenType.NUMBER:
                    ref.set("max_snapshot_age", self._parse_iceberg_duration())
            else:
                ref.set("max_snapshot_age", number * self._parse_iceberg_unit())
        return self.expression(ref)

    def _parse_iceberg_long(self) -> int:
        if not self._match(TokenType.NUMBER):
            self.raise_error("Expecting a number")
        return int(self._prev.text)

    def _parse_iceberg_unit(self) -> int:
        if not self._match_texts(tuple(_TIME_UNITS_MS)):
            self.raise_error("Expecting DAYS, HOURS or MINUTES")
        return _TIME_UNITS_MS[self._prev.text.upper()]

    def _parse_iceberg_duration(self) -> int:
        number = self._parse_iceberg_long()
        return number * self._parse_iceberg_unit()

    # ---- WRITE ..., identifier fields, ALTER COLUMN position, UNSET ----
    def _parse_iceberg_write_spec(self) -> WriteSpec:
        spec = WriteSpec()
        seen = False
        while True:
            if self._match_text_seq("DISTRIBUTED", "BY", "PARTITION"):
                spec.set("distributed", True)
            elif self._match_text_seq("UNORDERED"):
                spec.set("unordered", True)
            elif self._match_text_seq("ORDERED", "BY", advance=False) or self._match_text_seq(
                "LOCALLY", "ORDERED", "BY", advance=False
            ):
                spec.set("locally", self._match_text_seq("LOCALLY"))
                self._match_text_seq("ORDERED", "BY")
                spec.set("ordered", True)
                wrapped = self._match(TokenType.L_PAREN)
                spec.set(
                    "expressions", self._parse_csv(lambda: self._parse_ordered(self._parse_iceberg_transform))
                )
                if wrapped:
                    self._match_r_paren()
            else:
                break
            seen = True
        if not seen:
            self.raise_error("Expecting DISTRIBUTED BY PARTITION, [LOCALLY] ORDERED BY or UNORDERED")
        return self.expression(spec)

    def _parse_iceberg_field_list(self) -> list[exp.Expr]:
        # Java's `fieldList`: dotted names separated by commas, no parentheses.
        return self._parse_csv(self._parse_iceberg_dotted_name)

    def _parse_iceberg_dotted_name(self) -> exp.Expr:
        name = self._parse_table_parts()
        if isinstance(name, exp.Table):
            return exp.Literal.string(".".join(p.name for p in name.parts))
        self.raise_error("Expecting a field name")
        return exp.Literal.string("")

    def _parse_iceberg_alter_set(self) -> Any:
        if self._match_text_seq("IDENTIFIER", "FIELDS"):
            return self.expression(IdentifierFields(expressions=self._parse_iceberg_field_list(), drop=False))
        return SparkParser.ALTER_PARSERS["SET"](self)

    def _parse_iceberg_unset(self) -> UnsetProperties:
        if not self._match_text_seq("TBLPROPERTIES"):
            self.raise_error("Expecting TBLPROPERTIES after UNSET")
        exists = self._match_text_seq("IF", "EXISTS")
        keys = self._parse_wrapped_csv(self._parse_string)
        return self.expression(UnsetProperties(expressions=keys, exists=exists))

    def _parse_iceberg_alter_column(self) -> Any:
        index = self._index
        self._match(TokenType.COLUMN)
        column = self._parse_column()
        if self._match_text_seq("FIRST"):
            return self.expression(AlterColumnPosition(this=column))
        if self._match_text_seq("AFTER"):
            return self.expression(AlterColumnPosition(this=column, after=self._parse_column()))
        # sqlglot's own parser reads only a one-part column here: nested paths are read above
        if self._match_text_seq("TYPE"):
            return self.expression(exp.AlterColumn(this=column, dtype=self._parse_types()))
        if self._match(TokenType.COMMENT):
            return self.expression(exp.AlterColumn(this=column, comment=self._parse_string()))
        if self._match_text_seq("DROP", "NOT", "NULL"):
            return self.expression(exp.AlterColumn(this=column, drop=True, allow_null=True))
        if self._match_text_seq("SET", "NOT", "NULL"):
            return self.expression(exp.AlterColumn(this=column, allow_null=False))
        self._retreat(index)
        return SparkParser.ALTER_PARSERS["ALTER"](self)

    # ---- SHOW TABLES / USE ----
    def _parse_iceberg_show_tables(self) -> ShowTables:
        namespace = None
        if self._match_texts(("IN", "FROM")):
            namespace = self._parse_table_parts()
        self._match(TokenType.LIKE)
        like = self._parse_string()
        return self.expression(ShowTables(this=namespace, like=like))

    def _parse_iceberg_show_namespaces(self) -> ShowNamespaces:
        namespace = None
        if self._match_texts(("IN", "FROM")):
            namespace = self._parse_table_parts()
        self._match(TokenType.LIKE)
        like = self._parse_string()
        return self.expression(ShowNamespaces(this=namespace, like=like))

    def _parse_describe(self) -> exp.Describe:
        """sqlglot's DESCRIBE, and Spark's `DESCRIBE [TABLE] [EXTENDED] t column` (the column,
        a name or a dotted path, in the statement's meta `column`)."""
        describe = super()._parse_describe()
        if self._curr and self._curr.token_type != TokenType.SEMICOLON and not describe.args.get("partition"):
            describe.meta["column"] = self._parse_column()
        return describe

    def _parse_iceberg_use(self) -> exp.Use:
        kind = None
        if self._match_texts(("NAMESPACE", "DATABASE", "SCHEMA")):
            kind = exp.var(self._prev.text.upper())
        return self.expression(exp.Use(kind=kind, this=self._parse_table_parts()))


class _IcebergSparkTokenizer(Spark.Tokenizer):
    # SHOW is parsed (SHOW TABLES), not swallowed whole as a command.
    COMMANDS: ClassVar[set[Any]] = Spark.Tokenizer.COMMANDS - {TokenType.SHOW}


class IcebergSpark(Spark):
    """sqlglot's Spark dialect with Iceberg's SQL extensions (see the module's docstring)."""

    Tokenizer = _IcebergSparkTokenizer
    Parser = _IcebergSparkParser


def command_kind(command: exp.Command, limit: int = 8) -> str:
    """The statement kind of a statement sqlglot could not parse further (`CALL
    cat.system.expire_snapshots`, `ALTER TABLE db.t WRITE ORDERED BY`): its words up to the
    first parenthesis or literal, read by sqlglot's tokenizer."""
    rest = command.expression
    rest_text = rest.name if isinstance(rest, exp.Expression) else str(rest or "")
    out = str(command.this).upper()
    words = 1
    for token in Tokenizer().tokenize(rest_text):
        if token.token_type in (TokenType.L_PAREN, TokenType.STRING, TokenType.NUMBER) or words >= limit:
            break
        name = token.token_type in (TokenType.VAR, TokenType.IDENTIFIER)
        text = token.text if name else token.text.upper()
        joined = token.token_type == TokenType.DOT or out.endswith(".")
        out = f"{out}{text}" if joined else f"{out} {text}"
        words += 0 if joined else 1
    return out
