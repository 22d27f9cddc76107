//! Edge cases of the metrics evaluators on hand-built metrics (after Java's
//! TestInclusiveMetricsEvaluator / TestStrictMetricsEvaluator situations).

use super::*;
use crate::expr::bind::tests::schema;
use crate::expr::{bind, parse_filter, Datum, Expression, Operator, Predicate};

/// Columns (see bind::tests::schema): 1 id long required, 2 i int, 3 ts timestamptz,
/// 4 name string, 7 f float.
fn file() -> DataFile {
    let mut f = DataFile::new_data("f.parquet", 50, 1000);
    // id in [30, 79], no nulls
    f.value_counts.insert(1, 50);
    f.null_value_counts.insert(1, 0);
    f.lower_bounds.insert(1, 30i64.to_le_bytes().to_vec());
    f.upper_bounds.insert(1, 79i64.to_le_bytes().to_vec());
    // i: all null
    f.value_counts.insert(2, 50);
    f.null_value_counts.insert(2, 50);
    // name: truncated bounds "abc" .. "abd", some nulls
    f.value_counts.insert(4, 50);
    f.null_value_counts.insert(4, 10);
    f.lower_bounds.insert(4, b"abc".to_vec());
    f.upper_bounds.insert(4, b"abd".to_vec());
    // f: all NaN
    f.value_counts.insert(7, 50);
    f.null_value_counts.insert(7, 0);
    f.nan_value_counts.insert(7, 50);
    f
}

fn inc(filter: &str, f: &DataFile) -> bool {
    let e = bind(&parse_filter(filter).unwrap(), &schema(), true).unwrap();
    InclusiveMetricsEvaluator::new(&e).eval(f)
}

fn strict(filter: &str, f: &DataFile) -> bool {
    let e = bind(&parse_filter(filter).unwrap(), &schema(), true).unwrap();
    StrictMetricsEvaluator::new(&e).eval(f)
}

#[test]
fn inclusive_ranges() {
    let f = file();
    for (flt, want) in [
        ("id < 30", false),
        ("id < 31", true),
        ("id <= 29", false),
        ("id <= 30", true),
        ("id > 79", false),
        ("id > 78", true),
        ("id >= 80", false),
        ("id >= 79", true),
        ("id = 29", false),
        ("id = 80", false),
        ("id = 50", true),
        ("id != 50", true),
        ("id IN (1, 2)", false),
        ("id IN (25, 85)", false),
        ("id IN (25, 50)", true),
        ("id NOT IN (30, 79)", true),
        ("NOT id < 30", true),
        ("NOT id >= 30", false),
        ("id < 30 OR id > 79", false),
        ("id > 50 AND id < 10", false),
        ("true", true),
        ("false", false),
    ] {
        assert_eq!(inc(flt, &f), want, "{flt}");
    }
    // More than 200 literals: no pruning, even when all are outside the range.
    let many =
        Expression::Predicate(Predicate::set(Operator::In, "id", (100..400).map(Datum::Long).collect()));
    let e = bind(&many, &schema(), true).unwrap();
    assert!(InclusiveMetricsEvaluator::new(&e).eval(&f));
    let few =
        Expression::Predicate(Predicate::set(Operator::In, "id", (100..300).map(Datum::Long).collect()));
    let e = bind(&few, &schema(), true).unwrap();
    assert!(!InclusiveMetricsEvaluator::new(&e).eval(&f));
}

