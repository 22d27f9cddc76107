//! Projections, manifest summaries and residuals on hand-built specs and partitions.

use super::*;
use crate::expr::bind::tests::schema;
use crate::expr::manifest_evaluator::ManifestEvaluator;
use crate::expr::residual::ResidualEvaluator;
use crate::expr::struct_evaluator::StructEvaluator;
use crate::expr::{bind, parse_filter};
use crate::manifest::FieldSummary;
use crate::spec::StructValue;

fn spec(fields: &[(i32, &str, Transform)]) -> PartitionSpec {
    PartitionSpec::new(
        0,
        fields
            .iter()
            .enumerate()
            .map(|(i, (src, n, t))| PartitionField::new(*src, 1000 + i as i32, *n, t.clone()))
            .collect(),
    )
}

fn b(f: &str) -> BoundExpr {
    bind(&parse_filter(f).unwrap(), &schema(), true).unwrap()
}

/// The projection printed compactly: `name op [values]`.
fn show(e: &BoundExpr) -> String {
    match e {
        BoundExpr::True => "true".into(),
        BoundExpr::False => "false".into(),
        BoundExpr::And(l, r) => format!("({} and {})", show(l), show(r)),
        BoundExpr::Or(l, r) => format!("({} or {})", show(l), show(r)),
        BoundExpr::Not(c) => format!("not {}", show(c)),
        BoundExpr::Predicate(p) => {
            let v = p
                .literals
                .iter()
                .map(|l| match l {
                    Literal::Int(x) | Literal::Date(x) => x.to_string(),
                    Literal::Long(x) => x.to_string(),
                    Literal::String(s) => s.clone(),
                    other => format!("{other:?}"),
                })
                .collect::<Vec<_>>()
                .join(",");
            format!("{} {} {v}", p.term.name, p.op).trim().to_string()
        }
    }
}

fn inc(f: &str, s: &PartitionSpec) -> String {
    show(&inclusive_projection(&b(f), s).unwrap())
}

fn strict(f: &str, s: &PartitionSpec) -> String {
    show(&strict_projection(&b(f), s).unwrap())
}

#[test]
fn identity_bucket_void() {
    let s = spec(&[(1, "id", Transform::Identity)]);
    assert_eq!(inc("id < 5", &s), "id lt 5");
    assert_eq!(strict("NOT id < 5", &s), "id gt-eq 5");
    let s = spec(&[(1, "id_bucket", Transform::Bucket(16))]);
    let h = |v: i64| match Transform::Bucket(16).apply(&Literal::Long(v)).unwrap() {
        Some(Literal::Int(x)) => x,
        _ => unreachable!(),
    };
    assert_eq!(inc("id = 34", &s), format!("id_bucket eq {}", h(34)));
    assert_eq!(inc("id < 34", &s), "true");
    assert_eq!(inc("id != 34", &s), "true");
    assert_eq!(strict("id != 34", &s), format!("id_bucket not-eq {}", h(34)));
    assert_eq!(strict("id = 34", &s), "false");
    let mut hs = vec![h(1), h(2), h(34)];
    hs.sort();
    hs.dedup();
    let want = hs.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(",");
    assert_eq!(inc("id IN (1, 2, 34)", &s), format!("id_bucket in {want}"));
    let s = spec(&[(1, "v", Transform::Void)]);
    assert_eq!(inc("id = 3", &s), "true");
    assert_eq!(strict("id = 3", &s), "false");
    let s = spec(&[(4, "name", Transform::Identity)]);
    assert_eq!(inc("name IS NULL", &s), "name is-null");
}

