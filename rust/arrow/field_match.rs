//! How the columns of a source are matched to Iceberg fields: a data file's by Parquet field
//! id when reading it, a write's input by name when conforming it to the table. Shared by the
//! column adaptation (`reader.rs`), the variant columns (`variant.rs`) and a write's input
//! (`writer::input_schema`).

use crate::error::{invalid_data, Error, ErrorKind};

/// How file (or input) columns are matched to Iceberg fields, and who is to blame for a misfit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Match {
    /// Reading a data file: by Parquet field id; misfits are InvalidData.
    ById,
    /// Conforming a user's batch to a table: by name; misfits are Validation errors.
    ByName,
}

impl Match {
    pub(super) fn err(self, msg: String) -> Error {
        match self {
            Match::ById => invalid_data(msg),
            Match::ByName => Error::new(ErrorKind::Validation, msg),
        }
    }

    pub(super) fn source_name(self) -> &'static str {
        match self {
            Match::ById => "the data file",
            Match::ByName => "the input",
        }
    }
}
