//! The integration tests of this crate, one module per area, built as one test binary
//! (one link instead of one per file: the first `cargo test` of a fresh clone is
//! dominated by linking test binaries).

mod behaviour;
mod conformance;
mod fpr;
mod model;
mod view;
