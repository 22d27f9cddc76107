//! Manifests (checklist §3): entries of data or delete files of one partition spec. Reading
//! applies the spec's inheritance rules; the writer produces v2 manifests like Iceberg Java's
//! `ManifestWriter` and computes the manifest-list entry (counts, partition summaries).

use serde::{Deserialize, Serialize};

use super::avro;
use super::data_file::{DataContentType, DataFile};
use super::manifest_decode::{compile_entry_plan, decode_entry, EntryPlan, StatsProjection};
use super::manifest_list::{ManifestContent, ManifestFile};
use crate::error::{invalid_data, resource_limit, Result};
use crate::io;
use crate::spec::{PartitionSpec, Schema, StructType};

/// `status` of a manifest entry (field 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EntryStatus {
    Existing = 0,
    Added = 1,
    Deleted = 2,
}

impl EntryStatus {
    pub fn from_i32(v: i32) -> Result<Self> {
        match v {
            0 => Ok(Self::Existing),
            1 => Ok(Self::Added),
            2 => Ok(Self::Deleted),
            _ => Err(invalid_data(format!("expected manifest entry status 0, 1 or 2, found {v}"))),
        }
    }

    /// ADDED or EXISTING: the file is part of the snapshot.
    pub fn is_live(&self) -> bool {
        !matches!(self, Self::Deleted)
    }
}

/// One `manifest_entry`. After [`read_manifest`], `snapshot_id` and the sequence numbers are
/// inherited values; when writing, `None` means "inherit" (ADDED entries).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestEntry {
    pub status: EntryStatus,
    pub snapshot_id: Option<i64>,
    /// The data sequence number.
    pub sequence_number: Option<i64>,
    pub file_sequence_number: Option<i64>,
    pub data_file: DataFile,
}

/// The key/value metadata of a manifest file, plus the partition type its schema declares.
#[derive(Debug, Clone, PartialEq)]
pub struct ManifestMetadata {
    /// `schema`: the table schema JSON the manifest was written with.
    pub schema_json: Option<String>,
    /// `partition-spec`: the JSON array of partition fields.
    pub partition_spec_json: Option<String>,
    /// `partition-spec-id` (0 when absent).
    pub partition_spec_id: i32,
    /// `format-version` (1 when absent and the entries have no sequence numbers).
    pub format_version: i32,
    pub content: ManifestContent,
    /// One optional field per partition field (id, name, result type), from the Avro schema.
    pub partition_type: StructType,
}

impl ManifestMetadata {
    /// The table schema the manifest was written with, if recorded.
    pub fn schema(&self) -> Result<Option<Schema>> {
        self.schema_json.as_deref().map(Schema::from_json_str).transpose()
    }

    /// The partition spec the manifest was written with, if recorded.
    pub fn partition_spec(&self) -> Result<Option<PartitionSpec>> {
        let Some(text) = self.partition_spec_json.as_deref() else {
            return Ok(None);
        };
        let v: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| invalid_data("manifest partition-spec is not valid JSON").with_source(e))?;
        PartitionSpec::from_fields_json(self.partition_spec_id, &v).map(Some)
    }
}

/// A decoded manifest: its metadata and entries.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    pub metadata: ManifestMetadata,
    pub entries: Vec<ManifestEntry>,
}

impl Manifest {
    /// Decodes a manifest held in memory, entries as written (no inheritance). Errors carry
    /// no file name.
    pub fn parse(bytes: &[u8]) -> Result<Manifest> {
        Manifest::parse_projected(bytes, &StatsProjection::All)
    }

    /// [`Manifest::parse`] keeping only the column stats `stats` keeps.
    pub fn parse_projected(bytes: &[u8], stats: &StatsProjection) -> Result<Manifest> {
        let mut entries = Vec::new();
        let metadata = parse_each(bytes, stats, |e| {
            entries.push(e);
            Ok(())
        })?;
        Ok(Manifest { metadata, entries })
    }
}

