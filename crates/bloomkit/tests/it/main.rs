//! The integration tests of this crate, one module per area, built as one test binary
//! (one link instead of one per file: the first `cargo test` of a fresh clone is
//! dominated by linking test binaries).

#[cfg(all(feature = "classic", feature = "counting", feature = "scalable"))]
mod builder;
#[cfg(all(
    feature = "classic",
    feature = "counting",
    feature = "scalable",
    feature = "bitmap",
    feature = "multi",
    feature = "static",
    feature = "quotient",
    feature = "serde"
))]
mod conformance;
#[cfg(all(feature = "classic", feature = "serde"))]
mod cross_process;
mod fuzz_regressions;
mod golden;
#[cfg(all(
    feature = "classic",
    feature = "counting",
    feature = "scalable",
    feature = "static",
    feature = "quotient",
    feature = "serde"
))]
mod registry;
mod typed_keys;
