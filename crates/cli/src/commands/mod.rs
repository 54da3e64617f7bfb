//! The subcommands: each an `Args` (its flags and `--help`) and a `run` that returns the exit
//! status or a [`CliError`].

pub mod build;
pub mod convert;
pub mod info;
pub mod merge;
pub mod query;

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
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

/// Checks the output `path` of a command before any input is read, so that no command
/// destroys a file it did not make:
/// - it is none of the `inputs` (the same file by device and inode, through any link or
///   other name), nor the standard input when keys come from it (`stdin`);
/// - an existing file there is replaced only when it holds a filter (bloomkit's format or
///   Parquet's filter bytes), or when `force` says any file may be.
///
/// # Errors
/// The refusal, naming the file and why.
pub fn check_output(
    path: &Path,
    inputs: &[PathBuf],
    stdin: bool,
    force: bool,
) -> Result<(), CliError> {
    let name = path.display();
    let Ok(out) = std::fs::metadata(path) else {
        return Ok(()); // nothing there yet (or nothing to compare: the write will say)
    };
    if out.is_dir() {
        return Err(CliError::at(&name, "is a directory: give a file name"));
    }
    // The rename at the end would replace a device, a pipe or a socket with a file.
    if !out.is_file() {
        return Err(CliError::at(
            &name,
            "is not a regular file (a device, pipe or socket): give a file name",
        ));
    }
    let same = |other: &std::fs::Metadata| same_file(&out, other);
    for input in inputs {
        if std::fs::metadata(input).is_ok_and(|m| same(&m)) {
            return Err(CliError::at(
                &name,
                format!(
                    "is the input {}: refusing to overwrite it (write the filter elsewhere)",
                    input.display()
                ),
            ));
        }
    }
    if stdin && stdin_metadata().is_some_and(|m| same(&m)) {
        return Err(CliError::at(
            &name,
            "is the file on standard input: refusing to overwrite it (write the filter elsewhere)",
        ));
    }
    // An empty file (`out=$(mktemp)`) holds nothing to lose.
    if !force && out.len() > 0 && !holds_a_filter(path)? {
        return Err(CliError::at(
            &name,
            "exists and is not a filter file: refusing to replace it (remove it, or pass --force)",
        ));
    }
    Ok(())
}

/// Whether two files are one (device and inode; elsewhere than Unix, never).
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        a.dev() == b.dev() && a.ino() == b.ino()
    }
    #[cfg(not(unix))]
    {
        let _ = (a, b);
        false
    }
}

/// What the standard input is, when it is a file.
fn stdin_metadata() -> Option<std::fs::Metadata> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let fd = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
        File::from(fd).metadata().ok()
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Whether `path` starts as a filter file: bloomkit's magic, or a Parquet filter header.
///
/// # Errors
/// The file cannot be read (said as such, not as "not a filter").
fn holds_a_filter(path: &Path) -> Result<bool, CliError> {
    let mut start = Vec::with_capacity(4096);
    File::open(path)
        .and_then(|f| f.take(4096).read_to_end(&mut start))
        .map_err(|e| CliError::at(path.display(), e))?;
    Ok(start.starts_with(&bloomkit::format::MAGIC)
        || bloomkit::SplitBlockFilter::<[u8]>::parquet_len(&start).is_ok())
}

/// Writes `path` through `write` into a new temporary file beside it (created exclusively
/// under a random name, `.NAME.XXXXXX.tmp`, so that no link planted in the directory is
/// followed), synced and renamed over `path` only when everything was written: a failure
/// leaves no file (and no old file half-overwritten); a process killed mid-write leaves that
/// temporary file, never a partial `path`.
///
/// # Errors
/// The first error of `write`, of creating the temporary file, of syncing or of renaming.
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
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut prefix = std::ffi::OsString::from(".");
    prefix.push(file_name);
    prefix.push(".");
    let result = (|| -> std::io::Result<()> {
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".tmp");
        // Readable as a file the user creates (0666 less the umask), not tempfile's 0600.
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
        let tmp = builder.tempfile_in(dir)?;
        let (file, tmp_path) = tmp.into_parts();
        let mut out = BufWriter::with_capacity(1 << 20, file);
        write(&mut out)?;
        let file = out
            .into_inner()
            .map_err(std::io::IntoInnerError::into_error)?;
        file.sync_all()?;
        // The rename replaces `path` itself (a link there is replaced, not followed).
        tmp_path.persist(path).map_err(|e| e.error)?;
        // The rename itself, durable: best effort (not every platform opens directories).
        if let Ok(dir) = File::open(dir) {
            let _ = dir.sync_all();
        }
        Ok(())
    })();
    // On an error the temporary file's path was dropped, which removed it.
    result.map_err(|e| CliError::at(&name, e))
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
    /// Map the file instead of reading it into memory: a large file answers sooner, but a
    /// file truncated by another process while mapped kills this one (SIGBUS), and one
    /// rewritten in place changes the answers mid-run. Only for files nothing else writes.
    #[arg(long)]
    pub mmap: bool,
    /// Read the file into memory (the default; kept for scripts that ask for it).
    #[arg(long, hide = true, conflicts_with = "mmap")]
    pub no_mmap: bool,
}

impl ReadFlags {
    /// The options these flags ask for.
    pub fn options(self) -> crate::open::Options {
        crate::open::Options {
            mmap: self.mmap,
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
