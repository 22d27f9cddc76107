//! Tests of the orphan search on a real table written by the commit producers in a
//! temporary folder, and of the location comparison rules.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, SystemTime};

use super::*;
use crate::commit::{fast_append, overwrite_files};
use crate::manifest::DataFile;
use crate::spec::{NestedField, PartitionField, PartitionSpec, PrimitiveType, Schema, Transform};

const HOUR: i64 = 60 * 60 * 1000;

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

fn touch(path: &str, age_ms: i64) {
    let p = std::path::Path::new(path);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, b"bytes").unwrap();
    let when = SystemTime::now() - Duration::from_millis(age_ms as u64);
    std::fs::File::options().write(true).open(p).unwrap().set_modified(when).unwrap();
}

/// A table at `d` with data files f1 (replaced), f2, f3 and `extra` paths appended too;
/// metadata files v1 (logged) and v2 (current); everything three hours old.
fn table(d: &str, extra: &[&str]) -> TableMetadata {
    let schema =
        Schema::new(0, vec![NestedField::required(1, "id", PrimitiveType::Long.into())], vec![]).unwrap();
    let md = TableMetadata::new_table(schema, None, None, d, BTreeMap::new(), 2).unwrap();
    let file = |name: &str| {
        let path = if name.contains(':') { name.to_string() } else { format!("{d}/data/{name}") };
        if !name.contains(':') {
            touch(&path, 3 * HOUR);
        }
        DataFile::new_data(path, 1, 5)
    };
    let props = BTreeMap::new();
    let mut added = vec![file("f1"), file("f2")];
    added.extend(extra.iter().map(|e| file(e)));
    let (md, _) = fast_append(&md, added, &props, 1).unwrap();
    let md = md.with_metadata_location(format!("{d}/metadata/v1.metadata.json"));
    let removed = BTreeSet::from([format!("{d}/data/f1")]);
    let (md, _) = overwrite_files(&md, vec![file("f3")], removed, &props, 2).unwrap();
    let md = md.with_metadata_location(format!("{d}/metadata/v2.metadata.json"));
    for name in ["v0.metadata.json", "v1.metadata.json", "v2.metadata.json", "version-hint.text"] {
        touch(&format!("{d}/metadata/{name}"), 3 * HOUR);
    }
    // The producers' manifests and lists are new: age them too.
    for f in io::walk(d, &|_: &str| true, 1).unwrap() {
        if f.last_modified_ms > now_ms() - HOUR {
            let p = f.location.clone();
            std::fs::File::options()
                .write(true)
                .open(&p)
                .unwrap()
                .set_modified(SystemTime::now() - Duration::from_millis(3 * HOUR as u64))
                .unwrap();
        }
    }
    md
}

fn names(files: &[OrphanFile], d: &str) -> Vec<String> {
    files
        .iter()
        .map(|f| f.location.strip_prefix(&format!("file:{d}/")).unwrap_or(&f.location).to_string())
        .collect()
}

fn opts(older_than_ms: i64) -> OrphanOptions {
    OrphanOptions { older_than_ms, ..Default::default() }
}

#[test]
fn finds_unreferenced_old_visible_files() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    let md = table(&d, &[]);
    touch(&format!("{d}/data/orphan.parquet"), 3 * HOUR);
    touch(&format!("{d}/data/.orphan.parquet.crc"), 3 * HOUR);
    touch(&format!("{d}/_tmp/x.parquet"), 3 * HOUR);
    touch(&format!("{d}/data/_p=1/y.parquet"), 3 * HOUR);
    touch(&format!("{d}/data/new.parquet"), 0);
    let got = find_orphan_files(&md, &opts(now_ms() - HOUR)).unwrap();
    // f1 is still referenced by the first snapshot; v0 fell out of the metadata log.
    assert_eq!(names(&got, &d), vec!["data/orphan.parquet", "metadata/v0.metadata.json"]);
    assert_eq!(got[0].size, 5);
    // orphan.parquet's hidden checksum was seen (it goes with the file); v0's has none.
    assert_eq!(got.iter().map(|f| f.checksum).collect::<Vec<_>>(), vec![true, false]);
    // Without the age limit the new file is one too.
    let got = find_orphan_files(&md, &opts(now_ms() + HOUR)).unwrap();
    assert_eq!(names(&got, &d), vec!["data/new.parquet", "data/orphan.parquet", "metadata/v0.metadata.json"]);
    // A partition field named `_p` makes `_p=` folders visible.
    let mut md2 = md.clone();
    md2.partition_specs
        .push(PartitionSpec::new(1, vec![PartitionField::new(1, 1000, "_p", Transform::Identity)]));
    let got = find_orphan_files(&md2, &opts(now_ms() - HOUR)).unwrap();
    assert!(names(&got, &d).contains(&"data/_p=1/y.parquet".to_string()));
    // Another location: only what is under it.
    let o = OrphanOptions { location: Some(format!("{d}/metadata/")), ..opts(now_ms() - HOUR) };
    assert_eq!(names(&find_orphan_files(&md, &o).unwrap(), &d), vec!["metadata/v0.metadata.json"]);
    // gc.enabled=false refuses.
    let off = md.with_properties([("gc.enabled".to_string(), "false".to_string())], []).unwrap();
    assert!(find_orphan_files(&off, &opts(now_ms())).unwrap_err().to_string().contains("GC is disabled"));
}

