//! Which manifests `rewrite_manifests` replaces and how their entries are clustered (Iceberg
//! Java's `RewriteManifestsSparkAction`).
//!
//! - Per content (data, then deletes), the current snapshot's manifests of one partition spec
//!   are selected; nothing is rewritten when they are a single manifest that fits the target
//!   size (`commit.manifest.target-size-bytes`, 8 MiB).
//! - Their live entries are sorted by partition tuple (Spark's struct order: field by field in
//!   partition field id order, nulls first), or by the partition fields `sort_by` names, in
//!   that order (Java 1.12's `sortBy`), and cut into `ceil(total bytes / target)` ranges of
//!   about equal entry counts, never splitting one partition across two ranges (Spark's
//!   `repartitionByRange`, here with exact rather than sampled boundaries). An unpartitioned
//!   spec's entries keep manifest order (Java distributes them round-robin).
//! - Each range is written by a rolling writer that starts a new manifest past 1.2 × target.
//! - Entries become EXISTING with their snapshot id, data and file sequence numbers (and v3
//!   first row id) unchanged.

use std::cmp::Ordering;

use crate::error::{validation, Result};
use crate::manifest::{read_manifest, ManifestContent, ManifestEntry, ManifestFile, ManifestWriter};
use crate::spec::{Literal, PartitionSpec, TableMetadata};

/// The manifests of `content` and `spec_id` to rewrite, or none when there is nothing to gain
/// (Java: no matching manifest, or one that fits one target-sized manifest).
pub fn select_manifests(
    manifests: &[ManifestFile],
    content: ManifestContent,
    spec_id: i32,
    target_size_bytes: i64,
) -> Result<Vec<ManifestFile>> {
    let matching: Vec<ManifestFile> = manifests
        .iter()
        .filter(|m| m.content == content && m.partition_spec_id == spec_id)
        .cloned()
        .collect();
    if matching.is_empty() {
        return Ok(matching);
    }
    let mut total = 0i64;
    for m in &matching {
        if m.added_files_count.is_none()
            || m.existing_files_count.is_none()
            || m.deleted_files_count.is_none()
        {
            return Err(validation("no file counts in manifest: cannot rewrite it")
                .with_context("manifest", m.manifest_path.clone()));
        }
        total = total.saturating_add(m.manifest_length);
    }
    if target_manifest_count(total, target_size_bytes) == 1 && matching.len() == 1 {
        return Ok(vec![]);
    }
    Ok(matching)
}

/// `ceil(total / target)` (Java's `targetNumManifests`), at least 1.
pub fn target_manifest_count(total_bytes: i64, target_size_bytes: i64) -> usize {
    let target = target_size_bytes.max(1);
    (total_bytes.saturating_add(target - 1) / target).max(1) as usize
}

/// The live entries of `manifests`, in manifest order, with inherited snapshot ids and
/// sequence numbers made explicit.
pub fn live_entries(manifests: &[ManifestFile]) -> Result<Vec<ManifestEntry>> {
    let mut out = Vec::new();
    for m in manifests {
        for mut e in read_manifest(m)? {
            if !e.status.is_live() {
                continue;
            }
            if e.sequence_number.is_none_or(|s| s < 0) {
                return Err(validation(
                    "a live manifest entry has no data sequence number after inheritance",
                )
                .with_context("manifest", m.manifest_path.clone())
                .with_context("file", e.data_file.file_path.clone()));
            }
            e.snapshot_id = Some(e.snapshot_id.unwrap_or(m.added_snapshot_id));
            e.data_file.spec_id = m.partition_spec_id;
            out.push(e);
        }
    }
    Ok(out)
}

/// Spark's ascending order of partition structs: field by field, a null before any value.
fn compare_partitions(a: &[Option<Literal>], b: &[Option<Literal>], order: &[usize]) -> Ordering {
    for &i in order {
        let ord = match (a.get(i).and_then(Option::as_ref), b.get(i).and_then(Option::as_ref)) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(x), Some(y)) => x.cmp_same_type(y).unwrap_or(Ordering::Equal),
        };
        if ord != Ordering::Equal {
            return ord;
        }
    }
    Ordering::Equal
}