#[test]
fn truncate() {
    let s = spec(&[(1, "t", Transform::Truncate(10))]);
    assert_eq!(inc("id < 15", &s), "t lt-eq 10");
    assert_eq!(inc("id < 10", &s), "t lt-eq 0");
    assert_eq!(inc("id <= 10", &s), "t lt-eq 10");
    assert_eq!(inc("id > 19", &s), "t gt-eq 20");
    assert_eq!(inc("id >= -1", &s), "t gt-eq -10");
    assert_eq!(inc("id = -1", &s), "t eq -10");
    assert_eq!(inc("id IN (1, 5, 12)", &s), "t in 0,10");
    assert_eq!(strict("id < 15", &s), "t lt 10");
    assert_eq!(strict("id <= 19", &s), "t lt 20");
    assert_eq!(strict("id > 15", &s), "t gt 10");
    assert_eq!(strict("id >= 20", &s), "t gt 10");
    assert_eq!(strict("id != 15", &s), "t not-eq 10");
    assert_eq!(strict("id = 15", &s), "false");
    let s = spec(&[(4, "n", Transform::Truncate(3))]);
    assert_eq!(inc("name < 'abcd'", &s), "n lt-eq abc");
    assert_eq!(inc("name >= 'abcd'", &s), "n gt-eq abc");
    assert_eq!(inc("name LIKE 'ab%'", &s), "n starts-with ab");
    assert_eq!(inc("name LIKE 'abc%'", &s), "n eq abc");
    assert_eq!(inc("name LIKE 'abcd%'", &s), "n starts-with abc");
    assert_eq!(inc("name NOT LIKE 'abcd%'", &s), "true");
    assert_eq!(inc("name NOT LIKE 'abc%'", &s), "n not-eq abc");
    assert_eq!(strict("name LIKE 'ab%'", &s), "n starts-with ab");
    assert_eq!(strict("name LIKE 'abcd%'", &s), "false");
    assert_eq!(strict("name NOT LIKE 'abcd%'", &s), "n not-starts-with abc");
    assert_eq!(strict("name < 'abcd'", &s), "n lt abc");
    let s = spec(&[(6, "a", Transform::Truncate(50))]);
    // 10.65 -> 10.50; < 10.65 -> <= t(10.64) = 10.50
    assert_eq!(inc("amount < 10.65", &s), "a lt-eq Decimal(1050)");
}

#[test]
fn a_truncation_that_wrapped_says_nothing_of_order() {
    // truncate(10) of an int within 10 of i32::MIN wraps to 2147483646 (Java's arithmetic),
    // the partition of those rows; a literal there wraps the same way.
    let s = spec(&[(2, "t", Transform::Truncate(10))]);
    let wrapped: StructValue = vec![Some(Literal::Int(2_147_483_646))];
    let zero: StructValue = vec![Some(Literal::Int(0))];
    let ev = |f: &str, strict: bool, v: &StructValue| {
        let e = if strict { strict_projection(&b(f), &s) } else { inclusive_projection(&b(f), &s) };
        StructEvaluator::new(e.unwrap(), &s, strict).eval(v)
    };
    // Rows of the wrapped partition (i near i32::MIN) may match `i < 0`, and are not all
    // `i > 5` (before: pruned / proven, so `delete("i > 5")` dropped their file).
    assert!(ev("i < 0", false, &wrapped));
    assert!(ev("i <= -2147483648", false, &wrapped));
    assert!(!ev("i > 5", true, &wrapped));
    assert!(!ev("i >= -2147483648", true, &wrapped));
    // A literal that wraps projects to nothing: no pruning of partition 0 for
    // `i >= -2147483648`, no proof that its rows are `i < -2147483641`.
    assert_eq!(inc("i < -2147483641", &s), "true");
    assert_eq!(strict("i < -2147483641", &s), "false");
    assert!(ev("i >= -2147483648", false, &zero));
    assert!(!ev("i < -2147483641", true, &zero));
    // Equality maps rows and literal through the same function: still exact.
    assert_eq!(inc("i = -2147483648", &s), "t eq 2147483646");
    assert!(ev("i = -2147483648", false, &wrapped));
    assert!(!ev("i = -2147483648", false, &zero));
    // Manifest summaries whose upper bound wrapped: order says nothing.
    let sm = [summary(
        Some(0i32.to_le_bytes().to_vec()),
        Some(2_147_483_646i32.to_le_bytes().to_vec()),
        false,
        None,
    )];
    let mev = |f: &str| ManifestEvaluator::new(&b(f), &s).unwrap().eval_summaries(&sm);
    assert!(mev("i <= -2147483648"));
    assert!(mev("i < -5"));
    let plain = [summary(Some(0i32.to_le_bytes().to_vec()), Some(20i32.to_le_bytes().to_vec()), false, None)];
    assert!(!ManifestEvaluator::new(&b("i < -5"), &s).unwrap().eval_summaries(&plain));
}