#[test]
fn inclusive_nulls_and_nans() {
    let f = file();
    for (flt, want) in [
        ("i IS NULL", true),
        ("i IS NOT NULL", false),
        ("i < 5", false),
        ("i = 5", false),
        ("i IN (1, 2)", false),
        ("i != 5", true),
        ("id IS NULL", true), // required: binds to false? no: id is required -> false
        ("name IS NULL", true),
        ("isnan(f)", true),
        ("NOT isnan(f)", false),
        ("f < 1.0", false),
        ("f > 1.0", false),
        ("f = 1.0", false),
        ("f != 1.0", true),
    ] {
        let got = inc(flt, &f);
        let want = if flt == "id IS NULL" { false } else { want };
        assert_eq!(got, want, "{flt}");
    }
    let mut g = file();
    g.null_value_counts.insert(2, 0);
    g.value_counts.insert(2, 50);
    assert!(!inc("i IS NULL", &g));
    // NaN lower bound: ignored (may match).
    let mut h = file();
    h.nan_value_counts.insert(7, 1);
    h.lower_bounds.insert(7, f32::NAN.to_le_bytes().to_vec());
    h.upper_bounds.insert(7, f32::NAN.to_le_bytes().to_vec());
    assert!(inc("f < 1.0", &h));
    assert!(inc("f = 1.0", &h));
    // record_count 0: skipped; missing stats: may match.
    let mut z = file();
    z.record_count = 0;
    assert!(!inc("true", &z));
    let bare = DataFile::new_data("b.parquet", 10, 100);
    for flt in ["id = 1", "i IS NOT NULL", "name LIKE 'x%'", "isnan(f)", "id IN (1,2)", "NOT isnan(f)"] {
        assert!(inc(flt, &bare), "{flt}");
    }
}

#[test]
fn inclusive_starts_with_truncated_bounds() {
    let f = file();
    for (flt, want) in [
        ("name LIKE 'a%'", true),
        ("name LIKE 'ab%'", true),
        ("name LIKE 'abc%'", true),
        ("name LIKE 'abcz%'", true),
        ("name LIKE 'abd%'", true),
        ("name LIKE 'abda%'", false), // every value <= "abd" < "abda..."
        ("name LIKE 'abe%'", false),
        ("name LIKE 'aa%'", false),
        ("name LIKE 'b%'", false),
        ("name NOT LIKE 'ab%'", true), // nulls present
        ("name = 'abcz'", true),
        ("name = 'abe'", false),
        ("name < 'abc'", false),
        ("name <= 'abc'", true),
    ] {
        assert_eq!(inc(flt, &f), want, "{flt}");
    }
    let mut g = file();
    g.null_value_counts.insert(4, 0);
    assert!(!inc("name NOT LIKE 'ab%'", &g));
    assert!(inc("name NOT LIKE 'abc%'", &g)); // upper "abd" does not start with it
    assert!(inc("name NOT LIKE 'abcd%'", &g)); // bound shorter than the prefix
}

#[test]
fn strict_cases() {
    let f = file();
    for (flt, want) in [
        ("id < 80", true),
        ("id < 79", false),
        ("id <= 79", true),
        ("id > 29", true),
        ("id > 30", false),
        ("id >= 30", true),
        ("id = 50", false),
        ("id != 29", true),
        ("id != 80", true),
        ("id != 50", false),
        ("id NOT IN (1, 2, 80)", true),
        ("id NOT IN (1, 50)", false),
        ("id IN (30, 79)", false),
        ("NOT id < 30", true),
        ("id >= 30 AND id <= 79", true),
        ("id < 0 OR id > 0", true),
        ("i IS NULL", true),
        ("i IS NOT NULL", false),
        ("i != 5", true),
        ("i NOT IN (5, 6)", true),
        ("i < 5", false),
        ("name < 'zzz'", false), // nulls
        ("name LIKE 'ab%'", false),
        ("isnan(f)", true),
        ("NOT isnan(f)", false),
        ("f != 1.0", true),
        ("id IS NOT NULL", true),
        ("false", false),
    ] {
        assert_eq!(strict(flt, &f), want, "{flt}");
    }
    let mut one = file();
    one.lower_bounds.insert(1, 5i64.to_le_bytes().to_vec());
    one.upper_bounds.insert(1, 5i64.to_le_bytes().to_vec());
    assert!(strict("id = 5", &one));
    assert!(strict("id IN (4, 5)", &one));
    assert!(!strict("id IN (4, 6)", &one));
    // Null counts recorded, but not for this column: Java reads "no nulls" (checklist T5).
    let mut t5 = file();
    t5.null_value_counts.remove(&1);
    assert!(strict("id < 80", &t5));
    // No null counts at all: cannot prove.
    let mut none = file();
    none.null_value_counts.clear();
    assert!(!strict("id < 80", &none));
    let mut z = file();
    z.record_count = 0;
    assert!(strict("id = 1000", &z));
    let bare = DataFile::new_data("b.parquet", 10, 100);
    for flt in ["id = 1", "id != 1", "id < 1", "i IS NULL", "id NOT IN (1, 2)"] {
        assert!(!strict(flt, &bare), "{flt}");
    }
}

