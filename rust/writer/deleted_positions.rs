//! Deleted row positions collected per data file before a delete writer encodes them:
//! Parquet position-delete files (v2, [`super::PositionDeleteWriter`]) or deletion vectors
//! (v3, [`super::DeletionVectorWriter`]). 8 bytes a deleted row; order and repeats are the
//! encoder's to sort out.

use std::collections::BTreeMap;

use crate::error::{invalid_data, validation, Result};
use crate::manifest::DataFile;
use crate::spec::StructValue;

/// The data file a set of positions belongs to.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub spec_id: i32,
    pub partition: StructValue,
    pub positions: Vec<i64>,
}

/// Positions by data file path (in path order).
#[derive(Debug, Default)]
pub(crate) struct DeletedPositions(BTreeMap<String, Target>);

impl DeletedPositions {
    /// Records deleted positions of `data_file` (its spec id and partition are kept for the
    /// delete file). Positions may come in any order and repeat; negative ones are refused.
    pub fn record(&mut self, data_file: &DataFile, positions: &[i64]) -> Result<()> {
        if let Some(&p) = positions.iter().find(|p| **p < 0) {
            return Err(invalid_data(format!("expected non-negative row positions, found {p}"))
                .with_context("data file", data_file.file_path.clone()));
        }
        if positions.is_empty() {
            return Ok(());
        }
        let t = self.0.entry(data_file.file_path.clone()).or_insert_with(|| Target {
            spec_id: data_file.spec_id,
            partition: data_file.partition.clone(),
            positions: Vec::new(),
        });
        if t.spec_id != data_file.spec_id || t.partition != data_file.partition {
            return Err(validation("one data file was given with two different partitions")
                .with_context("data file", data_file.file_path.clone()));
        }
        t.positions.extend_from_slice(positions);
        Ok(())
    }

    /// Rows recorded so far (before removing duplicates).
    pub fn pending_rows(&self) -> usize {
        self.0.values().map(|t| t.positions.len()).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// (data file path, its positions), in path order.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Target)> {
        self.0.iter()
    }
}
