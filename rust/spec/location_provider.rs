//! Where a table's new files go, decided once for every writer and operation (Iceberg
//! Java's `LocationProviders` and `BaseMetastoreTableOperations.metadataFileLocation`):
//!
//! - data and delete files: `write.data.path`, else (object-storage layout only)
//!   `write.object-storage.path`, else the legacy `write.folder-storage.path`, else
//!   `<location>/data`; then the partition path and the file name;
//! - with `write.object-storage.enabled=true`, a 20-bit murmur3 hash of the (partition path
//!   and) file name goes first, as `xxxx/xxxx/xxxx/xxxxxxxx`, so writes spread over many
//!   key prefixes (S3 throttles per prefix); a data root outside the table's location gets
//!   the table's last two path segments after the hash; `write.object-storage.partitioned-
//!   paths=false` drops the partition path from the name;
//! - metadata files (manifests, manifest lists, `*.metadata.json` of SQL and REST catalogs):
//!   `write.metadata.path`, else `<location>/metadata`.
//!
//! The hash layout is Java's (1.7 and later), so Java and icefloe spread a table's files the
//! same way; readers never depend on it (every path in a manifest is absolute).

use std::collections::BTreeMap;

use super::transform_arrow::murmur3_32;

pub const WRITE_DATA_PATH: &str = "write.data.path";
/// The deprecated name of `write.data.path`, still honoured by Java.
pub const WRITE_FOLDER_STORAGE_PATH: &str = "write.folder-storage.path";
/// The deprecated data root of the object-storage layout.
pub const WRITE_OBJECT_STORAGE_PATH: &str = "write.object-storage.path";
pub const WRITE_OBJECT_STORAGE_ENABLED: &str = "write.object-storage.enabled";
pub const WRITE_OBJECT_STORAGE_PARTITIONED_PATHS: &str = "write.object-storage.partitioned-paths";
pub const WRITE_METADATA_PATH: &str = "write.metadata.path";

