//! The syntax of Iceberg Java's string form of a sort order (the `sort_order` argument of
//! `rewrite_data_files`), parsed with `sqlparser` as an SQL `ORDER BY` list:
//!
//! `id DESC NULLS LAST, bucket(4, id), truncate(name, 2), days(ts), s.a, `` `quoted name` ``
//!
//! Only the syntax: each term is a column (`a`, `a.b`, `` `a b` ``) or a call
//! `name(args)` whose args are columns and integers, with optional ASC / DESC and
//! NULLS FIRST / LAST. Which transforms exist, their arguments and the columns' existence are
//! checked by the caller against the table (`icefloe.sorting.parse_sort_order`).

use sqlparser::ast::{
    Expr, Function, FunctionArg, FunctionArgExpr, FunctionArguments, Ident, ObjectNamePart, OrderByExpr,
    OrderBySort, Value,
};
use sqlparser::dialect::GenericDialect;
use sqlparser::keywords::Keyword;
use sqlparser::parser::{Parser, ParserError};
use sqlparser::tokenizer::Token;

use crate::error::{validation, Result};

/// Ascending or descending, as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TermDirection {
    Asc,
    Desc,
}

/// NULLS FIRST or NULLS LAST, as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TermNullOrder {
    First,
    Last,
}

/// One term of a sort order string, unchecked against any schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SortTerm {
    /// The column paths: the term's column, or a call's column arguments in order
    /// (`zorder(a, b)` has two; the caller decides how many a transform takes).
    pub columns: Vec<Vec<String>>,
    /// The call's name lower-cased (`None` for a bare column).
    pub transform: Option<String>,
    /// The call's integer arguments in order.
    pub args: Vec<i64>,
    pub direction: Option<TermDirection>,
    pub null_order: Option<TermNullOrder>,
}

/// Parses `text` into its terms; anything but columns, calls on columns and integers, and
/// ASC / DESC / NULLS FIRST / LAST is a ValidationError "sort_order '<text>': expected ...,
/// found ...".
pub fn parse_sort_order_terms(text: &str) -> Result<Vec<SortTerm>> {
    let fail = |expected: &str, found: &str| {
        validation(format!("sort_order '{text}': expected {expected}, found {found}"))
    };
    if text.trim().is_empty() {
        return Err(fail("a column or a transform", "the end"));
    }
    let dialect = GenericDialect {};
    let syntax = |e: ParserError| {
        let message = match e {
            ParserError::TokenizerError(s) | ParserError::ParserError(s) => s,
            ParserError::RecursionLimitExceeded => {
                "expected a shallower term, found too deep a nesting".into()
            }
        };
        // sqlparser's "Expected: X, found: Y at Line: 1, Column: 4", in this crate's words.
        let message = message.replacen("Expected: ", "expected ", 1).replacen(", found: ", ", found ", 1);
        validation(format!("sort_order '{text}': {message}"))
    };
    let mut parser = Parser::new(&dialect).try_with_sql(text).map_err(syntax)?;
    let items = parser.parse_comma_separated(Parser::parse_order_by_expr).map_err(syntax)?;
    let next = parser.next_token();
    match &next.token {
        Token::EOF => {}
        // sqlparser takes NULLS only with FIRST / LAST and leaves a lone NULLS unread.
        Token::Word(w) if w.keyword == Keyword::NULLS => {
            let after = parser.peek_token();
            let found =
                if after.token == Token::EOF { "the end".to_string() } else { format!("'{}'", after.token) };
            return Err(fail("FIRST or LAST after NULLS", &found));
        }
        other => return Err(fail("',', ASC, DESC, NULLS or the end of the order", &format!("'{other}'"))),
    }
    items.iter().map(|item| term(item, &fail)).collect()
}

