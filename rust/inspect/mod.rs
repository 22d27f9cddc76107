//! Metadata tables as Arrow (Java's `MetadataTableType`): the same columns, types and nesting
//! as Iceberg Java 1.10, computed from the table metadata, manifest lists and manifests.
//!
//! - `snapshots.rs`: snapshots, history, refs, metadata_log_entries (metadata only)
//! - `manifests.rs`: manifests, all_manifests (manifest lists)
//! - `files.rs`: files, data_files, delete_files, entries and their `all_` variants, with
//!   `readable_metrics` (manifests)
//! - `partitions.rs`: partitions (live entries grouped by partition)
//! - `position_deletes.rs`: position_deletes (the rows of position delete files and DVs)
//!
//! What the tables share: `manifest_lists.rs` (a snapshot's manifest list, every reachable
//! manifest), `partition_types.rs` (each spec's and the table's partition type), `cells.rs`
//! (building the Arrow columns).

mod cells;
mod files;
mod manifest_lists;
mod manifests;
mod partition_types;
mod partitions;
mod position_deletes;
mod snapshots;

use arrow_array::RecordBatch;

pub use files::{entries, files, snapshot_own_entries, FileContentFilter};
pub use manifests::{all_manifests, manifests};
pub use partitions::partitions;
pub use position_deletes::position_deletes;
pub use snapshots::{history, metadata_log_entries, refs, snapshots};

use crate::error::{validation, Result};
use crate::spec::TableMetadata;

/// The metadata tables, by Java's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetadataTable {
    Snapshots,
    History,
    Refs,
    MetadataLogEntries,
    Manifests,
    AllManifests,
    Files,
    DataFiles,
    DeleteFiles,
    AllFiles,
    AllDataFiles,
    AllDeleteFiles,
    Entries,
    AllEntries,
    Partitions,
    PositionDeletes,
}

impl MetadataTable {
    pub const ALL: [MetadataTable; 16] = [
        Self::Snapshots,
        Self::History,
        Self::Refs,
        Self::MetadataLogEntries,
        Self::Manifests,
        Self::AllManifests,
        Self::Files,
        Self::DataFiles,
        Self::DeleteFiles,
        Self::AllFiles,
        Self::AllDataFiles,
        Self::AllDeleteFiles,
        Self::Entries,
        Self::AllEntries,
        Self::Partitions,
        Self::PositionDeletes,
    ];

    pub fn name(&self) -> &'static str {
        match self {
            Self::Snapshots => "snapshots",
            Self::History => "history",
            Self::Refs => "refs",
            Self::MetadataLogEntries => "metadata_log_entries",
            Self::Manifests => "manifests",
            Self::AllManifests => "all_manifests",
            Self::Files => "files",
            Self::DataFiles => "data_files",
            Self::DeleteFiles => "delete_files",
            Self::AllFiles => "all_files",
            Self::AllDataFiles => "all_data_files",
            Self::AllDeleteFiles => "all_delete_files",
            Self::Entries => "entries",
            Self::AllEntries => "all_entries",
            Self::Partitions => "partitions",
            Self::PositionDeletes => "position_deletes",
        }
    }

    pub fn parse(name: &str) -> Result<Self> {
        let lower = name.to_ascii_lowercase();
        Self::ALL.into_iter().find(|t| t.name() == lower).ok_or_else(|| {
            validation(format!(
                "expected a metadata table name ({}), found '{name}'",
                Self::ALL.map(|t| t.name()).join(", ")
            ))
        })
    }

    /// Whether the table reads one snapshot (so a snapshot id may be given). The others show
    /// the whole metadata (`snapshots`, `history`, ...) or every snapshot (`all_*`).
    pub fn at_snapshot(&self) -> bool {
        matches!(
            self,
            Self::Manifests
                | Self::Files
                | Self::DataFiles
                | Self::DeleteFiles
                | Self::Entries
                | Self::Partitions
                | Self::PositionDeletes
        )
    }
}

/// The metadata table `table` of the table `md`, at `snapshot_id` (default: current) for the
/// tables of one snapshot. A snapshot id for a table that shows all snapshots is an error.
pub fn inspect(
    md: &TableMetadata,
    table: MetadataTable,
    snapshot_id: Option<i64>,
) -> Result<Vec<RecordBatch>> {
    if snapshot_id.is_some() && !table.at_snapshot() {
        return Err(validation(format!(
            "the {} metadata table does not read one snapshot: do not give a snapshot id",
            table.name()
        )));
    }
    let snap = || crate::scan::select_snapshot(md, snapshot_id);
    use MetadataTable as T;
    let one = |b: Result<RecordBatch>| b.map(|b| vec![b]);
    match table {
        T::Snapshots => one(snapshots(md)),
        T::History => one(history(md)),
        T::Refs => one(refs(md)),
        T::MetadataLogEntries => one(metadata_log_entries(md)),
        T::Manifests => one(manifests(md, snap()?)),
        T::AllManifests => one(all_manifests(md)),
        T::Files => files(md, Some(snap()?), FileContentFilter::All),
        T::DataFiles => files(md, Some(snap()?), FileContentFilter::Data),
        T::DeleteFiles => files(md, Some(snap()?), FileContentFilter::Deletes),
        T::AllFiles => files(md, None, FileContentFilter::All),
        T::AllDataFiles => files(md, None, FileContentFilter::Data),
        T::AllDeleteFiles => files(md, None, FileContentFilter::Deletes),
        T::Entries => entries(md, Some(snap()?)),
        T::AllEntries => entries(md, None),
        T::Partitions => one(partitions(md, snap()?)),
        T::PositionDeletes => one(position_deletes(md, snap()?)),
    }
}

#[cfg(test)]
mod tests {
    use super::partition_types::table_partition_type;
    use super::*;

    fn golden(name: &str) -> TableMetadata {
        let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden").join(name);
        let text = std::fs::read_to_string(&path).unwrap();
        TableMetadata::from_json_str(&text, Some(path.display().to_string())).unwrap()
    }

    #[test]
    fn names_parse_and_snapshot_ids_are_checked() {
        for t in MetadataTable::ALL {
            assert_eq!(MetadataTable::parse(t.name()).unwrap(), t);
        }
        assert!(MetadataTable::parse("nope").unwrap_err().to_string().contains("all_entries"));
        let md = golden("v2_metadata.json");
        let err = inspect(&md, MetadataTable::AllFiles, Some(1)).unwrap_err();
        assert!(err.to_string().contains("does not read one snapshot"), "{err}");
    }

    #[test]
    fn metadata_only_tables_have_a_row_per_item() {
        let md = golden("v2_metadata.json");
        assert_eq!(snapshots(&md).unwrap().num_rows(), md.snapshots().len());
        assert_eq!(history(&md).unwrap().num_rows(), md.snapshot_log().len());
        assert_eq!(refs(&md).unwrap().num_rows(), md.refs().len());
        assert_eq!(metadata_log_entries(&md).unwrap().num_rows(), md.metadata_log().len() + 1);
    }

    #[test]
    fn table_partition_type_is_the_union_of_specs_by_field_id() {
        let md = golden("v2_all_transforms_metadata.json");
        let t = table_partition_type(&md).unwrap();
        let mut ids: Vec<i32> =
            md.partition_specs().iter().flat_map(|s| s.fields.iter().map(|f| f.field_id)).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(t.fields.iter().map(|f| f.id).collect::<Vec<_>>(), ids);
        assert!(t.fields.iter().all(|f| !f.required));
    }
}
