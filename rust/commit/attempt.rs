//! One attempt at a commit: the new snapshot's id, the commit's UUID and the files the attempt
//! writes, so that a failed attempt deletes exactly what it wrote. The snapshot producer
//! (`producer.rs`) and the manifest merge step (`manifest_merge.rs`) write through it.

use crate::error::{validation, Result};
use crate::io;
use crate::manifest::{ManifestContent, ManifestWriter};
use crate::spec::TableMetadata;

/// Shared state of one attempt: ids and the paths of the files it writes.
pub(crate) struct Attempt<'a> {
    pub base: &'a TableMetadata,
    pub snapshot_id: i64,
    pub commit_uuid: uuid::Uuid,
    pub next_manifest: usize,
    pub written: &'a mut Vec<String>,
}

impl Attempt<'_> {
    pub fn new_manifest_path(&mut self) -> String {
        let path = self
            .base
            .location_provider()
            .new_metadata_location(&format!("{}-m{}.avro", self.commit_uuid, self.next_manifest));
        self.next_manifest += 1;
        // Recorded before the writer opens it, so a failure after a partial write cleans up.
        self.written.push(path.clone());
        path
    }

    pub fn writer(&mut self, spec_id: i32, content: ManifestContent) -> Result<ManifestWriter> {
        let spec = self
            .base
            .spec_by_id(spec_id)
            .ok_or_else(|| validation(format!("unknown partition spec id {spec_id}")))?;
        let path = self.new_manifest_path();
        ManifestWriter::for_table(&path, self.snapshot_id, content, self.base, spec)
    }

    /// Forgets and deletes a manifest this attempt wrote but does not commit.
    pub fn discard(&mut self, path: &str) {
        self.written.retain(|p| p != path);
        let _ = io::delete_file(path);
    }
}
