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
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    for (target, f) in crate::fuzz::TARGETS {
        let seeds = run_dir(target, *f, &root.join("corpus").join(target));
        run_dir(target, *f, &root.join("regressions").join(target));
        assert!(seeds > 0, "fuzz/corpus/{target} holds no seed input");
    }
}
