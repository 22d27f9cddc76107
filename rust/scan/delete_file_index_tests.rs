use std::collections::HashMap;

use super::*;
use crate::manifest::DataFile;
use crate::spec::{NestedField, PartitionField, Schema, Transform, Type};

fn schema() -> Schema {
    Schema::new(
        0,
        vec![
            NestedField::optional(1, "id", Type::Primitive(PrimitiveType::Long)),
            NestedField::required(2, "name", Type::Primitive(PrimitiveType::String)),
        ],
        vec![],
    )
    .expect("schema")
}

fn specs() -> HashMap<i32, PartitionSpec> {
    let mut m = HashMap::new();
    m.insert(0, PartitionSpec::unpartitioned());
    m.insert(1, PartitionSpec::new(1, vec![PartitionField::new(2, 1000, "name", Transform::Identity)]));
    m
}

fn data(path: &str, spec_id: i32, part: &str, ids: Option<(i64, i64)>) -> DataFile {
    let mut f = DataFile::new_data(path, 10, 100);
    f.spec_id = spec_id;
    if spec_id == 1 {
        f.partition = vec![Some(Literal::String(part.into()))];
    }
    if let Some((lo, hi)) = ids {
        f.lower_bounds.insert(1, Literal::Long(lo).to_bytes());
        f.upper_bounds.insert(1, Literal::Long(hi).to_bytes());
        f.null_value_counts.insert(1, 0);
        f.value_counts.insert(1, 10);
    }
    f
}

fn eq_delete(path: &str, spec_id: i32, part: &str, ids: Option<(i64, i64)>) -> DataFile {
    let mut f = data(path, spec_id, part, ids);
    f.content = DataContentType::EqualityDeletes;
    f.equality_ids = Some(vec![1]);
    f
}

fn pos_delete(path: &str, spec_id: i32, part: &str, target: Option<&str>) -> DataFile {
    let mut f = data(path, spec_id, part, None);
    f.content = DataContentType::PositionDeletes;
    if let Some(t) = target {
        f.lower_bounds.insert(DELETE_FILE_PATH_FIELD_ID, t.as_bytes().to_vec());
        f.upper_bounds.insert(DELETE_FILE_PATH_FIELD_ID, t.as_bytes().to_vec());
    }
    f
}

impl DeleteFileIndex {
    fn for_data_file_ok(&self, seq: i64, data: &DataFile) -> Vec<&IndexedDelete> {
        self.for_data_file(seq, data).expect("deletes for a data file")
    }
}

fn dv(path: &str, target: Option<&str>) -> DataFile {
    let mut f = pos_delete(path, 1, "a", target);
    f.file_format = FileFormat::Puffin;
    f.referenced_data_file = target.map(str::to_string);
    f.content_offset = Some(4);
    f.content_size_in_bytes = Some(40);
    f
}

fn paths(v: Vec<&IndexedDelete>) -> Vec<String> {
    v.iter().map(|d| d.file.file_path.clone()).collect()
}

#[test]
fn sequence_number_rules() {
    let idx = DeleteFileIndex::build(
        vec![(pos_delete("p5", 1, "a", None), 5), (eq_delete("e5", 1, "a", None), 5)],
        &specs(),
        &schema(),
    )
    .expect("index");
    // data seq 5: position deletes at 5 apply (>=), equality at 5 do not (>).
    assert_eq!(paths(idx.for_data_file_ok(5, &data("d", 1, "a", None))), vec!["p5"]);
    assert_eq!(paths(idx.for_data_file_ok(4, &data("d", 1, "a", None))), vec!["e5", "p5"]);
    assert!(idx.for_data_file_ok(6, &data("d", 1, "a", None)).is_empty());
    // Other partition: nothing.
    assert!(idx.for_data_file_ok(1, &data("d", 1, "b", None)).is_empty());
}

#[test]
fn path_scoped_and_global() {
    let idx = DeleteFileIndex::build(
        vec![(pos_delete("p", 1, "a", Some("d1")), 3), (eq_delete("g", 0, "", None), 3)],
        &specs(),
        &schema(),
    )
    .expect("index");
    assert_eq!(paths(idx.for_data_file_ok(1, &data("d1", 1, "a", None))), vec!["g", "p"]);
    assert_eq!(paths(idx.for_data_file_ok(1, &data("d2", 1, "a", None))), vec!["g"]);
}

#[test]
fn equality_bounds_overlap_prunes() {
    let idx = DeleteFileIndex::build(vec![(eq_delete("g", 0, "", Some((10, 20))), 3)], &specs(), &schema())
        .expect("index");
    assert!(idx.for_data_file_ok(1, &data("d", 0, "", Some((21, 30)))).is_empty());
    assert!(idx.for_data_file_ok(1, &data("d", 0, "", Some((0, 9)))).is_empty());
    assert_eq!(idx.for_data_file_ok(1, &data("d", 0, "", Some((20, 30)))).len(), 1);
    assert_eq!(idx.for_data_file_ok(1, &data("d", 0, "", None)).len(), 1);
}

#[test]
fn equality_null_counts() {
    // Data all null on id, deletes have no nulls: cannot match.
    let mut d = data("d", 0, "", None);
    d.null_value_counts.insert(1, 10);
    d.value_counts.insert(1, 10);
    let idx = DeleteFileIndex::build(vec![(eq_delete("g", 0, "", Some((1, 2))), 3)], &specs(), &schema())
        .expect("index");
    assert!(idx.for_data_file_ok(1, &d).is_empty());
}

#[test]
fn uuid_bounds_compare_as_signed_longs() {
    let lo = Literal::Uuid(0x8000_0000_0000_0000_0000_0000_0000_0000);
    let hi = Literal::Uuid(0x7fff_ffff_ffff_ffff_0000_0000_0000_0000);
    // Java: lo (negative high long) < hi.
    assert!(ranges_overlap(&lo, &hi, &hi, &hi));
}

#[test]
fn a_deletion_vector_replaces_the_position_deletes_of_its_file() {
    let files = vec![
        (pos_delete("p_part", 1, "a", None), 5),
        (pos_delete("p_path", 1, "a", Some("d1")), 5),
        (eq_delete("e", 1, "a", None), 6),
        (dv("dv1", Some("d1")), 6),
    ];
    let idx = DeleteFileIndex::build(files, &specs(), &schema()).expect("index");
    // d1 has a DV: equality deletes still apply, position deletes of either scope do not.
    assert_eq!(paths(idx.for_data_file_ok(5, &data("d1", 1, "a", None))), vec!["e", "dv1"]);
    assert_eq!(paths(idx.for_data_file_ok(6, &data("d1", 1, "a", None))), vec!["dv1"]);
    // d2 has none: the partition-scoped position delete applies as before.
    assert_eq!(paths(idx.for_data_file_ok(5, &data("d2", 1, "a", None))), vec!["e", "p_part"]);
    // A DV older than its data file is an error, never silently dropped.
    let err = idx.for_data_file(7, &data("d1", 1, "a", None)).expect_err("stale DV");
    assert!(err.to_string().contains("deletion vector of d1"), "{err}");
}

#[test]
fn deletion_vectors_must_name_one_data_file_each() {
    let missing = DeleteFileIndex::build(vec![(dv("dv", None), 1)], &specs(), &schema());
    assert!(missing.expect_err("no referenced file").to_string().contains("referenced_data_file"));
    let twice = vec![(dv("dv_a", Some("d")), 1), (dv("dv_b", Some("d")), 2)];
    let err = DeleteFileIndex::build(twice, &specs(), &schema()).expect_err("two DVs");
    assert!(err.to_string().contains("two deletion vectors"), "{err}");
}
