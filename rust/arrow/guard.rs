//! Calls into the Parquet decoder on bytes another program wrote. parquet-rs panics on some
//! malformed files instead of returning an error (`make fuzz` found parquet 60.1's
//! definition-level skip indexing past its buffer: `DefinitionLevelBufferDecoder::skip_def_levels`
//! on a page whose levels are shorter than its header says). A file must never panic into
//! Python or kill an executor's worker: each such call runs under `guarded`, and a panic
//! becomes an invalid-data error naming the file. The caller drops the decoder that
//! panicked and never calls it again.

use std::any::Any;
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe, PanicHookInfo};

use std::sync::Arc;

use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::file::metadata::ParquetMetaData;

use super::footer_schema::parquet_err;
use crate::error::{invalid_data, Result};
use crate::io::InputFile;

thread_local! {
    /// How many `guarded` calls this thread is inside.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// Whether this thread is inside a `guarded` call (a panic hook's question: a panic here
/// becomes an error).
pub fn guarding() -> bool {
    DEPTH.with(|d| d.get() > 0)
}

/// Wraps the process's panic hook so that a panic `guarded` turns into an error runs
/// `on_guarded` instead (nothing printed to a Spark worker's stderr for a file icefloe
/// reports as malformed anyway); every other panic goes to the previous hook.
pub fn install_panic_hook(on_guarded: fn(&PanicHookInfo<'_>)) {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if guarding() {
            on_guarded(info);
        } else {
            previous(info);
        }
    }));
}

/// `f()`, with a panic inside it turned into an error about `path` (`what` says what was
/// being done).
pub(crate) fn guarded<T>(path: &str, what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    DEPTH.with(|d| d.set(d.get().saturating_add(1)));
    let outcome = catch_unwind(AssertUnwindSafe(f));
    DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    match outcome {
        Ok(result) => result,
        Err(payload) => Err(invalid_data(format!(
            "{what}: the Parquet decoder failed on malformed data ({})",
            panic_message(payload.as_ref())
        ))
        .with_context("file", path)),
    }
}

/// A Parquet reader builder for `file`: its footer read once, its Thrift checked before
/// parquet-rs decodes it (`footer_schema`), decoded under `guarded`, and its counts
/// checked (`check_footer`) before any page is read. Every reader of outside Parquet files
/// opens them here.
pub(crate) fn open_parquet(
    file: InputFile,
    opts: ArrowReaderOptions,
    path: &str,
) -> Result<ParquetRecordBatchReaderBuilder<InputFile>> {
    const WHAT: &str = "cannot open Parquet file";
    let builder = guarded(path, WHAT, || {
        let metadata = super::footer_schema::read_metadata(&file, path, WHAT)?;
        let metadata =
            ArrowReaderMetadata::try_new(Arc::new(metadata), opts).map_err(|e| parquet_err(e, WHAT, path))?;
        Ok(ParquetRecordBatchReaderBuilder::new_with_metadata(file, metadata))
    })?;
    check_footer(builder.metadata(), path)?;
    Ok(builder)
}

/// Counts in a footer that parquet-rs takes as they are: a negative row count of a row
/// group or value count of a column chunk, or row counts whose sum overflows (cast to a huge unsigned count, the decoder then
/// loops for hours on a 1 KB file; found by `make fuzz`).
pub(crate) fn check_footer(md: &ParquetMetaData, path: &str) -> Result<()> {
    let bad = |what: String, found: i64| {
        Err(invalid_data(format!("Parquet footer: {what} expected >= 0, found {found}"))
            .with_context("file", path))
    };
    let rows = md.file_metadata().num_rows();
    if rows < 0 {
        return bad("the file's row count".into(), rows);
    }
    let mut total: i64 = 0;
    for (i, rg) in md.row_groups().iter().enumerate() {
        if rg.num_rows() < 0 {
            return bad(format!("the row count of row group {i}"), rg.num_rows());
        }
        // Row positions (position deletes, `_pos`) are counted in i64 across row groups.
        total = total.checked_add(rg.num_rows()).ok_or_else(|| {
            invalid_data("Parquet footer: the row groups hold more than 2^63 rows").with_context("file", path)
        })?;
        for c in rg.columns() {
            let column = c.column_path();
            if c.num_values() < 0 {
                return bad(format!("the value count of column '{column}' in row group {i}"), c.num_values());
            }
            // parquet-rs's `byte_range()` asserts these (a panic on a negative value).
            if c.data_page_offset() < 0 {
                return bad(
                    format!("the data page offset of column '{column}' in row group {i}"),
                    c.data_page_offset(),
                );
            }
            if let Some(offset) = c.dictionary_page_offset().filter(|o| *o < 0) {
                return bad(
                    format!("the dictionary page offset of column '{column}' in row group {i}"),
                    offset,
                );
            }
            if c.compressed_size() < 0 {
                return bad(
                    format!("the compressed size of column '{column}' in row group {i}"),
                    c.compressed_size(),
                );
            }
        }
    }
    Ok(())
}

fn panic_message(payload: &(dyn Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "a panic without a message"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_an_error_naming_the_file() {
        let r: Result<()> = guarded("s3://b/f.parquet", "cannot decode Parquet data", || {
            let v: Vec<u8> = vec![1, 2];
            let n = v.len() + 1;
            Ok(std::hint::black_box(&v)[..n].len()).map(|_| ())
        });
        let msg = r.unwrap_err().to_string();
        assert!(
            msg.contains("cannot decode Parquet data: the Parquet decoder failed on malformed data"),
            "{msg}"
        );
        assert!(msg.contains("range end index 3 out of range"), "{msg}");
        assert!(msg.contains("s3://b/f.parquet"), "{msg}");
        assert!(guarded("f", "x", || Ok(7)).is_ok_and(|v| v == 7));
        assert!(!guarding());
    }
}
