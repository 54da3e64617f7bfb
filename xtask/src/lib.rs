//! bloomkit's project tasks, run as `cargo xtask <task>` (the alias in `.cargo/config.toml`
//! builds this crate in release mode, since `compare` measures speed).
//!
//! - [`compare`]: measure every structure on a workload (synthetic or your own keys) and
//!   recommend one: the `bloomkit compare` command's code (`bloomkit-cli`), re-exported.
//! - [`fuzz`]: run every cargo-fuzz target for a while and keep what they find.
//! - [`redis_cluster`]: run a local Redis Cluster (primaries and replicas) until Ctrl-C, for
//!   the cluster tests and examples.

pub use bloomkit_cli::compare;
pub mod fuzz;
pub mod redis_cluster;
