//! The integration tests of this crate, one module per area, built as one test binary
//! (one link instead of one per file: the first `cargo test` of a fresh clone is
//! dominated by linking test binaries).

#[cfg(all(feature = "classic", feature = "counting", feature = "scalable"))]
mod builder;
#[cfg(all(feature = "classic", feature = "serde"))]
mod cross_process;
mod typed_keys;

/// The modules that bind every variant at once, built with every variant's feature and
/// `serde` (the default features).
macro_rules! with_every_variant {
    ($($module:item)*) => {
        $(
            #[cfg(all(
                feature = "classic",
                feature = "counting",
                feature = "scalable",
                feature = "bitmap",
                feature = "multi",
                feature = "static",
                feature = "quotient",
                feature = "window",
                feature = "serde"
            ))]
            $module
        )*
    };
}

with_every_variant! {
    mod conformance;
    mod fuzz_regressions;
    mod golden;
    mod registry;
}
