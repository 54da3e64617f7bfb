//! `cargo xtask fuzz`: runs every cargo-fuzz target of `fuzz/` (nightly, libFuzzer) for a
//! while, seeded with the golden files, in bounded memory and time per input; reports the
//! executions of each, and turns every failure into a regression input that bloomkit's
//! test suite replays (`fuzz/regressions/<target>/`).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// The targets: one file each in `fuzz/fuzz_targets/` (a test checks) and one entry each in
/// `fuzz/src/checks.rs`'s `TARGETS`.
pub const TARGETS: &[&str] = &[
    "decode_classic",
    "decode_blocked",
    "decode_simd_block",
    "decode_split_block",
    "decode_counting",
    "decode_scalable",
    "decode_bitmap",
    "decode_multi",
    "decode_binary_fuse",
    "decode_ribbon",
    "decode_quotient",
    "decode_expandable",
    "decode_window",
    "decode_jvm",
    "decode_redisbloom",
    "serde_bincode",
    "ops_classic",
    "ops_blocked",
    "ops_counting",
    "ops_scalable",
    "ops_bitmap",
];

/// `cargo xtask fuzz` flags.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Seconds per target.
    #[arg(long, default_value_t = 60)]
    pub seconds: u64,
    /// Stop each target after this many executions instead (or as well).
    #[arg(long)]
    pub runs: Option<u64>,
    /// Only these targets (default: all).
    #[arg(long = "target")]
    pub targets: Vec<String>,
    /// The longest input libFuzzer generates (the operation targets take 3 bytes an
    /// operation, so this bounds a sequence's length and each execution's cost).
    #[arg(long, default_value_t = 8192)]
    pub max_len: usize,
    /// Parallel fuzzing jobs per target (libFuzzer -fork).
    #[arg(long, default_value_t = 1)]
    pub jobs: u32,
    /// Targets fuzzed at once, each in its own process (one a core: CI's 2 cores fuzz two
    /// targets for the wall time of one, each getting the seconds it would alone).
    #[arg(long, default_value_t = 1)]
    pub parallel: usize,
    /// The sanitizer cargo-fuzz builds with (`address`, the default, or `none`: several
    /// times more executions a second for the safe-code operation targets, which check
    /// answers against a model rather than memory errors).
    #[arg(long, default_value = "address")]
    pub sanitizer: String,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// libFuzzer's own count: the number in its final "Done N runs in S second(s)" line, or the
/// last "#N" status line when it stopped otherwise.
fn executions(log: &str) -> Option<u64> {
    if let Some(line) = log.lines().rev().find(|l| l.starts_with("Done ")) {
        return line.split_whitespace().nth(1)?.parse().ok();
    }
    let line = log.lines().rev().find(|l| l.starts_with('#'))?;
    line[1..].split_whitespace().next()?.parse().ok()
}

