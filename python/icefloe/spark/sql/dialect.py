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
- `USE NAMESPACE|DATABASE|SCHEMA ns` and `SHOW TABLES [IN|FROM ns] [[LIKE] 'pattern']`.

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
    "DropPartitionField",
    "IcebergSpark",
    "ReplacePartitionField",
    "ShowTables",
    "Transform",
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


class ShowTables(exp.Expression):
    """`SHOW TABLES [IN|FROM ns] [[LIKE] 'pattern']`: `this` the namespace (an exp.Table of
    its parts) or None, `like` the pattern or None."""

    arg_types: ClassVar[dict[str, bool]] = {"this": False, "like": False}


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
    }

    SHOW_PARSERS: ClassVar[dict[str, Any]] = {
        **SparkParser.SHOW_PARSERS,
        "TABLES": lambda self: self._parse_iceberg_show_tables(),
    }
    SHOW_TRIE: ClassVar[dict[Any, Any]] = new_trie(key.split(" ") for key in SHOW_PARSERS)

    STATEMENT_PARSERS: ClassVar[dict[Any, Any]] = {
        **SparkParser.STATEMENT_PARSERS,
        TokenType.USE: lambda self: self._parse_iceberg_use(),
        TokenType.SHOW: lambda self: self._parse_show(),
    }

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
        if self._match_text_seq("PARTITION", "FIELD"):
            return self.expression(DropPartitionField(this=self._parse_iceberg_transform()))
        return self._parse_alter_table_drop()

    def _parse_iceberg_alter_replace(self) -> Any:
        if self._match_text_seq("PARTITION", "FIELD"):
            old = self._parse_iceberg_transform()
            if not self._match(TokenType.WITH):
                self.raise_error("Expecting WITH in REPLACE PARTITION FIELD")
            new = self._parse_iceberg_transform()
            alias = self._parse_id_var() if self._match(TokenType.ALIAS) else None
            return self.expression(ReplacePartitionField(this=old, expression=new, alias=alias))
        return SparkParser.ALTER_PARSERS["REPLACE"](self)

    # ---- SHOW TABLES / USE ----
    def _parse_iceberg_show_tables(self) -> ShowTables:
        namespace = None
        if self._match_texts(("IN", "FROM")):
            namespace = self._parse_table_parts()
        self._match(TokenType.LIKE)
        like = self._parse_string()
        return self.expression(ShowTables(this=namespace, like=like))

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