#[test]
fn row_removal_takes_a_null_as_matching_nothing_but_is_null() {
    let removal = |filter: &str, f: &DataFile| {
        let e = bind(&parse_filter(filter).unwrap(), &schema(), true).unwrap();
        StrictMetricsEvaluator::for_row_removal(&e).eval(f)
    };
    let f = file();
    // Java proves these for the all-null `i` (null != 5 holds there); SQL does not, and a
    // file removed on that proof would lose its rows. A partly null `name` neither.
    for flt in ["i != 5", "i NOT IN (5, 6)", "name != 'zzz'", "name NOT IN ('x')"] {
        assert!(!removal(flt, &f), "{flt}");
    }
    // Without nulls the two agree.
    for (flt, want) in
        [("id != 29", true), ("id NOT IN (1, 2, 80)", true), ("id != 50", false), ("i IS NULL", true)]
    {
        assert_eq!(removal(flt, &f), want, "{flt}");
        assert_eq!(strict(flt, &f), want, "{flt}");
    }
    assert!(removal("isnan(f)", &f) && removal("f != 1.0", &f)); // NaN != 1.0 holds in SQL too
                                                                 // A column without a null count (recorded for others) may hold nulls here.
    let mut t5 = file();
    t5.null_value_counts.remove(&1);
    assert!(!removal("id < 80", &t5) && !removal("id != 29", &t5));
    assert!(strict("id < 80", &t5));
}

#[test]
fn row_removal_never_proves_a_file_by_a_signed_zero() {
    // `f` (id 7) holds only -0.0: Java's bounds order it below 0.0, rows compare it equal.
    let removal = |filter: &str, f: &DataFile| {
        let e = bind(&parse_filter(filter).unwrap(), &schema(), true).unwrap();
        StrictMetricsEvaluator::for_row_removal(&e).eval(f)
    };
    let mut f = DataFile::new_data("z.parquet", 2, 100);
    f.value_counts.insert(7, 2);
    f.null_value_counts.insert(7, 0);
    f.nan_value_counts.insert(7, 0);
    f.lower_bounds.insert(7, (-0.0f32).to_le_bytes().to_vec());
    f.upper_bounds.insert(7, (-0.0f32).to_le_bytes().to_vec());
    for flt in ["f != 0.0", "f < 0.0", "f NOT IN (0.0, 1.0)", "f < 1.0"] {
        assert!(!removal(flt, &f), "{flt}");
    }
    // The plain strict evaluator compares as rows do too (Java 1.12 proves this one).
    assert!(!strict("f != 0.0", &f));
    // Away from zero the proof stands.
    f.lower_bounds.insert(7, 2.0f32.to_le_bytes().to_vec());
    f.upper_bounds.insert(7, 3.0f32.to_le_bytes().to_vec());
    assert!(removal("f > 1.0", &f) && removal("f != 0.5", &f));
}

#[test]
fn eval_all_reuses_the_buffer() {
    let e = bind(&parse_filter("id > 60").unwrap(), &schema(), true).unwrap();
    let ev = InclusiveMetricsEvaluator::new(&e);
    let mut lo = file();
    lo.upper_bounds.insert(1, 40i64.to_le_bytes().to_vec());
    let files = vec![file(), lo, file()];
    let mut out = Vec::with_capacity(8);
    ev.eval_all(&files, &mut out);
    assert_eq!(out, vec![true, false, true]);
    ev.eval_all(&files[..1], &mut out);
    assert_eq!(out, vec![true]);
}