/// Decodes a manifest held in memory, handing each entry (as written) to `f`; returns the
/// metadata.
fn parse_each(
    bytes: &[u8],
    stats: &StatsProjection,
    mut f: impl FnMut(ManifestEntry) -> Result<()>,
) -> Result<ManifestMetadata> {
    let container = avro::read_container(bytes)?;
    let plan: EntryPlan = compile_entry_plan(&container.schema)?;
    let meta_int = |key: &str| -> Result<Option<i32>> {
        container
            .meta_str(key)
            .map(|s| {
                s.trim()
                    .parse::<i32>()
                    .map_err(|_| invalid_data(format!("manifest metadata {key} is not an int: '{s}'")))
            })
            .transpose()
    };
    let partition_spec_id = meta_int("partition-spec-id")?.unwrap_or(0);
    let format_version = meta_int("format-version")?.unwrap_or(if plan.has_sequence_numbers { 2 } else { 1 });
    let content = match container.meta_str("content") {
        None | Some("data") => ManifestContent::Data,
        Some("deletes") => ManifestContent::Deletes,
        Some(other) => {
            return Err(invalid_data(format!(
                "expected manifest content 'data' or 'deletes', found '{other}'"
            )))
        }
    };
    container.decode_each(|c| f(decode_entry(c, &plan, partition_spec_id, stats)?))?;
    Ok(ManifestMetadata {
        schema_json: container.meta_str("schema").map(str::to_string),
        partition_spec_json: container.meta_str("partition-spec").map(str::to_string),
        partition_spec_id,
        format_version,
        content,
        partition_type: plan.partition_type,
    })
}

impl Manifest {
    /// Applies the spec's inheritance from the manifest-list entry: a null snapshot id takes the
    /// manifest's `added_snapshot_id`; null sequence numbers take the manifest's sequence number
    /// for ADDED entries, or always when that is 0 (v1). Also sets every file's `spec_id`.
    pub fn inherit(&mut self, manifest: &ManifestFile) {
        let seq = manifest.sequence_number;
        let mut row_ids = RowIds::new(manifest);
        for e in &mut self.entries {
            inherit_entry(e, manifest, seq);
            row_ids.assign(e);
        }
    }
}

/// First row id inheritance (v3 row lineage, Java `ManifestReader.idAssigner`): in a data
/// manifest with a `first_row_id`, each live data file without one takes the next id, and
/// the next id moves on by its record count; a manifest without one (written before v3)
/// leaves every file without one. Entries must come in file order.
struct RowIds(Option<i64>);

impl RowIds {
    fn new(manifest: &ManifestFile) -> Self {
        RowIds(match manifest.content {
            ManifestContent::Data => manifest.first_row_id,
            ManifestContent::Deletes => None,
        })
    }

    fn assign(&mut self, e: &mut ManifestEntry) {
        let f = &mut e.data_file;
        if f.content != DataContentType::Data {
            return;
        }
        match &mut self.0 {
            None => f.first_row_id = None,
            Some(next) => {
                if e.status != EntryStatus::Deleted && f.first_row_id.is_none() {
                    f.first_row_id = Some(*next);
                    *next = next.saturating_add(f.record_count.max(0));
                }
            }
        }
    }
}

#[inline]
fn inherit_entry(e: &mut ManifestEntry, manifest: &ManifestFile, seq: i64) {
    if e.snapshot_id.is_none() {
        e.snapshot_id = Some(manifest.added_snapshot_id);
    }
    let inherit_seq = seq == 0 || e.status == EntryStatus::Added;
    if e.sequence_number.is_none() && inherit_seq {
        e.sequence_number = Some(seq);
    }
    if e.file_sequence_number.is_none() && inherit_seq {
        e.file_sequence_number = Some(seq);
    }
    e.data_file.spec_id = manifest.partition_spec_id;
}

fn read_checked(manifest: &ManifestFile, stats: &StatsProjection) -> Result<Manifest> {
    // The list's counts size the vector; never more than the file could hold.
    let listed = [manifest.added_files_count, manifest.existing_files_count, manifest.deleted_files_count];
    let n: i64 = listed.iter().map(|c| i64::from(c.unwrap_or(0).max(0))).sum();
    let mut entries = Vec::with_capacity((n.min(manifest.manifest_length / 8).max(0)) as usize);
    let metadata = read_each(manifest, stats, |e| {
        entries.push(e);
        Ok(())
    })?;
    Ok(Manifest { metadata, entries })
}

/// The environment variable that sets the largest manifest icefloe reads (MB).
pub const MANIFEST_MAX_ENV: &str = "ICEFLOE_MANIFEST_MAX_MB";

/// Default largest manifest: 1 GB. A manifest is read into memory whole and its entries
/// streamed from there; Java's writers roll manifests at 8 MB
/// (`commit.manifest.target-size-bytes`), so a manifest past this is damage or a runaway
/// writer, and the driver fails with a clear error instead of being OOM-killed.
pub const DEFAULT_MANIFEST_MAX_MB: i64 = 1024;

