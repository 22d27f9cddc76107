//! The partition types the metadata tables show: each spec's (a manifest's partition summaries
//! in the `manifests` tables), and the table's, the union of all specs (the `partition` column
//! of the `files`, `entries`, `partitions` and `position_deletes` tables).

use std::collections::{BTreeMap, HashMap};

use crate::error::{invalid_data, Result};
use crate::spec::{NestedField, PartitionField, PartitionSpec, StructType, TableMetadata, Type};

/// Each partition spec of the table with its partition type under the current schema (Java
/// binds every spec to the current schema).
pub(crate) struct SpecTypes {
    by_id: HashMap<i32, std::result::Result<(PartitionSpec, StructType), String>>,
}

impl SpecTypes {
    pub(crate) fn new(md: &TableMetadata) -> Self {
        let by_id = md
            .partition_specs()
            .iter()
            .map(|s| (s.spec_id, md.partition_type_of(s).map(|t| (s.clone(), t)).map_err(|e| e.to_string())))
            .collect();
        SpecTypes { by_id }
    }

    pub(crate) fn get(&self, spec_id: i32) -> Result<(&PartitionSpec, &StructType)> {
        match self.by_id.get(&spec_id) {
            Some(Ok((s, t))) => Ok((s, t)),
            Some(Err(e)) => Err(invalid_data(format!("partition spec {spec_id} has no partition type: {e}"))),
            None => Err(invalid_data(format!(
                "a manifest names partition spec {spec_id}, which the table does not have"
            ))),
        }
    }
}

/// The table's partition type: the union of the fields of all specs whose source column is
/// in the current schema, ordered by field id, named as in the newest spec (Java
/// `Partitioning.partitionType`).
pub(crate) fn table_partition_type(md: &TableMetadata) -> Result<StructType> {
    let schema = md.current_schema();
    let mut specs: Vec<&PartitionSpec> = md.partition_specs().iter().collect();
    specs.sort_by_key(|s| std::cmp::Reverse(s.spec_id));
    let mut chosen: BTreeMap<i32, (&PartitionField, String, Type)> = BTreeMap::new();
    for spec in specs {
        for f in &spec.fields {
            let Ok(src) = spec.source_type(schema, f) else { continue };
            let ty = f.transform.result_type(src).map_err(|e| {
                invalid_data(format!("partition field '{}' (id {}): {}", f.name, f.field_id, e.message()))
            })?;
            match chosen.get_mut(&f.field_id) {
                None => {
                    chosen.insert(f.field_id, (f, f.name.clone(), Type::Primitive(ty)));
                }
                Some(existing) => {
                    // v1 tables keep dropped fields as void: the typed field wins, the name stays.
                    if existing.0.transform.is_void() && !f.transform.is_void() {
                        existing.0 = f;
                        existing.2 = Type::Primitive(ty);
                    }
                }
            }
        }
    }
    Ok(StructType::new(
        chosen.into_iter().map(|(id, (_, name, ty))| NestedField::optional(id, name, ty)).collect(),
    ))
}
