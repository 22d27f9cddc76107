//! File scan tasks from a REST catalog's server-side scan planning: the `file-scan-tasks` and
//! `delete-files` of a PlanTableScan / FetchPlanningResult / FetchScanTasks answer (the REST
//! spec's content files, as Iceberg Java's `ContentFileParser` and `RESTFileScanTaskParser`
//! write them) turned into the planner's own `FileScanTask`s, so the readers cannot tell them
//! from tasks planned here.
//!
//! Content files carry no sequence numbers: the server has already attached the deletes that
//! apply to each data file (its delete file index), so each attached delete is given a data
//! sequence number above the data file's, and the reader applies every one, as Java's reader
//! of a REST task applies its deletes.

use std::collections::BTreeMap;

use serde_json::Value;

use super::task::{DeleteFileRef, FileScanTask};
use crate::error::{invalid_data, Result};
use crate::expr::bind::{bind, BoundExpr};
use crate::expr::predicate::Expression;
use crate::manifest::{DataContentType, DataFile, FileFormat};
use crate::spec::{Literal, PrimitiveType, Schema, TableMetadata, Type};

/// The tasks of one planning answer (`response`: an object with `file-scan-tasks` and
/// `delete-files`; the delete file references of its tasks index its own `delete-files`).
/// Residual filters are bound to `schema` (the scan's schema).
pub fn tasks_from_rest_answer(
    md: &TableMetadata,
    response: &Value,
    schema: &Schema,
    case_sensitive: bool,
) -> Result<Vec<FileScanTask>> {
    let deletes = match response.get("delete-files") {
        None | Some(Value::Null) => vec![],
        Some(Value::Array(a)) => a.iter().map(|d| content_file(md, d)).collect::<Result<Vec<_>>>()?,
        Some(v) => return Err(invalid_data(format!("expected 'delete-files' to be an array, found {v}"))),
    };
    let tasks = match response.get("file-scan-tasks") {
        None | Some(Value::Null) => &[][..],
        Some(Value::Array(a)) => a.as_slice(),
        Some(v) => return Err(invalid_data(format!("expected 'file-scan-tasks' to be an array, found {v}"))),
    };
    if tasks.is_empty() && !deletes.is_empty() {
        return Err(invalid_data(
            "a planning answer lists delete files but no file scan task refers to them",
        ));
    }
    tasks.iter().map(|t| task(md, t, &deletes, schema, case_sensitive)).collect()
}

fn task(
    md: &TableMetadata,
    v: &Value,
    deletes: &[DataFile],
    schema: &Schema,
    case_sensitive: bool,
) -> Result<FileScanTask> {
    let file = content_file(
        md,
        v.get("data-file").ok_or_else(|| invalid_data(format!("file scan task has no 'data-file': {v}")))?,
    )?;
    if file.content != DataContentType::Data {
        return Err(invalid_data(format!(
            "the data file of a file scan task is a delete file: {}",
            file.file_path
        )));
    }
    let mut out = FileScanTask::whole_file(file, 0);
    for r in v.get("delete-file-references").and_then(Value::as_array).into_iter().flatten() {
        let i = r.as_u64().ok_or_else(|| invalid_data(format!("expected a delete file index, found {r}")))?;
        let d = deletes.get(i as usize).ok_or_else(|| {
            invalid_data(format!(
                "delete file reference {i} is out of range ({} delete files)",
                deletes.len()
            ))
        })?;
        let d = dv_of(d, &out.file.file_path, deletes);
        out.deletes.push(DeleteFileRef { file: d.clone(), data_sequence_number: 1 });
    }
    out.residual = match v.get("residual-filter") {
        None | Some(Value::Null) | Some(Value::Bool(true)) => None,
        Some(Value::Bool(false)) => Some(BoundExpr::False.to_json()?),
        Some(e) => match bind(&Expression::from_json(e)?, schema, case_sensitive)? {
            BoundExpr::True => None,
            b => Some(b.to_json()?),
        },
    };
    Ok(out)
}

