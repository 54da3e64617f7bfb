//! The integration tests of this crate, one module per area, built as one test binary
//! (one link instead of one per file: the first `cargo test` of a fresh clone is
//! dominated by linking test binaries).

mod atomic;
mod batch;
mod conformance;
mod errors;
mod fpr;
mod model;
mod overload;
#[cfg(feature = "rayon")]
mod parallel;
mod view;