#[test]
fn temporal_with_pre_1970_fixes() {
    let s = spec(&[(5, "d_year", Transform::Year)]);
    assert_eq!(inc("d < '2020-01-01'", &s), "d_year lt-eq 49");
    assert_eq!(inc("d = '1969-06-01'", &s), "d_year in -1,0");
    assert_eq!(inc("d < '1969-06-01'", &s), "d_year lt-eq 0");
    assert_eq!(inc("d > '1969-06-01'", &s), "d_year gt-eq -1");
    assert_eq!(inc("d != '1969-06-01'", &s), "true");
    assert_eq!(strict("d > '1969-06-01'", &s), "d_year gt 0");
    assert_eq!(strict("d > '2020-06-01'", &s), "d_year gt 50");
    assert_eq!(strict("d < '1969-06-01'", &s), "d_year lt -1");
    assert_eq!(strict("d != '1969-06-01'", &s), "d_year not-in -1,0");
    assert_eq!(strict("d = '1969-06-01'", &s), "false");
    let s = spec(&[(3, "ts_day", Transform::Day)]);
    assert_eq!(inc("ts >= '1969-12-31T12:00:00+00:00'", &s), "ts_day gt-eq -1");
    assert_eq!(inc("ts < '1970-01-01'", &s), "ts_day lt-eq 0"); // day(-1us) = -1, fixed to 0
    assert_eq!(inc("ts IN ('1969-12-31', '1970-01-02')", &s), "ts_day in -1,0,1");
    let s = spec(&[(3, "ts_hour", Transform::Hour), (3, "ts_month", Transform::Month)]);
    assert_eq!(inc("ts = '2024-01-01T05:00:00+00:00'", &s), "(ts_hour eq 473357 and ts_month eq 648)");
    assert_eq!(strict("ts < '2024-01-01T05:00:00+00:00'", &s), "(ts_hour lt 473357 or ts_month lt 648)");
}

fn summary(lo: Option<Vec<u8>>, hi: Option<Vec<u8>>, null: bool, nan: Option<bool>) -> FieldSummary {
    FieldSummary { contains_null: null, contains_nan: nan, lower_bound: lo, upper_bound: hi }
}

#[test]
fn manifest_evaluator() {
    let s = spec(&[(1, "id", Transform::Identity)]);
    let sm = [summary(Some(30i64.to_le_bytes().to_vec()), Some(79i64.to_le_bytes().to_vec()), false, None)];
    let ev = |f: &str, sm: &[FieldSummary]| ManifestEvaluator::new(&b(f), &s).unwrap().eval_summaries(sm);
    for (f, want) in [
        ("id < 30", false),
        ("id <= 30", true),
        ("id > 79", false),
        ("id = 80", false),
        ("id = 31", true),
        ("id IN (1, 90)", false),
        ("id IN (1, 40)", true),
        ("id != 30", true),
        ("id NOT IN (30)", true),
    ] {
        assert_eq!(ev(f, &sm), want, "{f}");
    }
    let many = format!("id IN ({})", (100..400).map(|x| x.to_string()).collect::<Vec<_>>().join(","));
    assert!(ev(&many, &sm));
    // all null: no bounds
    let nulls = [summary(None, None, true, None)];
    let si = spec(&[(2, "i", Transform::Identity)]);
    let evi = |f: &str| ManifestEvaluator::new(&b(f), &si).unwrap().eval_summaries(&nulls);
    assert!(!evi("i = 5"));
    assert!(!evi("i < 5"));
    assert!(!evi("i IS NOT NULL"));
    assert!(evi("i IS NULL"));
    assert!(evi("i != 5"));
    // strings with prefix
    let s2 = spec(&[(4, "n", Transform::Identity)]);
    let sm2 = [summary(Some(b"abc".to_vec()), Some(b"abd".to_vec()), false, None)];
    let ev2 = |f: &str| ManifestEvaluator::new(&b(f), &s2).unwrap().eval_summaries(&sm2);
    assert!(ev2("name LIKE 'ab%'"));
    assert!(!ev2("name LIKE 'b%'"));
    assert!(!ev2("name NOT LIKE 'ab%'"));
    assert!(ev2("name NOT LIKE 'abc%'"));
    // float: all NaN, unknown NaN
    let s3 = spec(&[(7, "f", Transform::Identity)]);
    let ev3 = |f: &str, sm: &[FieldSummary]| ManifestEvaluator::new(&b(f), &s3).unwrap().eval_summaries(sm);
    let nan_only = [summary(None, None, false, Some(true))];
    assert!(!ev3("NOT isnan(f)", &nan_only));
    assert!(ev3("isnan(f)", &nan_only));
    let no_nan =
        [summary(Some(1f32.to_le_bytes().to_vec()), Some(2f32.to_le_bytes().to_vec()), false, Some(false))];
    assert!(!ev3("isnan(f)", &no_nan));
    let null_unknown_nan = [summary(None, None, true, None)];
    assert!(ev3("f IS NOT NULL", &null_unknown_nan));
    // through a day transform: summary bounds are partition values (dates)
    let s4 = spec(&[(3, "ts_day", Transform::Day)]);
    let sm4 =
        [summary(Some(19723i32.to_le_bytes().to_vec()), Some(19724i32.to_le_bytes().to_vec()), false, None)];
    let ev4 = |f: &str| ManifestEvaluator::new(&b(f), &s4).unwrap().eval_summaries(&sm4);
    assert!(ev4("ts >= '2024-01-02T10:00:00+00:00'"));
    assert!(!ev4("ts >= '2024-01-03'"));
    assert!(!ev4("ts < '2024-01-01'"));
}

