//! Table maintenance without a JVM: snapshot expiry, orphan-file removal, compaction planning.
//!
//! - `reachability`: the files a set of snapshots reaches (manifest lists, manifests, live
//!   data and delete files, statistics files), read concurrently through the FileIO.
//! - `expire_snapshots`: which snapshots and refs expire (Java's `RemoveSnapshots`) and
//!   which files that frees (reachable from an expired snapshot, from no retained one).
//! - `orphan_files`: files under a location the table does not reference (Java's
//!   `DeleteOrphanFilesSparkAction` rules: hidden paths, age, scheme/authority matching).
//! - `deletion`: deleting many files, each failure reported.
//! - `rewrite_manifests`: which manifests `rewrite_manifests` replaces and how their entries
//!   are clustered by partition (the commit is `commit::rewrite_manifests`).
//! - `rewrite_position_deletes`: which position delete files are rewritten together and
//!   the rewrite of one group, dangling positions dropped.
//! - `rewrite_plan`: which data files compaction rewrites together (Java's bin-pack rules).
//! - `rewrite_table_path`: a table's manifest lists, manifests and position delete files
//!   with their paths moved to a new prefix (Java's `RewriteTablePath`), and the copy plan.
//! - `convert_equality_deletes`: equality deletes turned into position deletes (plan, commit).
//!
//! The metadata change itself is `TableMetadata::remove_refs_and_snapshots`
//! (`spec/table_metadata_expire.rs`); committing it is the caller's (the Python commit
//! loop), and files are deleted only after the commit succeeded.

pub mod convert_equality_deletes;
mod deletion;
pub mod expire_snapshots;
pub mod orphan_files;
pub mod reachability;
pub mod rewrite_manifests;
pub mod rewrite_plan;
pub mod rewrite_position_deletes;
pub mod rewrite_table_path;

pub use deletion::{delete_all, delete_threads_for, DeleteFailure};
pub use expire_snapshots::{
    clean_expired_metadata, expire, expired_files, select_expired, ExpireOptions, ExpireSelection,
    ExpiredFile, ExpiredFileKind,
};
pub use orphan_files::{
    find_orphan_files, remove_orphan_files_overlapped, OrphanFile, OrphanOptions, OrphanRemoval,
    PrefixMismatchMode,
};
pub use reachability::threads_for;
