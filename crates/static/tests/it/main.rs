//! bloomkit-static's integration tests: one binary, one module per concern.

#[cfg(feature = "serde")]
mod conformance;
mod fpr;
