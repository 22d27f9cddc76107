//! Java's `MetricsConfig` rules: modes, the inferred limit, sorted columns, column properties.

use super::*;
use crate::error::ErrorKind;
use crate::spec::{ListType, MapType, StructType};

fn wide_schema(n: i32) -> Schema {
    Schema::new(
        0,
        (1..=n).map(|i| NestedField::optional(i, format!("c{i}"), PrimitiveType::Int.into())).collect(),
        vec![],
    )
    .unwrap()
}

#[test]
fn modes_parse() {
    assert_eq!(MetricsMode::parse("None").unwrap(), MetricsMode::None);
    assert_eq!(MetricsMode::parse("counts").unwrap(), MetricsMode::Counts);
    assert_eq!(MetricsMode::parse("truncate(8)").unwrap(), MetricsMode::Truncate(8));
    assert_eq!(MetricsMode::parse("full").unwrap(), MetricsMode::Full);
    for bad in ["truncate(0)", "truncate", "all", "truncate(-1)"] {
        assert_eq!(MetricsMode::parse(bad).unwrap_err().kind(), ErrorKind::Validation, "{bad}");
    }
}

fn modes_of(s: &Schema, limit: &str) -> Vec<(i32, MetricsMode)> {
    let p = BTreeMap::from([(METRICS_MAX_INFERRED_COLUMNS.to_string(), limit.to_string())]);
    let c = MetricsConfig::from_table_properties(&p, s).unwrap();
    let mut ids: Vec<i32> = leaves(s).iter().map(|l| l.id).collect();
    ids.sort();
    ids.into_iter().map(|id| (id, c.mode(id))).collect()
}

/// Java's `TestMetricsConfig` cases: a struct's fields come after the top level's leaves,
/// a map's key and value and a list's element before what is nested in them.
#[test]
fn the_inferred_columns_are_javas_limit_field_ids() {
    let t = MetricsMode::Truncate(16);
    let n = MetricsMode::None;
    let int = || -> Type { PrimitiveType::Int.into() };
    // struct<a, b> (ids 2, 3) before the top-level `top` (4): limit 1 picks `top`
    let s = Schema::new(
        0,
        vec![
            NestedField::optional(
                1,
                "s",
                Type::Struct(StructType::new(vec![
                    NestedField::optional(2, "a", int()),
                    NestedField::optional(3, "b", int()),
                ])),
            ),
            NestedField::optional(4, "top", int()),
        ],
        vec![],
    )
    .unwrap();
    assert_eq!(modes_of(&s, "1"), vec![(2, n), (3, n), (4, t)]);
    assert_eq!(modes_of(&s, "2"), vec![(2, t), (3, n), (4, t)]);
    assert_eq!(modes_of(&s, "3"), vec![(2, t), (3, t), (4, t)]);
    // a list of maps of int to struct<x, y>: the map's key is not counted by Java's
    // getProjectedIds (its value is nested), but limitFieldIds takes it
    let map = Type::Map(MapType {
        key_field: NestedField::required(3, "key", int()).into(),
        value_field: NestedField::optional(
            4,
            "value",
            Type::Struct(StructType::new(vec![
                NestedField::optional(5, "x", int()),
                NestedField::optional(6, "y", int()),
            ])),
        )
        .into(),
    });
    let s = Schema::new(
        0,
        vec![
            NestedField::optional(
                1,
                "l",
                Type::List(ListType { element_field: NestedField::optional(2, "element", map).into() }),
            ),
            NestedField::optional(7, "top", int()),
        ],
        vec![],
    )
    .unwrap();
    assert_eq!(projected_count(&s), 3, "x, y and top");
    assert_eq!(modes_of(&s, "2"), vec![(3, t), (5, n), (6, n), (7, t)]);
    assert_eq!(modes_of(&s, "3"), vec![(3, t), (5, t), (6, t), (7, t)], "3 ids: all inferred");
}

#[test]
fn sorted_columns_get_at_least_truncate_16_as_in_javas_for_table() {
    use crate::spec::{NullOrder, SortDirection, SortField};
    let s = wide_schema(5);
    let by = |id, t| SortField::new(id, t, SortDirection::Ascending, NullOrder::NullsFirst);
    // identity, day and truncate preserve order; bucket does not
    let order = SortOrder::new(
        1,
        vec![
            by(1, Transform::Identity),
            by(2, Transform::Day),
            by(3, Transform::Bucket(4)),
            by(4, Transform::Truncate(2)),
        ],
    );
    let modes = |props: &[(&str, &str)]| {
        let p: BTreeMap<String, String> = props.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let c = MetricsConfig::for_table(&p, &s, &order).unwrap();
        (1..=5).map(|id| c.mode(id)).collect::<Vec<_>>()
    };
    let (t16, n, c, f) =
        (MetricsMode::Truncate(16), MetricsMode::None, MetricsMode::Counts, MetricsMode::Full);
    assert_eq!(modes(&[(METRICS_DEFAULT, "counts")]), vec![t16, t16, c, t16, c]);
    assert_eq!(modes(&[(METRICS_DEFAULT, "none")]), vec![t16, t16, n, t16, n]);
    assert_eq!(modes(&[(METRICS_DEFAULT, "full")]), vec![f, f, f, f, f]);
    assert_eq!(modes(&[(METRICS_DEFAULT, "truncate(4)")])[0], MetricsMode::Truncate(4));
    // a column's own property still wins
    let own = format!("{METRICS_COLUMN_PREFIX}c1");
    assert_eq!(modes(&[(METRICS_DEFAULT, "none"), (own.as_str(), "counts")]), vec![c, t16, n, t16, n]);
    // past the inferred limit (2 of 5 columns): sorted columns too, at truncate(16)
    assert_eq!(modes(&[(METRICS_MAX_INFERRED_COLUMNS, "2")]), vec![t16, t16, n, t16, n]);
    // the unsorted order changes nothing
    let p = BTreeMap::from([(METRICS_DEFAULT.to_string(), "none".to_string())]);
    assert_eq!(MetricsConfig::for_table(&p, &s, &SortOrder::unsorted()).unwrap().mode(1), n);
}

#[test]
fn only_first_100_columns_get_the_inferred_default() {
    let s = wide_schema(120);
    let c = MetricsConfig::from_table_properties(&BTreeMap::new(), &s).unwrap();
    assert_eq!(c.mode(100), MetricsMode::Truncate(16));
    assert_eq!(c.mode(101), MetricsMode::None);
    let p = BTreeMap::from([(METRICS_COLUMN_PREFIX.to_string() + "c110", "counts".to_string())]);
    assert_eq!(MetricsConfig::from_table_properties(&p, &s).unwrap().mode(110), MetricsMode::Counts);
    let p = BTreeMap::from([(METRICS_DEFAULT.to_string(), "full".to_string())]);
    assert_eq!(MetricsConfig::from_table_properties(&p, &s).unwrap().mode(120), MetricsMode::Full);
}