/// The deletion vector a task's reference means. Iceberg 1.11.0's servers index delete files by
/// location, so every task referring to one of several DVs in a Puffin file gets the index of
/// the last (apache/iceberg#17497, fixed in 1.11.1): a DV that names another data file is taken
/// as the DV of the same Puffin file that names this one. A DV applies only to the data file it
/// names, so that one is the DV the server attached; none there leaves the reference as it is
/// (the reader then refuses the mismatch).
fn dv_of<'a>(d: &'a DataFile, data_path: &str, deletes: &'a [DataFile]) -> &'a DataFile {
    let names = |f: &DataFile| f.referenced_data_file.as_deref() == Some(data_path);
    let is_dv =
        |f: &DataFile| f.file_format == FileFormat::Puffin && f.content == DataContentType::PositionDeletes;
    if !is_dv(d) || d.referenced_data_file.is_none() || names(d) {
        return d;
    }
    deletes.iter().find(|f| is_dv(f) && f.file_path == d.file_path && names(f)).unwrap_or(d)
}

fn content_file(md: &TableMetadata, v: &Value) -> Result<DataFile> {
    let o =
        v.as_object().ok_or_else(|| invalid_data(format!("expected a content file object, found {v}")))?;
    let field = |k: &str| o.get(k).filter(|x| !x.is_null());
    let int = |k: &str| -> Result<Option<i64>> {
        field(k)
            .map(|x| {
                x.as_i64().ok_or_else(|| invalid_data(format!("content file '{k}' is not an integer: {x}")))
            })
            .transpose()
    };
    let string = |k: &str| -> Result<String> {
        field(k)
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| invalid_data(format!("content file has no string '{k}': {v}")))
    };
    let path = string("file-path")?;
    let need = |k: &str| int(k)?.ok_or_else(|| invalid_data(format!("content file {path} has no '{k}'")));
    let spec_id = i32::try_from(need("spec-id")?)
        .map_err(|_| invalid_data(format!("content file {path}: bad spec-id")))?;
    let spec = md.spec_by_id(spec_id).ok_or_else(|| {
        invalid_data(format!(
            "content file {path} names partition spec {spec_id}, which the table does not have"
        ))
    })?;
    let content = match string("content")?.to_ascii_lowercase().replace('_', "-").as_str() {
        "data" => DataContentType::Data,
        "position-deletes" => DataContentType::PositionDeletes,
        "equality-deletes" => DataContentType::EqualityDeletes,
        other => return Err(invalid_data(format!("content file {path}: unknown content '{other}'"))),
    };
    let mut f = DataFile::new_data(path.clone(), need("record-count")?, need("file-size-in-bytes")?);
    f.content = content;
    f.spec_id = spec_id;
    f.file_format = FileFormat::parse(&string("file-format")?)?;
    let ptype = spec.partition_type_in(md.current_schema(), md.schemas())?;
    f.partition = match field("partition") {
        None => vec![None; ptype.fields.len()],
        Some(Value::Array(values)) => {
            if values.len() != ptype.fields.len() {
                return Err(invalid_data(format!(
                    "content file {path}: {} partition values for {} partition fields",
                    values.len(),
                    ptype.fields.len()
                )));
            }
            ptype
                .fields
                .iter()
                .zip(values)
                .map(|(pf, x)| partition_value(&pf.field_type, x))
                .collect::<Result<_>>()?
        }
        // The struct form: values by partition field id, nulls left out.
        Some(Value::Object(by_id)) => ptype
            .fields
            .iter()
            .map(|pf| match by_id.get(&pf.id.to_string()) {
                Some(x) => partition_value(&pf.field_type, x),
                None => Ok(None),
            })
            .collect::<Result<_>>()?,
        Some(x) => return Err(invalid_data(format!("content file {path}: bad partition {x}"))),
    };
    f.column_sizes = long_map(field("column-sizes"), &path)?;
    f.value_counts = long_map(field("value-counts"), &path)?;
    f.null_value_counts = long_map(field("null-value-counts"), &path)?;
    f.nan_value_counts = long_map(field("nan-value-counts"), &path)?;
    f.lower_bounds = bytes_map(field("lower-bounds"), &path)?;
    f.upper_bounds = bytes_map(field("upper-bounds"), &path)?;
    f.key_metadata = field("key-metadata").map(binary).transpose()?;
    f.split_offsets = field("split-offsets").map(|x| longs(x, &path)).transpose()?;
    f.equality_ids = field("equality-ids")
        .map(|x| {
            longs(x, &path)?
                .into_iter()
                .map(|i| {
                    i32::try_from(i)
                        .map_err(|_| invalid_data(format!("content file {path}: bad equality id {i}")))
                })
                .collect()
        })
        .transpose()?;
    f.sort_order_id = int("sort-order-id")?.map(|i| i as i32);
    f.first_row_id = int("first-row-id")?;
    f.referenced_data_file = field("referenced-data-file").and_then(Value::as_str).map(str::to_string);
    f.content_offset = int("content-offset")?;
    f.content_size_in_bytes = int("content-size-in-bytes")?;
    Ok(f)
}