fn manifest_max_bytes() -> i64 {
    let mb = std::env::var(MANIFEST_MAX_ENV).ok().and_then(|v| v.trim().parse::<i64>().ok());
    mb.unwrap_or(DEFAULT_MANIFEST_MAX_MB).saturating_mul(1 << 20)
}

/// Refuses a manifest whose recorded length is past `ICEFLOE_MANIFEST_MAX_MB`, before any
/// byte of it is read.
fn check_manifest_size(manifest: &ManifestFile) -> Result<()> {
    let max = manifest_max_bytes();
    if manifest.manifest_length <= max {
        return Ok(());
    }
    Err(resource_limit(format!(
        "manifest is {} MB (its manifest list entry's manifest_length), past the {} MB icefloe reads into \
         memory ({MANIFEST_MAX_ENV}); raise it where the driver has the memory, then rewrite_manifests()",
        manifest.manifest_length >> 20,
        max >> 20
    ))
    .with_context("file", manifest.manifest_path.as_str()))
}

fn read_each(
    manifest: &ManifestFile,
    stats: &StatsProjection,
    mut f: impl FnMut(ManifestEntry) -> Result<()>,
) -> Result<ManifestMetadata> {
    let path = manifest.manifest_path.as_str();
    check_manifest_size(manifest)?;
    let bytes = io::read_file(path)?;
    // The list records the exact length (T2): a shorter file lost whole blocks, which Avro
    // alone cannot notice.
    if bytes.len() as i64 != manifest.manifest_length {
        return Err(invalid_data(format!(
            "manifest is {} bytes but the manifest list records {} (truncated or replaced file)",
            bytes.len(),
            manifest.manifest_length
        ))
        .with_context("file", path));
    }
    let seq = manifest.sequence_number;
    let mut n = 0i64;
    let mut row_ids = RowIds::new(manifest);
    let metadata = parse_each(&bytes, stats, |mut e| {
        inherit_entry(&mut e, manifest, seq);
        row_ids.assign(&mut e);
        n += 1;
        f(e)
    })
    .map_err(|e| e.with_context("file", path))?;
    let counts = [manifest.added_files_count, manifest.existing_files_count, manifest.deleted_files_count];
    if counts.iter().all(Option::is_some) {
        let expected: i64 = counts.iter().map(|c| i64::from(c.unwrap_or(0))).sum();
        if expected != n {
            return Err(invalid_data(format!(
                "manifest has {n} entries but the manifest list counts {expected}"
            ))
            .with_context("file", path));
        }
    }
    Ok(metadata)
}

/// Streams a manifest named by a manifest-list entry: each entry, with inheritance applied
/// and only the column stats `stats` keeps, goes to `f` as it is decoded (no entry vector);
/// returns the metadata. Checks as [`read_manifest`] does (after the entries: a caller
/// must drop what it built from them when this fails).
pub fn read_manifest_each(
    manifest: &ManifestFile,
    stats: &StatsProjection,
    f: impl FnMut(ManifestEntry) -> Result<()>,
) -> Result<ManifestMetadata> {
    read_each(manifest, stats, f)
}

/// Reads a manifest named by a manifest-list entry, with inheritance applied: every entry has
/// a snapshot id, and sequence numbers wherever the spec defines them. Checks the file length
/// and the entry count against the list.
pub fn read_manifest(manifest: &ManifestFile) -> Result<Vec<ManifestEntry>> {
    Ok(read_checked(manifest, &StatsProjection::All)?.entries)
}

/// [`read_manifest`], also returning the manifest's metadata.
pub fn read_manifest_with_metadata(manifest: &ManifestFile) -> Result<Manifest> {
    read_checked(manifest, &StatsProjection::All)
}

