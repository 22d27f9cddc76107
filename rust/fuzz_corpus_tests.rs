//! The fuzz corpora as a regression test on stable: every input under `fuzz/corpus/<target>`
//! (seeds from the golden files and Java-written tables, plus what fuzzing kept) and
//! `fuzz/regressions/<target>` (each crash fuzzing ever found) goes through its target
//! (`crate::fuzz`) and must come back without a panic.

use std::path::Path;

fn run_dir(target: &str, f: fn(&[u8]), dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    let mut n = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        if !path.is_file() {
            continue;
        }
        let data = std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let outcome = std::panic::catch_unwind(|| f(&data));
        assert!(outcome.is_ok(), "fuzz target {target} panicked on {}", path.display());
        n += 1;
    }
    n
}

#[test]
fn every_corpus_and_regression_input_decodes_without_a_panic() {
    // On a thread with the 8 MB stack of a process's main thread (and Linux's default for
    // new threads), not the test harness's 2 MB: in a debug build sqlparser's frames are
    // large enough that its own recursion limit (50 levels) on a filter of nested
    // parentheses from the corpus needs more than 2 MB, where a release build needs little.
    let run = || {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
        for (target, f) in crate::fuzz::TARGETS {
            let seeds = run_dir(target, *f, &root.join("corpus").join(target));
            run_dir(target, *f, &root.join("regressions").join(target));
            assert!(seeds > 0, "fuzz/corpus/{target} holds no seed input");
        }
    };
    let worker = std::thread::Builder::new().stack_size(8 << 20).spawn(run).expect("spawn the corpus thread");
    if let Err(panic) = worker.join() {
        std::panic::resume_unwind(panic);
    }
}

/// The Parquet seeds reach the end of a read (an error would leave the fuzzer to find its
/// way past it), with the rows Iceberg's delete rules leave of Java's all-types file: ids
/// by row, l = [1, min, max, null, 0], s = ["héllo..", "", "😀..", null, "a"].
#[test]
fn parquet_seeds_read_the_rows_their_deletes_leave() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/parquet_read");
    let rows = |name: &str| {
        let data = std::fs::read(dir.join(name)).unwrap_or_else(|e| panic!("seed {name}: {e}"));
        crate::fuzz::parquet_read_rows(&data).unwrap_or_else(|e| panic!("seed {name}: {e}"))
    };
    assert_eq!(rows("plain"), 5);
    // Positions 0, 2, 4 deleted; then keys: l in {1, null, max} -> row 3 (l null) goes.
    assert_eq!(rows("pos_eq_l"), 1);
    // s in {"a", "", null}: rows 1 and 3 go.
    assert_eq!(rows("pos_eq_s"), 0);
    // (i, s) in {(1, "a"), (0, ""), (null, null)}: row 3 goes.
    assert_eq!(rows("pos_eq_i_s"), 1);
    // dec9 in {14.20, null}: row 3 goes.
    assert_eq!(rows("pos_eq_dec9"), 1);
    // Only the rows the equality deletes remove.
    assert_eq!(rows("eq_only_deleted_l"), 3);
    assert_eq!(rows("eq_only_deleted_s"), 3);
    assert_eq!(rows("eq_only_deleted_i_s"), 1);
    assert_eq!(rows("eq_only_deleted_dec9"), 2);
    // Java's position deletes name another data file; the residual keeps row 2 (l = max).
    assert_eq!(rows("java_pos_residual"), 1);
    // `_file`, `_pos` and three columns of rows 1 and 3.
    assert_eq!(rows("pos_projected"), 2);
    // The file's one row group starts in the first half of its bytes.
    assert_eq!(rows("split_projected"), 0);
    // The residual keeps row 2, whose l the equality deletes remove.
    assert_eq!(rows("residual_projected"), 0);
}

/// The error `parquet_read` gives on `fuzz/regressions/parquet_read/<name>` (which must not read).
fn parquet_read_error(name: &str) -> crate::Error {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions/parquet_read").join(name);
    let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    crate::fuzz::parquet_read_rows(&data).expect_err("the malformed file must not read")
}

/// parquet-rs 60.1 panics on this file (a definition-level skip past its buffer, found by
/// `make fuzz`): icefloe answers with an invalid-data error naming the file.
#[test]
fn a_parquet_decoder_panic_is_an_error_naming_the_file() {
    let err = parquet_read_error("parquet_def_level_skip_panic");
    let msg = err.to_string();
    assert_eq!(err.kind(), crate::ErrorKind::InvalidData, "{msg}");
    assert!(msg.contains("the Parquet decoder failed on malformed data"), "{msg}");
    assert!(msg.contains("memory://fuzz/data/data.parquet"), "{msg}");
}

