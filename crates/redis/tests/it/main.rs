//! The integration tests of this crate, one module per area, built as one test binary
//! (one link instead of one per file: the first `cargo test` of a fresh clone is
//! dominated by linking test binaries). The cluster tests (`tests/cluster.rs`, six servers,
//! failovers and a killed primary under load) stay a binary of their own, so the timing
//! assertions here never share the machine with them.

mod chain;
mod conformance;
mod faults;
mod network;
mod processes;
mod redisbloom;
#[cfg(feature = "tokio")]
mod tokio_async;
