//! The manifest merge step (Iceberg Java's `ManifestMergeManager`): once a spec's data
//! manifests are numerous enough, small ones are rewritten into one, so a table appended every
//! minute does not plan over thousands of manifests. The snapshot producer (`producer.rs`) runs
//! it with the table's settings ([`MergeConfig`]) on every change but a fast append.
//!
//! Per spec (highest spec id first), the manifests (this commit's new manifest first, then
//! the parent's in list order) are bin-packed from the end into bins of at most
//! `commit.manifest.target-size-bytes`. A bin of one manifest is kept; the bin holding the
//! commit's first manifest is kept as is while it has fewer than
//! `commit.manifest.min-count-to-merge` manifests; any other bin is rewritten as one
//! manifest: entries added by this snapshot stay ADDED, its deletions stay DELETED,
//! deletions of earlier snapshots are dropped, and everything else becomes EXISTING with its
//! original snapshot id and sequence numbers.

use std::cmp::Reverse;
use std::collections::BTreeMap;

use crate::commit::attempt::Attempt;
use crate::error::{validation, Result};
use crate::manifest::{read_manifest, EntryStatus, ManifestContent, ManifestFile};

pub const MERGE_ENABLED: &str = "commit.manifest-merge.enabled";
pub const TARGET_SIZE_BYTES: &str = "commit.manifest.target-size-bytes";
pub const MIN_COUNT_TO_MERGE: &str = "commit.manifest.min-count-to-merge";

/// The table's manifest merge settings (Java's defaults: enabled, 8 MiB, 100).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeConfig {
    pub enabled: bool,
    pub target_size_bytes: i64,
    pub min_count_to_merge: usize,
}

impl Default for MergeConfig {
    fn default() -> Self {
        MergeConfig { enabled: true, target_size_bytes: 8 * 1024 * 1024, min_count_to_merge: 100 }
    }
}

impl MergeConfig {
    /// Reads the settings from table properties; unparsable values keep the default (as
    /// Java's `PropertyUtil` would fail, we prefer committing with the default).
    pub fn from_properties(props: &BTreeMap<String, String>) -> Self {
        let d = MergeConfig::default();
        MergeConfig {
            enabled: props
                .get(MERGE_ENABLED)
                .map(|v| !v.trim().eq_ignore_ascii_case("false"))
                .unwrap_or(d.enabled),
            target_size_bytes: props
                .get(TARGET_SIZE_BYTES)
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(d.target_size_bytes),
            min_count_to_merge: props
                .get(MIN_COUNT_TO_MERGE)
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(d.min_count_to_merge),
        }
    }
}

/// The merge step over a commit's data manifests (new ones first). Returns the manifests to
/// list; rewritten ones are new files of `attempt`, and this commit's own manifests that were
/// merged away are deleted.
pub(crate) fn merge_manifests(
    attempt: &mut Attempt<'_>,
    manifests: Vec<ManifestFile>,
    config: &MergeConfig,
) -> Result<Vec<ManifestFile>> {
    let Some(first) = manifests.first().map(|m| m.manifest_path.clone()) else {
        return Ok(manifests);
    };
    if !config.enabled {
        return Ok(manifests);
    }
    let mut groups: BTreeMap<Reverse<i32>, Vec<ManifestFile>> = BTreeMap::new();
    for m in manifests {
        groups.entry(Reverse(m.partition_spec_id)).or_default().push(m);
    }
    let mut out = Vec::new();
    for (Reverse(spec_id), group) in groups {
        for bin in pack_end(group, config.target_size_bytes) {
            let holds_first = bin.iter().any(|m| m.manifest_path == first);
            if bin.len() == 1 || (holds_first && bin.len() < config.min_count_to_merge) {
                out.extend(bin);
            } else {
                out.push(merge_bin(attempt, spec_id, &bin)?);
            }
        }
    }
    Ok(out)
}

/// Java's `ListPacker(target, lookback 1, false).packEnd`: greedy packing from the end of
/// the list with one open bin; bins and their items come back in list order. An item larger
/// than the target gets a bin of its own.
fn pack_end(items: Vec<ManifestFile>, target: i64) -> Vec<Vec<ManifestFile>> {
    let mut bins: Vec<Vec<ManifestFile>> = Vec::new();
    let mut current: Vec<ManifestFile> = Vec::new();
    let mut weight = 0i64;
    for m in items.into_iter().rev() {
        if !current.is_empty() && weight.saturating_add(m.manifest_length) > target {
            bins.push(std::mem::take(&mut current));
            weight = 0;
        }
        weight = weight.saturating_add(m.manifest_length);
        current.push(m);
    }
    if !current.is_empty() {
        bins.push(current);
    }
    for b in &mut bins {
        b.reverse();
    }
    bins.reverse();
    bins
}

fn merge_bin(attempt: &mut Attempt<'_>, spec_id: i32, bin: &[ManifestFile]) -> Result<ManifestFile> {
    let snapshot_id = attempt.snapshot_id;
    let mut w = attempt.writer(spec_id, ManifestContent::Data)?;
    for m in bin {
        for e in read_manifest(m)? {
            let ours = e.snapshot_id == Some(snapshot_id);
            let mut f = e.data_file;
            f.spec_id = spec_id;
            match e.status {
                EntryStatus::Deleted if ours => {
                    let seq = explicit_seq(e.sequence_number, m)?;
                    w.delete(f, seq, e.file_sequence_number)?;
                }
                EntryStatus::Deleted => {}
                // An explicit data sequence number (a rewrite's) survives the merge; an
                // inherited one reads back as the unassigned marker.
                EntryStatus::Added if ours => match e.sequence_number {
                    Some(seq) if seq >= 0 => w.add_with_sequence_number(f, seq)?,
                    _ => w.add(f)?,
                },
                EntryStatus::Added | EntryStatus::Existing => {
                    let seq = explicit_seq(e.sequence_number, m)?;
                    let sid = e.snapshot_id.unwrap_or(m.added_snapshot_id);
                    w.existing(f, sid, seq, e.file_sequence_number)?;
                }
            }
        }
    }
    let merged = w.close()?;
    // This commit's own manifests now live on inside the merged one.
    for m in bin.iter().filter(|m| m.added_snapshot_id == snapshot_id) {
        attempt.discard(&m.manifest_path);
    }
    Ok(merged)
}

fn explicit_seq(seq: Option<i64>, m: &ManifestFile) -> Result<i64> {
    match seq {
        Some(s) if s >= 0 => Ok(s),
        _ => Err(validation("a carried-over manifest entry has no data sequence number")
            .with_context("manifest", m.manifest_path.clone())),
    }
}
