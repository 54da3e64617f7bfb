//! The integration tests of this crate, one module per area, built as one test binary
//! (one link instead of one per file: the first `cargo test` of a fresh clone is
//! dominated by linking test binaries).

mod atomic;
mod batch;
mod blocked;
mod conformance;
mod errors;
mod fpr;
mod golden;
#[cfg(feature = "rayon")]
mod parallel;
mod parquet;
mod probe_scheme;
mod simd_block;
mod split_block;
mod view;
