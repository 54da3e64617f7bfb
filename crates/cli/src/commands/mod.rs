//! The subcommands: each an `Args` (its flags and `--help`) and a `run` that returns the exit
//! status or a [`CliError`].

pub mod build;
pub mod convert;
pub mod info;
pub mod merge;
pub mod query;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::{compare, CliError};

/// `bloomkit`: build, query, inspect, merge and convert set-membership filter files, and
/// find which structure suits your keys.
#[derive(Debug, Parser)]
#[command(
    name = "bloomkit",
    version,
    about = "Build, query, inspect, merge and convert set-membership filter files, and find \
             which filter suits your keys.",
    after_help = "Keys are lines of text (a trailing \\r is dropped, empty lines are skipped). \
                  Exit status: 0 success (query: every key present), 1 query: some key absent \
                  (compare: a structure had false negatives), 2 bad input (one line on stderr)."
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build a filter file from keys, one per line, read from files or stdin.
    Build(build::Args),
    /// Ask a filter file whether keys (arguments, or lines on stdin) may be in its set.
    Query(query::Args),
    /// Describe a filter file: variant, size, hashes, fill, estimated items and rate; checks
    /// its checksums.
    Info(info::Args),
    /// Write the union of compatible filter files (the day's partitions into one).
    Merge(merge::Args),
    /// Convert a split-block filter between bloomkit's format and Parquet's filter bytes.
    Convert(convert::Args),
    /// Measure every bloomkit structure (and a HashSet) on a workload and recommend one (the
    /// same as `cargo xtask compare`).
    Compare(compare::Args),
}

/// Runs a parsed command line: the exit status, after printing any error as one line.
pub fn main(cli: &Cli) -> ExitCode {
    let result = match &cli.command {
        Command::Compare(args) => return compare::main(args),
        Command::Build(args) => build::run(args),
        Command::Query(args) => query::run(args),
        Command::Info(args) => info::run(args),
        Command::Merge(args) => merge::run(args),
        Command::Convert(args) => convert::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// Writes `path` through `write` into a temporary file beside it (`.NAME.tmp-PID`), synced
/// and renamed over `path` only when everything was written: a failure leaves no file (and
/// no old file half-overwritten); a process killed mid-write leaves that temporary file,
/// never a partial `path`.
///
/// # Errors
/// A directory that does not exist or cannot be written, a full disk, or `write`'s error.
pub fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
) -> Result<(), CliError> {
    let name = path.display();
    if path.is_dir() {
        return Err(CliError::at(&name, "is a directory: give a file name"));
    }
    let file_name = path
        .file_name()
        .ok_or_else(|| CliError::at(&name, "is not a file name"))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(file_name);
    tmp_name.push(format!(".tmp-{}", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    let result = (|| -> std::io::Result<()> {
        let file = File::create(&tmp)?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        write(&mut out)?;
        let file = out
            .into_inner()
            .map_err(std::io::IntoInnerError::into_error)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)?;
        // The rename itself, durable: best effort (not every platform opens directories).
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            if let Ok(dir) = File::open(dir) {
                let _ = dir.sync_all();
            }
        }
        Ok(())
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        CliError::at(&name, e)
    })
}

/// clap's rendering of a usage error folded into one line: its message and hints, without
/// the usage block and the pointer to `--help`.
pub fn one_line_usage_error(rendered: &str) -> String {
    let parts: Vec<&str> = rendered
        .lines()
        .map(str::trim)
        .filter(|l| {
            !l.is_empty() && !l.starts_with("Usage:") && !l.starts_with("For more information")
        })
        .collect();
    let line = parts.join(" ");
    if line.starts_with("error:") {
        line
    } else {
        format!("error: {line}")
    }
}

/// Writes `bytes` to `path` as [`write_atomically`] does.
///
/// # Errors
/// As [`write_atomically`].
pub fn write_bytes(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    write_atomically(path, |out| {
        out.write_all(bytes)?;
        out.flush()
    })
}

/// How `query` and `info` read the file.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct ReadFlags {
    /// Do not check the payload's checksum first (answers at once from a view over a large
    /// file; the header's checksum is still checked; variants without a view are decoded
    /// and checked in full anyway).
    #[arg(long)]
    pub no_verify: bool,
    /// Read the file into memory instead of mapping it.
    #[arg(long)]
    pub no_mmap: bool,
}

impl ReadFlags {
    /// The options these flags ask for.
    pub fn options(self) -> crate::open::Options {
        crate::open::Options {
            mmap: !self.no_mmap,
            verify: !self.no_verify,
        }
    }
}

/// Checks a `--fpr` flag: a rate in (0, 1).
pub(crate) fn check_fpr(fpr: f64) -> Result<(), CliError> {
    if fpr > 0.0 && fpr < 1.0 {
        Ok(())
    } else {
        Err(CliError::new(format!("--fpr must be in (0, 1), got {fpr}")))
    }
}

/// `n` with thousands separators, for people.
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A byte count for people: `1.2 MB` (powers of 1000), with the exact count for small ones.
pub(crate) fn human_bytes(n: u64) -> String {
    match n {
        0..=9_999 => format!("{n} B"),
        10_000..=999_999 => format!("{:.1} kB", n as f64 / 1e3),
        1_000_000..=999_999_999 => format!("{:.1} MB", n as f64 / 1e6),
        _ => format!("{:.2} GB", n as f64 / 1e9),
    }
}

/// Flushes `out`, treating a closed pipe (`| head`) as the reader having seen enough.
pub(crate) fn flush_quietly(out: &mut impl Write) -> Result<(), CliError> {
    match out.flush() {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(CliError::at("stdout", e)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_errors_fold_into_one_line() {
        let rendered = "error: invalid value 'x' for '--variant <VARIANT>'\n  [possible values: classic, blocked]\n\nFor more information, try '--help'.\n";
        assert_eq!(
            one_line_usage_error(rendered),
            "error: invalid value 'x' for '--variant <VARIANT>' [possible values: classic, blocked]"
        );
        let rendered = "error: unexpected argument '--x' found\n\n  tip: to pass '--x' as a value, use '-- --x'\n\nUsage: bloomkit query <FILE> [KEYS]...\n\nFor more information, try '--help'.\n";
        assert_eq!(
            one_line_usage_error(rendered),
            "error: unexpected argument '--x' found tip: to pass '--x' as a value, use '-- --x'"
        );
    }

    #[test]
    fn numbers_for_people() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000), "1,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(1_234_567), "1.2 MB");
    }

    #[test]
    fn a_failed_write_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.blmk");
        let err = write_atomically(&path, |_| Err(std::io::Error::other("disk full")));
        assert!(err.unwrap_err().to_string().contains("disk full"));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        write_atomically(&path, |w| w.write_all(b"ok")).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"ok");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