fn term(item: &OrderByExpr, fail: &dyn Fn(&str, &str) -> crate::Error) -> Result<SortTerm> {
    if let Some(fill) = &item.with_fill {
        return Err(fail("ASC, DESC, NULLS or the end of the term", &format!("'{fill}'")));
    }
    let direction = match &item.options.sort {
        None => None,
        Some(OrderBySort::Asc) => Some(TermDirection::Asc),
        Some(OrderBySort::Desc) => Some(TermDirection::Desc),
        Some(OrderBySort::Using(op)) => return Err(fail("ASC or DESC", &format!("'USING {op}'"))),
    };
    let null_order =
        item.options.nulls_first.map(|first| if first { TermNullOrder::First } else { TermNullOrder::Last });
    let (columns, transform, args) = match &item.expr {
        Expr::Function(f) => call(f, fail)?,
        e => (vec![column(e, fail, "a column or a transform")?], None, vec![]),
    };
    Ok(SortTerm { columns, transform, args, direction, null_order })
}

type Call = (Vec<Vec<String>>, Option<String>, Vec<i64>);

fn call(f: &Function, fail: &dyn Fn(&str, &str) -> crate::Error) -> Result<Call> {
    let found = || format!("'{f}'");
    let name = match f.name.0.as_slice() {
        [ObjectNamePart::Identifier(i)] if i.quote_style.is_none() => i.value.to_ascii_lowercase(),
        _ => return Err(fail("a transform name", &format!("'{}'", f.name))),
    };
    let plain = !f.uses_odbc_syntax
        && matches!(f.parameters, FunctionArguments::None)
        && f.within_group.is_empty()
        && f.filter.is_none()
        && f.null_treatment.is_none()
        && f.over.is_none();
    let list = match &f.args {
        FunctionArguments::List(l) if plain && l.duplicate_treatment.is_none() && l.clauses.is_empty() => l,
        _ => return Err(fail(&format!("{name}(columns and integers)"), &found())),
    };
    let (mut columns, mut args) = (vec![], vec![]);
    for arg in &list.args {
        let FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) = arg else {
            return Err(fail(&format!("a column or an integer in {name}(...)"), &format!("'{arg}'")));
        };
        match e {
            Expr::Value(v) => match &v.value {
                Value::Number(n, false) if n.bytes().all(|c| c.is_ascii_digit()) => match n.parse::<i64>() {
                    Ok(k) => args.push(k),
                    Err(_) => return Err(fail(&format!("an integer argument of {name}(...)"), n)),
                },
                _ => return Err(fail(&format!("a column or an integer in {name}(...)"), &format!("'{e}'"))),
            },
            _ => columns.push(column(e, fail, &format!("a column or an integer in {name}(...)"))?),
        }
    }
    Ok((columns, Some(name), args))
}

