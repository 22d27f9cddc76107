//! The one parser of file locations: which storage a location names and the key inside it.
//!
//! Local locations are bare paths, `file:/abs` or `file:///abs`; their bytes are kept as
//! they are (no percent-decoding: Iceberg Java, through Hadoop, keeps `%XX` of partition
//! paths literally on disk). Object-store locations are `<scheme>://<authority>/<key>`; the
//! key is also kept literally, as Java's S3FileIO keeps it.

use std::path::PathBuf;

use crate::error::{validation, Result};

/// The kind of storage a location lives on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scheme {
    Local,
    S3,
    Gcs,
    Azure,
    Memory,
}

impl Scheme {
    pub fn is_local(self) -> bool {
        self == Scheme::Local
    }
}

/// A parsed location: the storage (scheme + authority: a bucket, a container) and the key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location<'a> {
    pub scheme: Scheme,
    /// The URL scheme as written (`s3a`, `abfss`, ...); empty for bare local paths.
    pub raw_scheme: &'a str,
    /// Bucket, container (`container@account.dfs.core.windows.net` for Azure), or memory name.
    pub authority: &'a str,
    /// The object key (no leading `/`) or, for local files, the absolute path.
    pub key: &'a str,
}

impl<'a> Location<'a> {
    pub fn parse(location: &'a str) -> Result<Self> {
        let Some((raw_scheme, rest)) = location.split_once("://").filter(|(s, _)| is_scheme(s)) else {
            let path = location.strip_prefix("file:").unwrap_or(location);
            if path.is_empty() {
                return Err(validation("a file location is empty"));
            }
            return Ok(Location { scheme: Scheme::Local, raw_scheme: "", authority: "", key: path });
        };
        let scheme = match raw_scheme.to_ascii_lowercase().as_str() {
            "file" => {
                return Ok(Location { scheme: Scheme::Local, raw_scheme, authority: "", key: rest });
            }
            "s3" | "s3a" | "s3n" => Scheme::S3,
            "gs" | "gcs" => Scheme::Gcs,
            "abfs" | "abfss" | "az" | "adl" | "wasb" | "wasbs" => Scheme::Azure,
            "memory" => Scheme::Memory,
            other => {
                return Err(validation(format!(
                    "unsupported location scheme '{other}' in '{location}' (expected a local path, \
                     file://, s3://, s3a://, gs://, abfss://, az:// or memory://)"
                )))
            }
        };
        let (authority, key) = rest.split_once('/').unwrap_or((rest, ""));
        if authority.is_empty() {
            return Err(validation(format!("location '{location}' names no bucket or container")));
        }
        Ok(Location { scheme, raw_scheme, authority, key: key.trim_start_matches('/') })
    }

    /// The local filesystem path of a local location.
    pub fn local_path(&self) -> PathBuf {
        PathBuf::from(self.key)
    }

    /// The storage root, `<scheme>://<authority>` (one object store per root).
    pub fn root(&self) -> String {
        match self.scheme {
            Scheme::Local => String::new(),
            _ => format!("{}://{}", self.raw_scheme.to_ascii_lowercase(), self.authority),
        }
    }
}

/// A URL scheme: a letter then letters, digits, `+`, `-`, `.` (RFC 3986). A Windows drive
/// letter (`C:`) never reaches here because of the `://` it lacks.
fn is_scheme(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_scheme() {
        let l = Location::parse("/a/b%20c/x.parquet").unwrap();
        assert_eq!((l.scheme, l.key), (Scheme::Local, "/a/b%20c/x.parquet"));
        assert_eq!(Location::parse("file:/a/b").unwrap().key, "/a/b");
        assert_eq!(Location::parse("file:///a/b").unwrap().key, "/a/b");
        let l = Location::parse("s3a://bkt/wh/t/data/x=%C3%B1/f.parquet").unwrap();
        assert_eq!((l.scheme, l.authority, l.key), (Scheme::S3, "bkt", "wh/t/data/x=%C3%B1/f.parquet"));
        assert_eq!(l.root(), "s3a://bkt");
        assert_eq!(Location::parse("gs://b/k").unwrap().scheme, Scheme::Gcs);
        let l = Location::parse("abfss://c@acct.dfs.core.windows.net/k/v").unwrap();
        assert_eq!((l.scheme, l.authority, l.key), (Scheme::Azure, "c@acct.dfs.core.windows.net", "k/v"));
        assert_eq!(Location::parse("memory://m/k").unwrap().scheme, Scheme::Memory);
        assert_eq!(Location::parse("s3://b").unwrap().key, "");
    }

    #[test]
    fn refuses_unknown_schemes_and_empty_buckets() {
        let e = Location::parse("hdfs://nn/x").unwrap_err().to_string();
        assert!(e.contains("'hdfs'") && e.contains("hdfs://nn/x"), "{e}");
        assert!(Location::parse("s3:///k").unwrap_err().to_string().contains("no bucket"));
        assert!(Location::parse("").is_err());
    }
}
