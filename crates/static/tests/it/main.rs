//! bloomkit-static's integration tests: one binary, one module per concern.

mod conformance;
mod fpr;
