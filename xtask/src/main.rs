//! `cargo xtask <task>`: bloomkit's project tasks. This file only dispatches; each task is a
//! module of the `xtask` library.

#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "cargo xtask",
    about = "bloomkit's project tasks",
    bin_name = "cargo xtask"
)]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Subcommand)]
enum Task {
    /// Measure every bloomkit structure (and a HashSet) on a workload, and recommend one.
    Compare(xtask::compare::Args),
    /// Fuzz every decoder and operation sequence (nightly + cargo-fuzz), seeded with the golden files.
    Fuzz(xtask::fuzz::Args),
    /// Run a local Redis Cluster (primaries and replicas) for the cluster tests and examples, until Ctrl-C.
    RedisCluster(xtask::redis_cluster::Args),
}

fn main() -> ExitCode {
    match Cli::parse().task {
        Task::Compare(args) => xtask::compare::main(&args),
        Task::Fuzz(args) => xtask::fuzz::main(&args),
        Task::RedisCluster(args) => xtask::redis_cluster::main(&args),
    }
}