#[test]
fn a_file_referenced_through_dot_segments_is_no_orphan() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    touch(&format!("{d}/data/imported/f.parquet"), 3 * HOUR);
    let md = table(&d, &[&format!("file:{d}/data/imported/../imported/./f.parquet")]);
    let got = find_orphan_files(&md, &opts(now_ms() - HOUR)).unwrap();
    assert!(!names(&got, &d).contains(&"data/imported/f.parquet".to_string()), "{:?}", names(&got, &d));
    // The table location itself spelled with `..`: the listed files are still its own.
    let spelled = format!("{d}/data/../data/..");
    let o = OrphanOptions { location: Some(spelled), ..opts(now_ms() - HOUR) };
    let canonical = |files: &[OrphanFile]| -> Vec<std::path::PathBuf> {
        let local = |f: &OrphanFile| f.location.trim_start_matches("file:").to_string();
        files.iter().map(|f| std::fs::canonicalize(local(f)).unwrap()).collect()
    };
    assert_eq!(canonical(&find_orphan_files(&md, &o).unwrap()), canonical(&got));
}

#[test]
fn prefix_mismatches_follow_the_mode() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    let md = table(&d, &[&format!("hdfs://nn{d}/data/f9")]);
    touch(&format!("{d}/data/f9"), 3 * HOUR);
    let e = find_orphan_files(&md, &opts(now_ms())).unwrap_err();
    assert_eq!(e.kind(), crate::ErrorKind::Validation);
    assert!(e.to_string().contains("(hdfs, file)") && e.to_string().contains("(nn, null)"), "{e}");
    let o = OrphanOptions { prefix_mismatch_mode: PrefixMismatchMode::Ignore, ..opts(now_ms()) };
    assert!(!names(&find_orphan_files(&md, &o).unwrap(), &d).contains(&"data/f9".to_string()));
    let o = OrphanOptions { prefix_mismatch_mode: PrefixMismatchMode::Delete, ..opts(now_ms()) };
    assert!(names(&find_orphan_files(&md, &o).unwrap(), &d).contains(&"data/f9".to_string()));
    // Equal schemes alone leave the authority conflict.
    let o = OrphanOptions {
        equal_schemes: HashMap::from([("hdfs, other".to_string(), "file".to_string())]),
        ..opts(now_ms())
    };
    let e = find_orphan_files(&md, &o).unwrap_err().to_string();
    assert!(!e.contains("hdfs") && e.contains("(nn, null)"), "{e}");
    assert!(PrefixMismatchMode::parse("nope").is_err());
    assert_eq!(PrefixMismatchMode::parse(" DELETE ").unwrap(), PrefixMismatchMode::Delete);
}

#[test]
fn locations_split_as_hadoop_paths() {
    let none = HashMap::new();
    let schemes = HashMap::from([("s3a".to_string(), "s3".to_string())]);
    let u = FileUri::parse("s3a://bucket//a/b/", &schemes, &none);
    assert_eq!(
        (u.scheme.as_deref(), u.authority.as_deref(), u.path.as_str()),
        (Some("s3"), Some("bucket"), "/a/b")
    );
    let u = FileUri::parse("file:/tmp/x", &none, &none);
    assert_eq!((u.scheme.as_deref(), u.authority, u.path.as_str()), (Some("file"), None, "/tmp/x"));
    let u = FileUri::parse("file:///tmp/x", &none, &none);
    assert_eq!((u.scheme.as_deref(), u.authority, u.path.as_str()), (Some("file"), None, "/tmp/x"));
    let u = FileUri::parse("/tmp/a:b/x", &none, &none);
    assert_eq!((u.scheme, u.path.as_str()), (None, "/tmp/a:b/x"));
    // Dot segments resolve as java.net.URI.normalize (Hadoop's Path) resolves them.
    for (given, want) in [
        ("s3://b/t/data/x/../f.parquet", "/t/data/f.parquet"),
        ("s3://b/t/./data//./f.parquet", "/t/data/f.parquet"),
        ("/tmp/a/b/../../c", "/tmp/c"),
        ("/../a/./b/..", "/../a"),
        ("file:/tmp/x/..", "/tmp"),
        ("/tmp/..x/.y", "/tmp/..x/.y"),
    ] {
        assert_eq!(FileUri::parse(given, &none, &none).path, want, "{given}");
    }
    assert!(component_matches(&None, &Some("x".into())));
    assert!(component_matches(&Some("S3".into()), &Some("s3".into())));
    assert!(!component_matches(&Some("s3".into()), &None));
}