/// Sorts `entries` by partition and cuts them into at most `ranges` clusters of about equal
/// size, a partition never split (see the module doc). Unpartitioned: manifest order, cut
/// into equal chunks. `key`: the positions in `spec.fields` to sort and cluster by, in that
/// order (Java 1.12's `sortBy` of partition field names); `None`, the whole partition tuple.
pub fn cluster(
    mut entries: Vec<ManifestEntry>,
    spec: &PartitionSpec,
    ranges: usize,
    key: Option<&[usize]>,
) -> Vec<Vec<ManifestEntry>> {
    let ranges = ranges.max(1);
    let partitioned = !spec.is_unpartitioned();
    let order: Vec<usize> = match key {
        Some(key) => key.to_vec(),
        None => {
            let mut order: Vec<usize> = (0..spec.fields.len()).collect();
            order.sort_by_key(|&i| spec.fields[i].field_id);
            order
        }
    };
    if partitioned {
        entries.sort_by(|a, b| compare_partitions(&a.data_file.partition, &b.data_file.partition, &order));
    }
    let total = entries.len();
    let mut out: Vec<Vec<ManifestEntry>> = Vec::with_capacity(ranges);
    let mut current: Vec<ManifestEntry> = Vec::new();
    for (done, e) in entries.into_iter().enumerate() {
        // The end of range k is at entry k * total / ranges, moved past a run of one key.
        let boundary = (out.len() + 1) * total / ranges;
        let same_as_last = partitioned
            && current.last().is_some_and(|l| {
                compare_partitions(&l.data_file.partition, &e.data_file.partition, &order) == Ordering::Equal
            });
        if !current.is_empty() && done >= boundary && !same_as_last && out.len() + 1 < ranges {
            out.push(std::mem::take(&mut current));
        }
        current.push(e);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// The positions in `spec.fields` of the partition field names `names` (Java's `sortBy`),
/// refused as Java refuses names the spec does not have.
pub fn cluster_key(spec: &PartitionSpec, names: &[String]) -> Result<Vec<usize>> {
    if names.is_empty() {
        return Err(validation("sort_by must not be empty when provided"));
    }
    let missing: Vec<&str> =
        names.iter().filter(|n| !spec.fields.iter().any(|f| &f.name == *n)).map(String::as_str).collect();
    if !missing.is_empty() {
        return Err(validation(format!(
            "Cannot set manifest sorting because specified field(s) [{}] were not found in current partition spec {}. Spec ID {}",
            missing.join(", "),
            spec.fields.iter().map(|f| f.name.as_str()).collect::<Vec<_>>().join(", "),
            spec.spec_id
        )));
    }
    Ok(names.iter().filter_map(|n| spec.fields.iter().position(|f| &f.name == n)).collect())
}

/// Writes each cluster with a rolling writer (a new manifest once one reaches
/// `max_manifest_bytes`). `new_path` names each new manifest and records it before it is
/// written, so a failure midway can delete what was written.
pub fn write_clusters(
    base: &TableMetadata,
    snapshot_id: i64,
    spec: &PartitionSpec,
    content: ManifestContent,
    clusters: Vec<Vec<ManifestEntry>>,
    max_manifest_bytes: i64,
    new_path: &mut dyn FnMut() -> String,
) -> Result<Vec<ManifestFile>> {
    let mut out = Vec::new();
    for cluster in clusters {
        let mut writer: Option<ManifestWriter> = None;
        for (n, e) in cluster.into_iter().enumerate() {
            // Java's RollingManifestWriter looks at the length every 250 entries.
            if n % 250 == 0 && writer.as_ref().is_some_and(|w| w.length() >= max_manifest_bytes) {
                if let Some(w) = writer.take() {
                    out.push(w.close()?);
                }
            }
            let w = match writer.as_mut() {
                Some(w) => w,
                None => {
                    writer.insert(ManifestWriter::for_table(new_path(), snapshot_id, content, base, spec)?)
                }
            };
            let (sid, seq) = match (e.snapshot_id, e.sequence_number) {
                (Some(sid), Some(seq)) => (sid, seq),
                _ => {
                    return Err(validation(
                        "a carried-over manifest entry has no snapshot id or sequence number",
                    )
                    .with_context("file", e.data_file.file_path.clone()))
                }
            };
            w.existing(e.data_file, sid, seq, e.file_sequence_number)?;
        }
        if let Some(w) = writer {
            out.push(w.close()?);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::{DataFile, EntryStatus};
    use crate::spec::{PartitionField, Transform};

    fn entry(path: &str, part: Option<i32>) -> ManifestEntry {
        let mut f = DataFile::new_data(path, 1, 10);
        f.partition = vec![part.map(Literal::Int)];
        ManifestEntry {
            status: EntryStatus::Existing,
            snapshot_id: Some(1),
            sequence_number: Some(1),
            file_sequence_number: Some(1),
            data_file: f,
        }
    }

    fn spec() -> PartitionSpec {
        let mut s = PartitionSpec::unpartitioned();
        s.fields.push(PartitionField::new(1, 1000, "p", Transform::Identity));
        s
    }

    #[test]
    fn clusters_are_sorted_nulls_first_and_never_split_a_partition() {
        let entries = vec![
            entry("a", Some(3)),
            entry("b", Some(1)),
            entry("c", None),
            entry("d", Some(1)),
            entry("e", Some(1)),
            entry("f", Some(2)),
        ];
        let clusters = cluster(entries, &spec(), 3, None);
        let paths: Vec<Vec<&str>> =
            clusters.iter().map(|c| c.iter().map(|e| e.data_file.file_path.as_str()).collect()).collect();
        // 6 entries in 3 ranges: boundaries at 2 and 4, each moved past partition 1's run.
        assert_eq!(paths, vec![vec!["c", "b", "d", "e"], vec!["f"], vec!["a"]]);
    }

    #[test]
    fn one_cluster_when_one_range() {
        let entries = vec![entry("a", Some(2)), entry("b", Some(1))];
        let clusters = cluster(entries, &spec(), 1, None);
        assert_eq!(clusters.len(), 1);
        assert_eq!(clusters[0][0].data_file.file_path, "b");
    }

    fn two_field_spec() -> PartitionSpec {
        let mut s = spec();
        s.fields.push(PartitionField::new(2, 1001, "q", Transform::Identity));
        s
    }

    fn entry2(path: &str, p: i32, q: i32) -> ManifestEntry {
        let mut e = entry(path, Some(p));
        e.data_file.partition.push(Some(Literal::Int(q)));
        e
    }

    #[test]
    fn sort_by_clusters_by_the_named_fields_in_their_order() {
        let entries = || vec![entry2("a", 1, 2), entry2("b", 2, 1), entry2("c", 1, 1), entry2("d", 2, 2)];
        let paths = |clusters: Vec<Vec<ManifestEntry>>| -> Vec<Vec<String>> {
            clusters.iter().map(|c| c.iter().map(|e| e.data_file.file_path.clone()).collect()).collect()
        };
        // The whole tuple: p first, then q.
        assert_eq!(
            paths(cluster(entries(), &two_field_spec(), 2, None)),
            vec![vec!["c", "a"], vec!["b", "d"]]
        );
        // sort_by q: q = 1 in one cluster, q = 2 in the other (ties keep their order).
        let key = cluster_key(&two_field_spec(), &["q".to_string()]).unwrap();
        assert_eq!(key, vec![1]);
        assert_eq!(
            paths(cluster(entries(), &two_field_spec(), 2, Some(&key))),
            vec![vec!["b", "c"], vec!["a", "d"]]
        );
    }

    #[test]
    fn sort_by_names_the_fields_the_spec_lacks_as_java_does() {
        let err =
            cluster_key(&two_field_spec(), &["q".to_string(), "nope".to_string()]).unwrap_err().to_string();
        assert!(
            err.contains("specified field(s) [nope] were not found in current partition spec p, q"),
            "{err}"
        );
        let empty = cluster_key(&two_field_spec(), &[]).unwrap_err().to_string();
        assert!(empty.contains("sort_by must not be empty"), "{empty}");
    }

    #[test]
    fn target_count_rounds_up() {
        assert_eq!(target_manifest_count(0, 100), 1);
        assert_eq!(target_manifest_count(100, 100), 1);
        assert_eq!(target_manifest_count(101, 100), 2);
    }
}