/// Java 1.12 `uniqueValue`: a column whose rows all hold one value (no nulls, no NaN,
/// lower == upper) cannot match `!=` / `NOT IN` that value; anything less proves nothing.
#[test]
fn inclusive_not_eq_on_a_single_valued_column() {
    let mut f = DataFile::new_data("f.parquet", 5, 100);
    f.value_counts.insert(1, 5);
    f.null_value_counts.insert(1, 0);
    f.lower_bounds.insert(1, 42i64.to_le_bytes().to_vec());
    f.upper_bounds.insert(1, 42i64.to_le_bytes().to_vec());
    for (flt, want) in [
        ("id != 42", false),
        ("id != 41", true),
        ("id NOT IN (1, 42)", false),
        ("id NOT IN (1, 2)", true),
        ("NOT id = 42", false),
    ] {
        assert_eq!(inc(flt, &f), want, "{flt}");
    }
    // unknown or non-zero null count, or differing bounds: might match
    let mut nulls = f.clone();
    nulls.null_value_counts.insert(1, 1);
    assert!(inc("id != 42", &nulls));
    let mut unknown = f.clone();
    unknown.null_value_counts.clear();
    assert!(inc("id != 42", &unknown));
    let mut range = f.clone();
    range.upper_bounds.insert(1, 43i64.to_le_bytes().to_vec());
    assert!(inc("id != 42", &range));
    // float: a NaN count that is not 0 (or unknown) proves nothing; rows compare -0.0 equal
    // to 0.0, so neither `!= -0.0` nor `!= 0.0` matches a row of -0.0 (Java 1.12 keeps the
    // file for `!= 0.0`: its bound order has -0.0 below 0.0)
    let mut fl = DataFile::new_data("f.parquet", 5, 100);
    fl.null_value_counts.insert(7, 0);
    fl.lower_bounds.insert(7, (-0.0f32).to_le_bytes().to_vec());
    fl.upper_bounds.insert(7, (-0.0f32).to_le_bytes().to_vec());
    assert!(inc("f != -0.0", &fl), "NaN count unknown");
    fl.nan_value_counts.insert(7, 0);
    assert!(!inc("f != -0.0", &fl));
    assert!(!inc("f != 0.0", &fl));
    assert!(inc("f != 1.0", &fl));
}

#[test]
fn inclusive_pruning_compares_zeros_as_rows_do() {
    // Rows compare -0.0 equal to 0.0 (SQL, Spark, the row evaluator); Java 1.12 prunes by its
    // bound order (-0.0 < 0.0) and so drops the rows of these files for these filters.
    let file = |lo: f32, hi: f32| {
        let mut f = DataFile::new_data("z.parquet", 2, 100);
        f.value_counts.insert(7, 2);
        f.null_value_counts.insert(7, 0);
        f.nan_value_counts.insert(7, 0);
        f.lower_bounds.insert(7, lo.to_le_bytes().to_vec());
        f.upper_bounds.insert(7, hi.to_le_bytes().to_vec());
        f
    };
    let neg = file(-0.0, -0.0); // only -0.0
    for flt in ["f >= 0.0", "f = 0.0", "f IN (0.0, 5.0)", "f <= -0.0", "f >= -0.0"] {
        assert!(inc(flt, &neg), "{flt} on -0.0");
    }
    for flt in ["f > 0.0", "f > -0.0", "f < 0.0", "f < -0.0", "f = 1.0", "f IN (1.0, 2.0)"] {
        assert!(!inc(flt, &neg), "{flt} on -0.0");
    }
    let pos = file(0.0, 0.0); // only 0.0 (bounds as another writer may leave them)
    for flt in ["f <= -0.0", "f = -0.0", "f IN (-0.0)", "f >= 0.0"] {
        assert!(inc(flt, &pos), "{flt} on 0.0");
    }
    for flt in ["f < 0.0", "f < -0.0", "f > 0.0"] {
        assert!(!inc(flt, &pos), "{flt} on 0.0");
    }
    // The plain strict evaluator follows the rows too: a file of -0.0 does not prove `< 0.0`.
    assert!(!strict("f < 0.0", &neg) && strict("f <= 0.0", &neg) && strict("f = 0.0", &neg));
    assert!(!strict("f > -0.0", &pos) && strict("f >= -0.0", &pos));
}