#[test]
fn overlapped_removal_deletes_what_the_search_finds() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    let md = table(&d, &[]);
    for k in 0..40 {
        touch(&format!("{d}/data/p{}/orphan-{k}.parquet", k % 4), 3 * HOUR);
    }
    touch(&format!("{d}/data/p1/.orphan-1.parquet.crc"), 3 * HOUR);
    touch(&format!("{d}/data/p2/new.parquet"), 0);
    let expected = find_orphan_files(&md, &opts(now_ms() - HOUR)).unwrap();
    assert_eq!(expected.len(), 41, "40 orphans and v0.metadata.json");
    let done =
        remove_orphan_files_overlapped(&md, &opts(now_ms() - HOUR), 3).unwrap().expect("local, no conflict");
    assert_eq!(done.orphans, expected);
    assert!(done.failures.is_empty());
    let left: Vec<String> =
        io::walk(&d, &|_: &str| true, 1).unwrap().into_iter().map(|f| f.location).collect();
    assert!(!left.iter().any(|l| l.contains("orphan-") || l.ends_with("v0.metadata.json")), "{left:?}");
    assert!(left.iter().any(|l| l.ends_with("data/p2/new.parquet")), "young files stay");
    assert!(left.iter().any(|l| l.ends_with("data/f2")) && left.iter().any(|l| l.ends_with("data/f1")));
    // Nothing left to find.
    assert!(find_orphan_files(&md, &opts(now_ms() - HOUR)).unwrap().is_empty());

    // A reference under another scheme or authority could make a listed file a conflict:
    // not overlapped (the caller finds first), and nothing deleted.
    let other = tempfile::tempdir().unwrap();
    let o = other.path().display().to_string();
    let md = table(&o, &[&format!("hdfs://nn{o}/data/f9")]);
    touch(&format!("{o}/data/f9"), 3 * HOUR);
    touch(&format!("{o}/data/orphan.parquet"), 3 * HOUR);
    assert!(remove_orphan_files_overlapped(&md, &opts(now_ms()), 2).unwrap().is_none());
    assert!(std::path::Path::new(&format!("{o}/data/orphan.parquet")).exists());
}

#[test]
fn a_given_file_list_replaces_the_listing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    let md = table(&d, &[]);
    let old = now_ms() - 3 * HOUR;
    let list = vec![
        (format!("{d}/data/f2"), old),                 // referenced: kept
        (format!("{d}/data/gone.parquet"), old),       // not referenced: an orphan, even if absent
        (format!("{d}/data/_hidden.parquet"), old),    // hidden names are not left out of a list
        (format!("{d}/data/young.parquet"), now_ms()), // too young
        ("/elsewhere/x.parquet".to_string(), old),     // not under the table's location
    ];
    let o = OrphanOptions { file_list: Some(list.clone()), ..opts(now_ms() - HOUR) };
    let got = find_orphan_files(&md, &o).unwrap();
    let want = vec![format!("{d}/data/_hidden.parquet"), format!("{d}/data/gone.parquet")];
    assert_eq!(got.iter().map(|f| f.location.clone()).collect::<Vec<_>>(), want);
    assert!(got.iter().all(|f| f.size == 0 && !f.checksum));
    // A location narrows the list by string prefix; the overlapped removal declines a list.
    let o = OrphanOptions {
        location: Some(format!("{d}/data/g")),
        file_list: Some(list),
        ..opts(now_ms() - HOUR)
    };
    let got = find_orphan_files(&md, &o).unwrap();
    assert_eq!(
        got.iter().map(|f| f.location.clone()).collect::<Vec<_>>(),
        vec![format!("{d}/data/gone.parquet")]
    );
    assert!(remove_orphan_files_overlapped(&md, &o, 1).unwrap().is_none());
}