/// An equality-delete file whose footer gives a row group -55 rows (found by `make fuzz`:
/// parquet-rs decoded it for hours): refused at the footer.
#[test]
fn a_negative_row_count_in_a_footer_is_refused() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions/delete_file/negative_row_group_rows");
    let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let loc = "memory://fuzz-tests/negative_row_group_rows.parquet";
    crate::io::write_file(loc, &data).expect("memory store");
    let ids = &[2, 11];
    let err = crate::arrow::equality_deletes::EqualityDeleteSet::load(ids, &[loc], &|_| None)
        .expect_err("the file must be refused");
    let msg = err.to_string();
    assert!(msg.contains("the row count of row group 0 expected >= 0, found -55"), "{msg}");
    assert!(msg.contains(loc), "{msg}");
    let _ = crate::io::delete_file(loc);
}

/// A position-delete file whose page header declares a huge list after a few bytes (found
/// by `make fuzz`): parquet-rs 60.1's Thrift skip ignored the end of its input and looped
/// once per element, for minutes. The reader icefloe hands it fails at the end instead
/// (`io::input::EndIsError`), so the read is an error at once.
#[test]
fn a_page_header_past_its_chunk_end_is_an_error() {
    let err = parquet_read_error("page_header_thrift_skip_loop");
    let msg = err.to_string();
    assert!(msg.contains("a Parquet page header runs past the end of its column chunk"), "{msg}");
    assert!(msg.contains("(position delete file: memory://fuzz/data/pos-deletes.parquet)"), "{msg}");
    assert_eq!(msg.matches("pos-deletes.parquet").count(), 1, "the file is named once: {msg}");
}

/// A plain string page whose skip runs past the page's end (found by `make fuzz`):
/// parquet-rs 60.1 then computes `buf.len() - offset` unchecked, and in a build without
/// overflow checks asks for ~2^62 bytes and aborts the process. Cargo.toml builds parquet
/// with overflow checks in release too (as every test build has them), so the subtraction
/// panics and the reader's guard turns it into this error.
#[test]
fn a_string_skip_past_its_page_is_an_error() {
    let err = parquet_read_error("byte_array_plain_skip_past_page_end");
    let msg = err.to_string();
    assert_eq!(err.kind(), crate::ErrorKind::InvalidData, "{msg}");
    assert!(msg.contains("the Parquet decoder failed on malformed data"), "{msg}");
    assert!(msg.contains("memory://fuzz/data/data.parquet"), "{msg}");
}

/// A footer giving a schema group 2^31 children (found by `make fuzz`): parquet-rs 60.1
/// reserves a slot per declared child before reading any (16 GB for this 9 KB file), which
/// aborts the process where the allocation fails. The footer's counts are checked first
/// (`arrow::footer_schema`).
#[test]
fn a_schema_group_with_more_children_than_elements_is_refused() {
    let err = parquet_read_error("schema_group_children_capacity");
    let msg = err.to_string();
    assert_eq!(err.kind(), crate::ErrorKind::InvalidData, "{msg}");
    assert!(msg.contains("expected at most 0 children (the elements after it), found 2147483545"), "{msg}");
    assert!(msg.contains("(position delete file: memory://fuzz/data/pos-deletes.parquet)"), "{msg}");
}

/// A page header declaring a list of 2^31 booleans (found by `make fuzz`): parquet-rs 60.1
/// skips it one element per iteration without reading a byte (35 s under AddressSanitizer;
/// a header of many such lists would take hours). Each element takes a byte in the
/// encoding, so the list is longer than the bytes left: refused before parquet-rs decodes
/// the header (`io::input::page_header`).
#[test]
fn a_page_header_list_longer_than_its_bytes_is_an_error() {
    let err = parquet_read_error("page_header_bool_list_skip_loop");
    let msg = err.to_string();
    assert!(
        msg.contains("a Parquet page header runs past the end of its column chunk (the page header at byte"),
        "{msg}"
    );
    assert!(msg.contains("(position delete file: memory://fuzz/data/pos-deletes.parquet)"), "{msg}");
}

/// A footer whose unknown column-chunk field is a list of 2^31 booleans (found by `make
/// fuzz`): parquet-rs 60.1 skips it one element per iteration without reading a byte.
/// Refused before parquet-rs decodes the footer (`arrow::footer_schema`).
#[test]
fn a_footer_list_longer_than_its_bytes_is_an_error() {
    let err = parquet_read_error("footer_bool_list_skip_loop");
    let msg = err.to_string();
    assert!(msg.contains("Parquet footer: expected Thrift within its 800 bytes, found a field or list running past its end"), "{msg}");
    assert!(msg.contains("(position delete file: memory://fuzz/data/pos-deletes.parquet)"), "{msg}");
}