/// A column path: `a`, `a.b`, `` `a b` `` (backquoted names keep their text). Spark reads
/// `"a"` as a string, so a double-quoted name is refused as Java's parser refuses it.
fn column(e: &Expr, fail: &dyn Fn(&str, &str) -> crate::Error, expected: &str) -> Result<Vec<String>> {
    let part = |i: &Ident| match i.quote_style {
        None | Some('`') => Ok(i.value.clone()),
        Some(_) => Err(fail(expected, &format!("'{e}'"))),
    };
    match e {
        Expr::Identifier(i) => Ok(vec![part(i)?]),
        Expr::CompoundIdentifier(parts) => parts.iter().map(part).collect(),
        other => Err(fail(expected, &format!("'{other}'"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    fn col(path: &[&str]) -> SortTerm {
        SortTerm {
            columns: vec![path.iter().map(|s| s.to_string()).collect()],
            transform: None,
            args: vec![],
            direction: None,
            null_order: None,
        }
    }

    fn p(text: &str) -> Vec<SortTerm> {
        parse_sort_order_terms(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    fn refused(text: &str) -> String {
        let e = parse_sort_order_terms(text).expect_err(text);
        assert_eq!(e.kind(), ErrorKind::Validation, "{text}: {e}");
        let message = e.to_string();
        assert!(message.contains(&format!("sort_order '{text}': expected ")), "{message}");
        message
    }

    #[test]
    fn sort_order_accepted_forms() {
        let terms = p("id DESC NULLS LAST, bucket(4, id), Truncate(name, 2), days(ts) asc nulls first, s.a, `quoted name`, `a.b`.c");
        let mut desc = col(&["id"]);
        desc.direction = Some(TermDirection::Desc);
        desc.null_order = Some(TermNullOrder::Last);
        let bucket = SortTerm { transform: Some("bucket".into()), args: vec![4], ..col(&["id"]) };
        let truncate = SortTerm { transform: Some("truncate".into()), args: vec![2], ..col(&["name"]) };
        let days = SortTerm {
            transform: Some("days".into()),
            direction: Some(TermDirection::Asc),
            null_order: Some(TermNullOrder::First),
            ..col(&["ts"])
        };
        let want =
            vec![desc, bucket, truncate, days, col(&["s", "a"]), col(&["quoted name"]), col(&["a.b", "c"])];
        assert_eq!(terms, want);
        // The names sqlparser knows as keywords or special functions are calls like any other.
        for name in [
            "identity",
            "year",
            "years",
            "month",
            "months",
            "day",
            "date",
            "hour",
            "hours",
            "date_hour",
            "zorder",
            "void",
        ] {
            let terms = p(&format!("{name}(ts)"));
            assert_eq!(terms, vec![SortTerm { transform: Some(name.into()), ..col(&["ts"]) }]);
        }
        let terms = p("zorder(id, s.a)");
        assert_eq!(terms[0].columns, vec![vec!["id".to_string()], vec!["s".into(), "a".into()]]);
        assert_eq!(p("bucket(id, 16)")[0].args, vec![16]);
        assert_eq!(p("bucket(id)")[0].args, Vec::<i64>::new());
    }

    #[test]
    fn sort_order_refusals() {
        assert!(refused("").contains("expected a column or a transform, found the end"));
        assert!(refused("id DESC NULLS").contains("expected FIRST or LAST after NULLS, found the end"));
        assert!(refused("id NULLS ASC").contains("expected FIRST or LAST after NULLS, found 'ASC'"));
        assert!(refused("id ASCENDING").contains("found 'ASCENDING'"));
        assert!(refused("id ASC ASC").contains("found 'ASC'"));
        assert!(refused("id NULLS FIRST DESC").contains("found 'DESC'"));
        assert!(refused("id,").contains("found EOF"));
        assert!(refused("id + 1").contains("found 'id + 1'"));
        assert!(refused("(id)").contains("found '(id)'"));
        assert!(refused("'id'").contains("found ''id''"));
        assert!(refused("\"id\"").contains("found '\"id\"'"));
        assert!(refused("bucket(4, 'a')").contains("found ''a''"));
        assert!(refused("bucket(-4, id)").contains("found '-4'"));
        assert!(refused("bucket(4.5, id)").contains("found '4.5'"));
        assert!(refused("bucket(99999999999999999999, id)").contains("an integer argument"));
        assert!(refused("bucket(4, lower(id))").contains("found 'lower(id)'"));
        assert!(refused("bucket(n => 4, id)").contains("found 'n => 4'"));
        assert!(refused("bucket(DISTINCT 4, id)").contains("bucket(columns and integers)"));
        assert!(refused("bucket(4, id) OVER ()").contains("bucket(columns and integers)"));
        assert!(refused("x.bucket(4, id)").contains("expected a transform name, found 'x.bucket'"));
        assert!(refused("id WITH FILL").contains("WITH FILL"));
        assert!(refused("id USING <").contains("found"));
        assert!(refused("id; id").contains("found ';'"));
        assert!(refused("id DESC id").contains("found 'id'"));
    }
}
