//! `bloomkit info`: what a filter file holds.

use std::path::PathBuf;
use std::process::ExitCode;

use bloomkit::Variant;

use std::io::Write;

use super::{flush_quietly, human_bytes, thousands};
use crate::open::{FilterFile, Kind, Source};
use crate::CliError;

/// `bloomkit info`'s flags.
#[derive(Debug, Clone, clap::Args)]
#[command(
    after_help = "Checks the file's checksums (the payload's too, unless --no-verify) \
                        and prints what it holds. Estimated items and rate come from the \
                        filter's fill."
)]
pub struct Args {
    /// The filter file.
    pub file: PathBuf,
    /// Print JSON instead of lines of text.
    #[arg(long)]
    pub json: bool,
    /// How the file is read.
    #[command(flatten)]
    pub read: super::ReadFlags,
}

/// The hasher a header names, for people.
fn hasher_name(id: u8) -> &'static str {
    match id {
        0 => "none (keys are positions)",
        1 => "XXH3-64, buffered scheme (bloomkit 0.1)",
        2 => "XXH3-64, chained scheme",
        3 => "SipHash-1-3 under a secret key",
        4 => "XXH3-64, one-shot scheme",
        5 => "Parquet's XXH64 (seed 0)",
        _ => "unknown to this build",
    }
}

/// Prints the description; exit 0.
///
/// # Errors
/// An unreadable or corrupt file (a checksum that does not match included).
pub fn run(args: &Args) -> Result<ExitCode, CliError> {
    let file = FilterFile::read(&args.file, args.read.options())?;
    file.check()?;
    let mut lines: Vec<(&str, String)> = vec![
        ("file", file.path().display().to_string()),
        (
            "size",
            format!(
                "{} ({} bytes)",
                human_bytes(file.bytes().len() as u64),
                thousands(file.bytes().len() as u64)
            ),
        ),
    ];
    let variant = file.variant();
    match file.kind() {
        Kind::Bloomkit(h) => {
            lines.push(("format", format!("bloomkit, version {}", h.version)));
            lines.push(("variant", format!("{variant} (tag {})", variant.tag())));
            lines.push((
                "hasher",
                format!(
                    "{} (id {}), seed {}",
                    hasher_name(h.hasher.id),
                    h.hasher.id,
                    h.hasher.seed
                ),
            ));
        }
        Kind::Parquet => {
            lines.push((
                "format",
                "Parquet Bloom filter bytes (Thrift header, bitset)".into(),
            ));
            lines.push(("variant", format!("{variant}")));
            lines.push(("hasher", hasher_name(5).into()));
        }
    }
    lines.push((
        "checksums",
        match (file.kind(), args.read.no_verify) {
            (Kind::Parquet, _) => "none in Parquet's bytes".into(),
            (_, false) => "header ok, payload ok".into(),
            (_, true) => "header ok, payload not checked (--no-verify)".into(),
        },
    ));
    match file.open() {
        Ok(filter) => {
            let core = filter.core();
            lines.extend(filter.details());
            if let Some(p) = core.target_fpr() {
                lines.push(("target rate", format!("{p}")));
            }
            lines.push((
                "estimated items",
                thousands(core.estimated_len().round() as u64),
            ));
            lines.push((
                "estimated rate",
                format!("{:.6} (from the fill)", core.estimated_fpr()),
            ));
            lines.push((
                "read as",
                match filter.source() {
                    Source::View => "a zero-copy view of the file".into(),
                    Source::Decoded => "decoded into memory (this variant has no view)".into(),
                },
            ));
            lines.push((
                "keys",
                "not recorded in the file; answered as lines of text (str)".into(),
            ));
        }
        // What the header says is printed; the contents need the library (a bitmap's
        // integers, a record type, a secret key).
        Err(e)
            if matches!(variant, Variant::Bitmap | Variant::Multi)
                || matches!(file.kind(), Kind::Bloomkit(h) if h.hasher.id == 3 || h.hasher.id >= 128) =>
        {
            lines.push(("contents", e.to_string()));
        }
        Err(e) => return Err(e),
    }
    let text = if args.json {
        let map: serde_json::Map<String, serde_json::Value> = lines
            .into_iter()
            .map(|(k, v)| (k.replace(' ', "_"), serde_json::Value::String(v)))
            .collect();
        format!("{}\n", serde_json::Value::Object(map))
    } else {
        let width = lines.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
        lines
            .into_iter()
            .map(|(k, v)| format!("{k:>width$}: {v}\n"))
            .collect()
    };
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            return Err(CliError::at("stdout", e))
        }
        _ => flush_quietly(&mut out)?,
    }
    Ok(ExitCode::SUCCESS)
}
