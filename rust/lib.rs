//! icefloe: Apache Iceberg for PySpark with a Rust core.
//!
//! The core (everything but `python`) has no Python dependency: it compiles,
//! tests and benches with plain cargo. `python` holds the pyo3 bindings and is
//! the only module that imports pyo3 (feature `python`, turned on by maturin).

pub mod arrow;
pub mod commit;
pub mod error;
pub mod expr;
#[cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing))]
pub mod fuzz;
#[cfg(test)]
#[path = "fuzz_corpus_tests.rs"]
mod fuzz_corpus_tests;
pub mod inspect;
pub mod io;
pub mod maintenance;
pub mod manifest;
pub mod puffin;
pub mod scan;
pub mod spec;
pub mod writer;

#[cfg(feature = "python")]
mod python;

/// The Python extension allocates with mimalloc (see Cargo.toml); the plain Rust library
/// (tests, benches, other Rust users) keeps the system allocator.
#[cfg(feature = "python")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

pub use error::{Error, ErrorKind, Result};