fn partition_value(ty: &Type, v: &Value) -> Result<Option<Literal>> {
    match (ty, v) {
        (_, Value::Null) => Ok(None),
        (Type::Primitive(p), v) => Literal::from_json(p, v).map(Some),
        (t, _) => Err(invalid_data(format!("a partition field of type {t} is not a primitive"))),
    }
}

fn binary(v: &Value) -> Result<Vec<u8>> {
    match Literal::from_json(&PrimitiveType::Binary, v)? {
        Literal::Binary(b) => Ok(b),
        other => Err(invalid_data(format!("expected binary, found {other:?}"))),
    }
}

fn longs(v: &Value, path: &str) -> Result<Vec<i64>> {
    v.as_array()
        .and_then(|a| a.iter().map(Value::as_i64).collect::<Option<Vec<_>>>())
        .ok_or_else(|| invalid_data(format!("content file {path}: expected an array of integers, found {v}")))
}

/// The single-value JSON form of a map (`{"keys": [...], "values": [...]}`), keyed by field id.
fn map_entries<'a>(v: Option<&'a Value>, path: &str) -> Result<Vec<(i32, &'a Value)>> {
    let Some(v) = v else { return Ok(vec![]) };
    let bad = || invalid_data(format!("content file {path}: expected a {{keys, values}} map, found {v}"));
    let keys = v.get("keys").and_then(Value::as_array).ok_or_else(bad)?;
    let values = v.get("values").and_then(Value::as_array).ok_or_else(bad)?;
    if keys.len() != values.len() {
        return Err(bad());
    }
    keys.iter()
        .zip(values)
        .map(|(k, x)| Ok((k.as_i64().and_then(|k| i32::try_from(k).ok()).ok_or_else(bad)?, x)))
        .collect()
}

fn long_map(v: Option<&Value>, path: &str) -> Result<BTreeMap<i32, i64>> {
    map_entries(v, path)?
        .into_iter()
        .map(|(k, x)| {
            Ok((k, x.as_i64().ok_or_else(|| invalid_data(format!("content file {path}: bad count {x}")))?))
        })
        .collect()
}