/// Bits of the file name's hash that become key prefixes: three folders of 4 bits, then 8.
const HASH_BITS: u32 = 20;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocationProvider {
    data_root: String,
    metadata_root: String,
    layout: Layout,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Layout {
    /// `<data root>/<partition path>/<file>`
    Folders,
    /// `<data root>/<hash>[/<context>]/<partition path>/<file>`
    ObjectStorage { context: Option<String>, partitioned_paths: bool },
}

fn flag(properties: &BTreeMap<String, String>, key: &str, default: bool) -> bool {
    properties.get(key).map_or(default, |v| v.trim().eq_ignore_ascii_case("true"))
}

fn strip(s: &str) -> String {
    s.trim_end_matches('/').to_string()
}

impl LocationProvider {
    /// The provider of a table at `location` with `properties`.
    pub fn new(location: &str, properties: &BTreeMap<String, String>) -> Self {
        let location = strip(location);
        let object_storage = flag(properties, WRITE_OBJECT_STORAGE_ENABLED, false);
        let mut roots = vec![WRITE_DATA_PATH];
        if object_storage {
            roots.push(WRITE_OBJECT_STORAGE_PATH);
        }
        roots.push(WRITE_FOLDER_STORAGE_PATH);
        let data_root = roots
            .iter()
            .find_map(|k| properties.get(*k).filter(|v| !v.trim().is_empty()))
            .map_or_else(|| format!("{location}/data"), |v| strip(v));
        let metadata_root = properties
            .get(WRITE_METADATA_PATH)
            .filter(|v| !v.trim().is_empty())
            .map_or_else(|| format!("{location}/metadata"), |v| strip(v));
        let layout = if object_storage {
            // Java: no context when the data root lies under the table's location.
            let context = (!data_root.starts_with(&location)).then(|| path_context(&location));
            Layout::ObjectStorage {
                context,
                partitioned_paths: flag(properties, WRITE_OBJECT_STORAGE_PARTITIONED_PATHS, true),
            }
        } else {
            Layout::Folders
        };
        LocationProvider { data_root, metadata_root, layout }
    }

    /// The folder under which every new data and delete file of the table goes (what an
    /// abort lists to find a failed write's files).
    pub fn data_root(&self) -> &str {
        &self.data_root
    }

    /// The folder of new manifests, manifest lists and (SQL/REST catalogs) metadata JSON.
    pub fn metadata_root(&self) -> &str {
        &self.metadata_root
    }

    /// Where a new data or delete file named `file_name` goes; `partition_path` is the spec's
    /// path of its partition (`None` or empty when unpartitioned).
    pub fn new_data_location(&self, partition_path: Option<&str>, file_name: &str) -> String {
        let partition_path = partition_path.filter(|p| !p.is_empty());
        match &self.layout {
            Layout::Folders => match partition_path {
                Some(p) => format!("{}/{p}/{file_name}", self.data_root),
                None => format!("{}/{file_name}", self.data_root),
            },
            Layout::ObjectStorage { context, partitioned_paths } => {
                let name = match partition_path {
                    Some(p) if *partitioned_paths => format!("{p}/{file_name}"),
                    _ => file_name.to_string(),
                };
                let hash = hash_dirs(&name);
                match context {
                    Some(c) => format!("{}/{hash}/{c}/{name}", self.data_root),
                    None if *partitioned_paths => format!("{}/{hash}/{name}", self.data_root),
                    None => format!("{}/{hash}-{name}", self.data_root),
                }
            }
        }
    }

    /// Where a new metadata file (manifest, manifest list, metadata JSON) named `file_name` goes.
    pub fn new_metadata_location(&self, file_name: &str) -> String {
        format!("{}/{file_name}", self.metadata_root)
    }
}

/// The last two segments of a location's path (Hadoop `Path`: parent name / name), or the
/// last one when there is no parent; scheme and authority are not segments.
fn path_context(location: &str) -> String {
    let path = match location.split_once("://") {
        Some((_, rest)) => rest.split_once('/').map_or("", |(_, p)| p),
        None => location.strip_prefix("file:").unwrap_or(location),
    };
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    match segments.as_slice() {
        [] => String::new(),
        [only] => (*only).to_string(),
        [.., parent, name] => format!("{parent}/{name}"),
    }
}

/// 20 bits of murmur3 (seed 0) of the name's UTF-8 bytes as `xxxx/xxxx/xxxx/xxxxxxxx`.
fn hash_dirs(name: &str) -> String {
    let hash = murmur3_32(name.as_bytes()) as u32 & ((1 << HASH_BITS) - 1);
    let bits = format!("{hash:020b}");
    format!("{}/{}/{}/{}", &bits[0..4], &bits[4..8], &bits[8..12], &bits[12..20])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(kv: &[(&str, &str)]) -> BTreeMap<String, String> {
        kv.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn default_layout_and_overrides() {
        let p = LocationProvider::new("s3://b/wh/db/t/", &BTreeMap::new());
        assert_eq!(p.data_root(), "s3://b/wh/db/t/data");
        assert_eq!(p.new_data_location(Some("a=1"), "f.parquet"), "s3://b/wh/db/t/data/a=1/f.parquet");
        assert_eq!(p.new_data_location(None, "f.parquet"), "s3://b/wh/db/t/data/f.parquet");
        assert_eq!(p.new_metadata_location("m.avro"), "s3://b/wh/db/t/metadata/m.avro");
        let p = LocationProvider::new(
            "/wh/t",
            &props(&[
                (WRITE_FOLDER_STORAGE_PATH, "/old/"),
                (WRITE_DATA_PATH, "/new/"),
                (WRITE_METADATA_PATH, "/meta/"),
            ]),
        );
        assert_eq!(p.new_data_location(Some(""), "f.parquet"), "/new/f.parquet");
        assert_eq!(p.new_metadata_location("m.avro"), "/meta/m.avro");
        let p = LocationProvider::new(
            "/wh/t",
            &props(&[(WRITE_FOLDER_STORAGE_PATH, "/old"), (WRITE_OBJECT_STORAGE_PATH, "/os")]),
        );
        // write.object-storage.path counts only in the object-storage layout.
        assert_eq!(p.data_root(), "/old");
    }

    #[test]
    fn object_storage_layout_as_java() {
        let base = props(&[(WRITE_OBJECT_STORAGE_ENABLED, "true")]);
        let p = LocationProvider::new("s3://b/wh/db/t", &base);
        let got = p.new_data_location(Some("a=1"), "f.parquet");
        let hash = hash_dirs("a=1/f.parquet");
        assert_eq!(got, format!("s3://b/wh/db/t/data/{hash}/a=1/f.parquet"));
        let parts: Vec<&str> = hash.split('/').collect();
        assert_eq!(parts.iter().map(|p| p.len()).collect::<Vec<_>>(), vec![4, 4, 4, 8]);
        assert!(hash.chars().all(|c| c == '0' || c == '1' || c == '/'));

        let mut outside = base.clone();
        outside.insert(WRITE_OBJECT_STORAGE_PATH.into(), "s3://other/root".into());
        let p = LocationProvider::new("s3://b/wh/db/t", &outside);
        assert_eq!(
            p.new_data_location(None, "f.parquet"),
            format!("s3://other/root/{}/db/t/f.parquet", hash_dirs("f.parquet"))
        );

        let mut flat = base;
        flat.insert(WRITE_OBJECT_STORAGE_PARTITIONED_PATHS.into(), "false".into());
        let p = LocationProvider::new("s3://b/wh/db/t", &flat);
        assert_eq!(
            p.new_data_location(Some("a=1"), "f.parquet"),
            format!("s3://b/wh/db/t/data/{}-f.parquet", hash_dirs("f.parquet"))
        );
    }

    #[test]
    fn hash_is_java_murmur3_low_20_bits() {
        // Guava murmur3_32_fixed("iceberg") = 1210000089 (the spec's bucket test value).
        let expected = 1_210_000_089u32 & 0xFFFFF;
        let bits = hash_dirs("iceberg").replace('/', "");
        assert_eq!(u32::from_str_radix(&bits, 2).unwrap(), expected);
    }

    #[test]
    fn path_context_takes_the_last_two_segments() {
        assert_eq!(path_context("s3://bucket/wh/db/t"), "db/t");
        assert_eq!(path_context("s3://bucket/t"), "t");
        assert_eq!(path_context("/wh/db/t"), "db/t");
        assert_eq!(path_context("file:///wh/db/t"), "db/t");
    }
}