#[test]
fn zero_partitions_compare_as_rows_do() {
    // An identity partition of a float column holds -0.0 or 0.0; rows compare the two equal
    // (SQL), where Java 1.12's summaries and partition tests order -0.0 below 0.0.
    let s = spec(&[(7, "f", Transform::Identity)]);
    let zero =
        |v: f32| summary(Some(v.to_le_bytes().to_vec()), Some(v.to_le_bytes().to_vec()), false, Some(false));
    let ev = |f: &str, sm: &[FieldSummary]| ManifestEvaluator::new(&b(f), &s).unwrap().eval_summaries(sm);
    for f in ["f >= 0.0", "f = 0.0", "f IN (0.0, 2.0)"] {
        assert!(ev(f, &[zero(-0.0)]), "{f} on a manifest of -0.0");
    }
    for f in ["f <= -0.0", "f = -0.0"] {
        assert!(ev(f, &[zero(0.0)]), "{f} on a manifest of 0.0");
    }
    assert!(!ev("f < 0.0", &[zero(-0.0)]) && !ev("f > -0.0", &[zero(0.0)]));

    let neg = vec![Some(Literal::Float(-0.0))];
    let pos = vec![Some(Literal::Float(0.0))];
    let incl = |f: &str, part: &StructValue| {
        StructEvaluator::new(inclusive_projection(&b(f), &s).unwrap(), &s, false).eval(part)
    };
    assert!(incl("f >= 0.0", &neg) && incl("f = 0.0", &neg) && incl("f IN (0.0)", &neg));
    assert!(incl("f <= -0.0", &pos) && incl("f IN (-0.0, 3.0)", &pos));
    assert!(!incl("f < 0.0", &neg) && !incl("f NOT IN (0.0)", &neg) && !incl("f != 0.0", &neg));
    // A residual is never dropped on Java's order: `f < 0.0` holds for no row of -0.0.
    let r = ResidualEvaluator::new(&b("f < 0.0"), &s).unwrap();
    assert_eq!(r.residual_for(&neg), BoundExpr::False);
    let r = ResidualEvaluator::new(&b("f <= 0.0"), &s).unwrap();
    assert_eq!(r.residual_for(&neg), BoundExpr::True);
}

#[test]
fn partition_struct_and_residuals() {
    let s = spec(&[(3, "ts_day", Transform::Day), (4, "name", Transform::Identity)]);
    let part = vec![Some(Literal::Date(19723)), Some(Literal::String("x".into()))]; // 2024-01-01
    let incl = StructEvaluator::new(
        inclusive_projection(&b("ts >= '2024-01-01T10:00:00+00:00'"), &s).unwrap(),
        &s,
        false,
    );
    assert!(incl.eval(&part));
    let incl = StructEvaluator::new(inclusive_projection(&b("ts >= '2024-01-02'"), &s).unwrap(), &s, false);
    assert!(!incl.eval(&part));
    let null_part = vec![None, None];
    let incl = StructEvaluator::new(inclusive_projection(&b("name != 'x'"), &s).unwrap(), &s, false);
    assert!(incl.eval(&null_part));
    assert!(!incl.eval(&part));

    let f = b("ts >= '2024-01-01' AND ts < '2024-01-01T12:00:00+00:00' AND name = 'x'");
    let r = ResidualEvaluator::new(&f, &s).unwrap();
    // ts >= day start holds for the whole day; ts < noon does not; name = 'x' holds.
    assert_eq!(show(&r.residual_for(&part)), "ts lt Timestamptz(1704110400000000)");
    let other = vec![Some(Literal::Date(19723)), Some(Literal::String("y".into()))];
    assert_eq!(r.residual_for(&other), BoundExpr::False);
    let r = ResidualEvaluator::new(&b("name != 'x'"), &s).unwrap();
    assert_eq!(r.residual_for(&vec![None, Some(Literal::String("y".into()))]), BoundExpr::True);
    // a null partition value proves nothing for not-eq in strict mode
    assert_eq!(show(&r.residual_for(&null_part)), "name not-eq x");
    let unpart = ResidualEvaluator::new(&b("id > 1"), &PartitionSpec::unpartitioned()).unwrap();
    assert_eq!(show(&unpart.residual_for(&vec![])), "id gt 1");
}