/// [`read_manifest_with_metadata`] keeping only the column stats `stats` keeps (the scan
/// planner's fast path: the maps it does not read are skipped without allocating).
pub fn read_manifest_projected(manifest: &ManifestFile, stats: &StatsProjection) -> Result<Manifest> {
    read_checked(manifest, stats)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::{DataContentType, FileFormat, ManifestListWriter, ManifestWriter, UNASSIGNED_SEQ};
    use crate::spec::{Literal, NestedField, PrimitiveType, Type};

    fn partition_type() -> StructType {
        let p = |id, name: &str, t: PrimitiveType| NestedField::optional(id, name, Type::Primitive(t));
        StructType::new(vec![
            p(1000, "category", PrimitiveType::String),
            p(1001, "ts_day", PrimitiveType::Date),
            p(1002, "id_bucket", PrimitiveType::Int),
            p(1003, "big", PrimitiveType::Long),
            p(1004, "amount", PrimitiveType::Decimal { precision: 9, scale: 2 }),
            p(1005, "u", PrimitiveType::Uuid),
            p(1006, "flag", PrimitiveType::Boolean),
            p(1007, "ts", PrimitiveType::Timestamp),
            p(1008, "tstz", PrimitiveType::Timestamptz),
            p(1009, "bin", PrimitiveType::Binary),
            p(1010, "fx", PrimitiveType::Fixed(3)),
            p(1011, "f", PrimitiveType::Float),
            p(1012, "d", PrimitiveType::Double),
            p(1013, "big_dec", PrimitiveType::Decimal { precision: 38, scale: 0 }),
            p(1014, "t", PrimitiveType::Time),
            p(1015, "fx2", PrimitiveType::Fixed(3)),
        ])
    }

    fn partition(i: i64) -> Vec<Option<Literal>> {
        if i % 5 == 4 {
            return vec![None; 16];
        }
        vec![
            Some(Literal::String(format!("cat-{}", i % 3))),
            Some(Literal::Date(19_000 + i as i32 - 2)),
            Some(Literal::Int((i % 16) as i32)),
            Some(Literal::Long(-i * 1_000_000_007)),
            Some(Literal::Decimal(i128::from(i) * 1234 - 5000)),
            Some(Literal::Uuid(0xf79c_3e09_677c_4bbd_a479_3f34_9cb7_85e7 + u128::from(i as u64))),
            Some(Literal::Boolean(i % 2 == 0)),
            Some(Literal::Timestamp(1_700_000_000_000_000 + i)),
            Some(Literal::Timestamptz(-1 - i)),
            Some(Literal::Binary(vec![i as u8, 0xff])),
            Some(Literal::Fixed(vec![1, 2, i as u8])),
            Some(Literal::Float(if i == 1 { f32::NAN } else { i as f32 - 1.5 })),
            Some(Literal::Double(-(i as f64))),
            Some(Literal::Decimal(-(10i128.pow(37)) - i128::from(i))),
            Some(Literal::Time(i * 1_000_000)),
            Some(Literal::Fixed(vec![9, 9, 9])),
        ]
    }

    fn data_file(i: i64, content: DataContentType) -> DataFile {
        let mut f = DataFile::new_data(format!("file:/tmp/t/data/f{i}.parquet"), 10 + i, 1000 + i);
        f.content = content;
        f.partition = partition(i);
        f.file_format = if i == 2 { FileFormat::Avro } else { FileFormat::Parquet };
        for col in 1..=4 {
            f.column_sizes.insert(col, 100 * i64::from(col) + i);
            f.value_counts.insert(col, 10 + i);
            f.null_value_counts.insert(col, i % 2);
            f.lower_bounds.insert(col, vec![col as u8; 8]);
            f.upper_bounds.insert(col, vec![0xff, col as u8]);
        }
        f.nan_value_counts.insert(4, 1);
        f.key_metadata = (i == 3).then(|| vec![1, 2, 3]);
        f.split_offsets = Some(vec![4, 1000 + i]);
        match content {
            DataContentType::Data => f.sort_order_id = Some(0),
            DataContentType::PositionDeletes => {
                f.referenced_data_file = Some(format!("file:/tmp/t/data/f{}.parquet", i - 1));
            }
            DataContentType::EqualityDeletes => {
                f.equality_ids = Some(vec![1, 3]);
                f.sort_order_id = Some(0);
            }
        }
        f
    }

    fn writer(dir: &std::path::Path, name: &str, content: ManifestContent) -> ManifestWriter {
        ManifestWriter::with_partition_type(
            dir.join(name).display().to_string(),
            42,
            content,
            r#"{"type":"struct","schema-id":0,"fields":[]}"#,
            3,
            "[]",
            partition_type(),
            2,
        )
        .unwrap()
    }

    #[test]
    fn data_manifest_round_trip_with_inheritance_and_summaries() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = writer(dir.path(), "m0.avro", ManifestContent::Data);
        for i in 0..6 {
            w.add(data_file(i, DataContentType::Data)).unwrap();
        }
        w.existing(data_file(10, DataContentType::Data), 7, 3, Some(2)).unwrap();
        w.delete(data_file(11, DataContentType::Data), 4, Some(4)).unwrap();
        assert_eq!(w.entry_count(), 8);
        let mf = w.close().unwrap();
        assert_eq!(mf.manifest_length as u64, std::fs::metadata(&mf.manifest_path).unwrap().len());
        assert_eq!(mf.sequence_number, UNASSIGNED_SEQ);
        assert_eq!(mf.min_sequence_number, 3);
        assert_eq!(
            (mf.added_files_count, mf.existing_files_count, mf.deleted_files_count),
            (Some(6), Some(1), Some(1))
        );
        assert_eq!(mf.added_rows_count, Some((0..6).map(|i| 10 + i).sum()));

        // Summaries: over all entries (incl. deleted), null and NaN tracked, bounds typed.
        let parts = mf.partitions.clone().unwrap();
        assert_eq!(parts.len(), 16);
        assert!(parts[0].contains_null);
        assert_eq!(parts[0].lower_bound.as_deref(), Some(&b"cat-0"[..]));
        assert_eq!(parts[0].upper_bound.as_deref(), Some(&b"cat-2"[..]));
        assert_eq!(parts[1].lower_bound, Some(18_998i32.to_le_bytes().to_vec()));
        assert_eq!(parts[1].upper_bound, Some(19_009i32.to_le_bytes().to_vec()));
        assert_eq!(parts[11].contains_nan, Some(true));
        assert_eq!(parts[11].lower_bound, Some((-1.5f32).to_le_bytes().to_vec()));
        assert_eq!(parts[11].upper_bound, Some(9.5f32.to_le_bytes().to_vec()));
        assert_eq!(parts[2].contains_nan, Some(false));

        // Commit through a manifest list, then read back with inheritance.
        let list_path = dir.path().join("snap.avro").display().to_string();
        let mut lw = ManifestListWriter::new(&list_path, 42, Some(41), 9);
        lw.add(mf.clone());
        lw.write().unwrap();
        let listed = crate::manifest::read_manifest_list(&list_path).unwrap();
        assert_eq!(listed[0].sequence_number, 9);
        assert_eq!(listed[0].min_sequence_number, 3);
        let m = read_manifest_with_metadata(&listed[0]).unwrap();
        assert_eq!(m.metadata.partition_type, partition_type());
        assert_eq!(m.metadata.partition_spec_id, 3);
        assert_eq!(m.metadata.format_version, 2);
        assert_eq!(m.metadata.content, ManifestContent::Data);
        assert_eq!(m.entries.len(), 8);
        for (i, e) in m.entries.iter().take(6).enumerate() {
            assert_eq!(e.status, EntryStatus::Added);
            assert_eq!(
                (e.snapshot_id, e.sequence_number, e.file_sequence_number),
                (Some(42), Some(9), Some(9))
            );
            let mut expected = data_file(i as i64, DataContentType::Data);
            expected.spec_id = 3;
            // NaN != NaN: compare that one field by bits.
            if i == 1 {
                assert!(matches!(e.data_file.partition[11], Some(Literal::Float(f)) if f.is_nan()));
                let mut got = e.data_file.clone();
                got.partition[11] = None;
                expected.partition[11] = None;
                assert_eq!(got, expected);
            } else {
                assert_eq!(e.data_file, expected);
            }
        }
        let ex = &m.entries[6];
        assert_eq!(
            (ex.status, ex.snapshot_id, ex.sequence_number, ex.file_sequence_number),
            (EntryStatus::Existing, Some(7), Some(3), Some(2))
        );
        let del = &m.entries[7];
        assert_eq!(
            (del.status, del.snapshot_id, del.sequence_number),
            (EntryStatus::Deleted, Some(42), Some(4))
        );

        // The reference Avro implementation reads our file too.
        let bytes = std::fs::read(&mf.manifest_path).unwrap();
        let r = apache_avro::Reader::new(&bytes[..]).unwrap();
        assert_eq!(r.user_metadata()["content"], b"data");
        assert_eq!(r.user_metadata()["partition-spec-id"], b"3");
        assert!(r.collect::<Result<Vec<_>, _>>().unwrap().len() == 8);
    }

    #[test]
    fn delete_manifest_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = writer(dir.path(), "d0.avro", ManifestContent::Deletes);
        w.add(data_file(1, DataContentType::PositionDeletes)).unwrap();
        w.add(data_file(2, DataContentType::EqualityDeletes)).unwrap();
        assert!(w.add(data_file(3, DataContentType::Data)).is_err());
        let mut mf = w.close().unwrap();
        mf.sequence_number = 5;
        let m = read_manifest_with_metadata(&mf).unwrap();
        assert_eq!(m.metadata.content, ManifestContent::Deletes);
        let got: Vec<_> = m
            .entries
            .iter()
            .map(|e| {
                (
                    e.data_file.content,
                    e.data_file.equality_ids.clone(),
                    e.data_file.referenced_data_file.clone(),
                    e.sequence_number,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                (DataContentType::PositionDeletes, None, Some("file:/tmp/t/data/f0.parquet".into()), Some(5)),
                (DataContentType::EqualityDeletes, Some(vec![1, 3]), None, Some(5)),
            ]
        );
    }

    #[test]
    fn unpartitioned_and_spec_struct_constructor() {
        let dir = tempfile::tempdir().unwrap();
        let schema = Schema::new(
            0,
            vec![NestedField::required(1, "id", Type::Primitive(PrimitiveType::Long))],
            vec![],
        )
        .unwrap();
        let spec = PartitionSpec::unpartitioned();
        let path = dir.path().join("u.avro").display().to_string();
        let mut w = ManifestWriter::new(&path, 1, ManifestContent::Data, &schema, &spec).unwrap();
        w.add(DataFile::new_data("file:/x.parquet", 1, 2)).unwrap();
        let mut mf = w.close().unwrap();
        assert_eq!(mf.partitions, Some(vec![]));
        mf.sequence_number = 1;
        let m = read_manifest_with_metadata(&mf).unwrap();
        assert_eq!(m.entries[0].data_file.partition, vec![]);
        assert_eq!(m.metadata.schema().unwrap().unwrap(), schema);
        assert!(m.metadata.partition_spec().unwrap().unwrap().is_unpartitioned());
    }

    #[test]
    fn errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = writer(dir.path(), "m.avro", ManifestContent::Data);
        for i in 0..200 {
            w.add(data_file(i, DataContentType::Data)).unwrap();
        }
        let mut mf = w.close().unwrap();
        mf.sequence_number = 1;
        let bytes = std::fs::read(&mf.manifest_path).unwrap();
        let check = |mf: &ManifestFile, kind: crate::ErrorKind, needle: &str| {
            let e = read_manifest(mf).unwrap_err();
            assert_eq!(e.kind(), kind, "{e}");
            let s = e.to_string();
            assert!(s.contains(&mf.manifest_path) && s.contains(needle), "{s}");
        };

        let missing =
            ManifestFile { manifest_path: dir.path().join("nope.avro").display().to_string(), ..mf.clone() };
        check(&missing, crate::ErrorKind::NotFound, "nope.avro");

        // A 10 GB manifest is refused from its list entry, before a byte is read.
        let huge = ManifestFile { manifest_length: 10 << 30, ..missing.clone() };
        check(
            &huge,
            crate::ErrorKind::ResourceLimit,
            "manifest is 10240 MB (its manifest list entry's manifest_length), past the 1024 MB",
        );
        check(&huge, crate::ErrorKind::ResourceLimit, MANIFEST_MAX_ENV);

        let magic = dir.path().join("magic.avro").display().to_string();
        let mut b = bytes.clone();
        b[1] = b'x';
        std::fs::write(&magic, &b).unwrap();
        check(&ManifestFile { manifest_path: magic, ..mf.clone() }, crate::ErrorKind::InvalidData, "magic");

        // Truncated anywhere: caught by Avro framing or by the recorded length.
        for cut in [3, 100, bytes.len() / 2, bytes.len() - 16, bytes.len() - 1] {
            let p = dir.path().join(format!("cut{cut}.avro")).display().to_string();
            std::fs::write(&p, &bytes[..cut]).unwrap();
            check(
                &ManifestFile { manifest_path: p.clone(), ..mf.clone() },
                crate::ErrorKind::InvalidData,
                "",
            );
            // Even when the list's length is wrong too, the Avro decoding must not come back short silently.
            let r = Manifest::parse(&bytes[..cut]);
            assert!(r.is_err() || r.unwrap().entries.len() < 200);
        }
        // Corrupt block content.
        let p = dir.path().join("corrupt.avro").display().to_string();
        let mut b = bytes.clone();
        let n = b.len();
        for x in &mut b[n - 200..n - 20] {
            *x ^= 0x5a;
        }
        std::fs::write(&p, &b).unwrap();
        check(&ManifestFile { manifest_path: p, ..mf.clone() }, crate::ErrorKind::InvalidData, "");
        // Count mismatch with the list.
        let wrong = ManifestFile { added_files_count: Some(199), ..mf.clone() };
        check(&wrong, crate::ErrorKind::InvalidData, "entries");
    }
}