fn bytes_map(v: Option<&Value>, path: &str) -> Result<BTreeMap<i32, Vec<u8>>> {
    map_entries(v, path)?.into_iter().map(|(k, x)| Ok((k, binary(x)?))).collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;
    use crate::spec::PartitionSpec;

    fn table() -> Result<TableMetadata> {
        let schema = Schema::from_json(&json!({"type": "struct", "schema-id": 0, "fields": [
            {"id": 1, "name": "id", "required": true, "type": "long"},
            {"id": 2, "name": "cat", "required": false, "type": "string"},
            {"id": 3, "name": "d", "required": false, "type": "date"},
            {"id": 4, "name": "x", "required": false, "type": "decimal(9, 2)"}]}))?;
        let spec = PartitionSpec::from_json(&json!({"spec-id": 0, "fields": [
            {"name": "cat", "transform": "identity", "source-id": 2, "field-id": 1000},
            {"name": "d_day", "transform": "day", "source-id": 3, "field-id": 1001},
            {"name": "x_t", "transform": "truncate[10]", "source-id": 4, "field-id": 1002}]}))?;
        TableMetadata::new_table(schema, Some(spec), None, "s3://b/t", BTreeMap::new(), 3)
    }

    /// An answer as Iceberg 1.11's server writes it (ContentFileParser, RESTFileScanTaskParser).
    fn answer() -> Value {
        json!({
            "status": "completed",
            "delete-files": [{
                "spec-id": 0, "content": "position-deletes", "file-path": "s3://b/t/data/dv.puffin",
                "file-format": "puffin", "partition": ["a", "2024-01-01", "1.50"],
                "file-size-in-bytes": 500, "record-count": 1,
                "referenced-data-file": "s3://b/t/data/a.parquet", "content-offset": 4,
                "content-size-in-bytes": 42
            }],
            "file-scan-tasks": [{
                "data-file": {
                    "spec-id": 0, "content": "data", "file-path": "s3://b/t/data/a.parquet",
                    "file-format": "parquet", "partition": ["a", "2024-01-01", "1.50"],
                    "file-size-in-bytes": 1598, "record-count": 2,
                    "value-counts": {"keys": [1], "values": [2]},
                    "lower-bounds": {"keys": [1], "values": ["0100000000000000"]},
                    "split-offsets": [4], "sort-order-id": 0, "first-row-id": 0
                },
                "delete-file-references": [0],
                "residual-filter": {"type": "gt", "term": "id", "value": 1}
            }, {
                "data-file": {
                    "spec-id": 0, "content": "data", "file-path": "s3://b/t/data/b.parquet",
                    "file-format": "parquet", "partition": {"1000": "b"},
                    "file-size-in-bytes": 1481, "record-count": 1
                },
                "residual-filter": true
            }]
        })
    }

    #[test]
    fn content_files_become_the_planners_tasks() -> Result<()> {
        let md = table()?;
        let tasks = tasks_from_rest_answer(&md, &answer(), md.current_schema(), true)?;
        assert_eq!(tasks.len(), 2);
        let a = &tasks[0];
        assert_eq!(a.file.file_path, "s3://b/t/data/a.parquet");
        assert_eq!((a.start, a.length, a.file.record_count), (0, 1598, 2));
        assert_eq!(
            a.file.partition,
            vec![Some(Literal::String("a".into())), Some(Literal::Date(19723)), Some(Literal::Decimal(150))]
        );
        assert_eq!(a.file.value_counts.get(&1), Some(&2));
        assert_eq!(a.file.lower_bounds.get(&1), Some(&vec![1, 0, 0, 0, 0, 0, 0, 0]));
        assert_eq!((a.file.split_offsets.clone(), a.file.first_row_id), (Some(vec![4]), Some(0)));
        // The attached deletes apply whatever the (absent) sequence numbers.
        assert_eq!(a.deletes.len(), 1);
        let dv = &a.deletes[0];
        assert!(dv.data_sequence_number > a.data_sequence_number);
        assert_eq!(
            (dv.file.content, dv.file.file_format),
            (DataContentType::PositionDeletes, FileFormat::Puffin)
        );
        assert_eq!((dv.file.content_offset, dv.file.content_size_in_bytes), (Some(4), Some(42)));
        let residual = BoundExpr::from_json(a.residual.as_ref().expect("a residual"))?;
        assert!(matches!(residual, BoundExpr::Predicate(_)), "{residual:?}");
        // The struct form of a partition (nulls left out) and an always-true residual.
        let b = &tasks[1];
        assert_eq!(b.file.partition, vec![Some(Literal::String("b".into())), None, None]);
        assert!(b.residual.is_none() && b.deletes.is_empty());
        Ok(())
    }

    /// Iceberg 1.11.0 refers every task to the last DV of a shared Puffin file.
    #[test]
    fn a_dv_reference_to_another_data_files_dv_is_repaired() -> Result<()> {
        let md = table()?;
        let mut a = answer();
        let mut other = a["delete-files"][0].clone();
        other["referenced-data-file"] = json!("s3://b/t/data/b.parquet");
        other["content-offset"] = json!(46);
        a["delete-files"] = json!([a["delete-files"][0].clone(), other]);
        a["file-scan-tasks"][0]["delete-file-references"] = json!([1]);
        a["file-scan-tasks"][1]["delete-file-references"] = json!([1]);
        let tasks = tasks_from_rest_answer(&md, &a, md.current_schema(), true)?;
        for t in &tasks {
            assert_eq!(t.deletes.len(), 1);
            assert_eq!(t.deletes[0].file.referenced_data_file.as_deref(), Some(t.file.file_path.as_str()));
        }
        assert_eq!(
            (tasks[0].deletes[0].file.content_offset, tasks[1].deletes[0].file.content_offset),
            (Some(4), Some(46))
        );
        Ok(())
    }

    #[test]
    fn bad_answers_name_what_is_wrong() -> Result<()> {
        let md = table()?;
        let schema = md.current_schema();
        let mut a = answer();
        a["file-scan-tasks"][0]["delete-file-references"] = json!([3]);
        let e = tasks_from_rest_answer(&md, &a, schema, true).unwrap_err();
        assert!(e.to_string().contains("delete file reference 3 is out of range (1 delete files)"), "{e}");
        let mut a = answer();
        a["file-scan-tasks"][1]["data-file"]["spec-id"] = json!(7);
        let e = tasks_from_rest_answer(&md, &a, schema, true).unwrap_err();
        assert!(e.to_string().contains("names partition spec 7, which the table does not have"), "{e}");
        let a = json!({"delete-files": answer()["delete-files"].clone()});
        assert!(tasks_from_rest_answer(&md, &a, schema, true).is_err());
        Ok(())
    }
}