/// Runs the targets; returns failure if any found a crash (then saved as a regression).
pub fn main(args: &Args) -> ExitCode {
    let root = root();
    let targets: Vec<&str> = if args.targets.is_empty() {
        TARGETS.to_vec()
    } else {
        args.targets.iter().map(String::as_str).collect()
    };
    // Every format version's golden files (`tests/data/v<N>`).
    let data = root.join("crates/bloomkit/tests/data");
    let mut seeds: Vec<_> = std::fs::read_dir(&data)
        .expect("the golden files' directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    seeds.sort();
    // And RedisBloom's dumps, from the module itself.
    seeds.push(root.join("crates/redis/tests/data"));
    seeds.push(root.join("crates/jvm/tests/data/spark"));
    let mut failed = Vec::new();
    let mut report = Vec::new();
    // Every target built in one cargo call first (its units side by side on every core);
    // each `cargo fuzz run` below then finds its binary built. A build error shows here.
    eprintln!("building the fuzz targets ...");
    let built = Command::new("cargo")
        .current_dir(root.join("fuzz"))
        .args(["+nightly", "fuzz", "build", "--release", "--sanitizer"])
        .arg(&args.sanitizer)
        .status()
        .expect("run cargo fuzz (cargo install cargo-fuzz)");
    if !built.success() {
        eprintln!("the fuzz targets do not build");
        return ExitCode::FAILURE;
    }
    // Each finished run is said as it ends, so an interrupted run still tells what it did.
    let mut finish = |target: &str, out: std::process::Output| {
        let log = String::from_utf8_lossy(&out.stderr);
        let runs = executions(&log);
        eprintln!(
            "{target}: {} executions, {}",
            runs.map_or("?".into(), |r| r.to_string()),
            if out.status.success() { "ok" } else { "FAILED" }
        );
        report.push((target.to_owned(), runs, out.status.success()));
        if !out.status.success() {
            eprintln!("{log}");
            failed.push(target.to_owned());
            save_regressions(&root, target);
        }
    };
    let mut running: std::collections::VecDeque<(&str, std::process::Child)> =
        std::collections::VecDeque::new();
    for target in targets {
        let corpus = root.join("fuzz/corpus").join(target);
        std::fs::create_dir_all(&corpus).expect("create the corpus directory");
        let mut cmd = Command::new("cargo");
        cmd.current_dir(root.join("fuzz"))
            .args(["+nightly", "fuzz", "run", "--release", "--sanitizer"])
            .arg(&args.sanitizer)
            .arg(target)
            .arg(&corpus)
            .args(&seeds)
            .arg("--")
            .arg(format!("-max_total_time={}", args.seconds))
            .arg(format!("-max_len={}", args.max_len))
            .args(["-rss_limit_mb=2048", "-timeout=10", "-print_final_stats=1"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        if let Some(runs) = args.runs {
            cmd.arg(format!("-runs={runs}"));
        }
        if args.jobs > 1 {
            cmd.arg(format!("-fork={}", args.jobs));
        }
        if running.len() >= args.parallel.max(1) {
            let (done, child) = running.pop_front().expect("a running target");
            finish(done, child.wait_with_output().expect("wait for cargo fuzz"));
        }
        eprintln!("fuzzing {target} ...");
        let child = cmd
            .spawn()
            .expect("run cargo fuzz (cargo install cargo-fuzz)");
        running.push_back((target, child));
    }
    while let Some((done, child)) = running.pop_front() {
        finish(done, child.wait_with_output().expect("wait for cargo fuzz"));
    }
    println!("{:<16} {:>14} result", "target", "executions");
    for (target, runs, ok) in &report {
        let runs = runs.map_or("?".into(), |r| r.to_string());
        println!(
            "{target:<16} {runs:>14} {}",
            if *ok { "ok" } else { "FAILED" }
        );
    }
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        eprintln!("failures in {failed:?}: inputs saved under fuzz/regressions/ (replayed by `cargo test -p bloomkit --test it -- fuzz_regressions::`)");
        ExitCode::FAILURE
    }
}

/// Copies the target's crash, timeout and out-of-memory inputs into its regressions.
fn save_regressions(root: &Path, target: &str) {
    let artifacts = root.join("fuzz/artifacts").join(target);
    let keep = root.join("fuzz/regressions").join(target);
    std::fs::create_dir_all(&keep).expect("create the regressions directory");
    for entry in std::fs::read_dir(&artifacts)
        .into_iter()
        .flatten()
        .flatten()
    {
        let name = entry.file_name();
        std::fs::copy(entry.path(), keep.join(&name)).expect("save the input");
        eprintln!("saved {}", keep.join(&name).display());
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn counts_executions_from_libfuzzer_output() {
        let log = "#1024\tpulse  cov: 10\nDone 12345678 runs in 61 second(s)\n";
        assert_eq!(super::executions(log), Some(12_345_678));
        assert_eq!(
            super::executions("#77\tNEW cov: 3\n#99\tREDUCE\n"),
            Some(99)
        );
    }

    #[test]
    fn every_target_has_a_file() {
        for t in super::TARGETS {
            let path = super::root()
                .join("fuzz/fuzz_targets")
                .join(format!("{t}.rs"));
            assert!(path.exists(), "{}", path.display());
        }
    }
}
