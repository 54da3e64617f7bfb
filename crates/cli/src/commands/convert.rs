//! `bloomkit convert`: a split-block filter between bloomkit's format and Parquet's bytes.

use std::path::PathBuf;
use std::process::ExitCode;

use bloomkit::prelude::*;
use bloomkit::Variant;

use super::{human_bytes, write_bytes};
use crate::open::{FilterFile, Kind, Options};
use crate::CliError;

/// The formats `convert` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum To {
    /// The bytes Parquet stores for a column chunk's Bloom filter (Thrift header, bitset):
    /// what parquet-rs's `Sbbf::from_bytes` reads.
    Parquet,
    /// bloomkit's format (checksummed, variant tag 14).
    Bloomkit,
}

/// `bloomkit convert`'s flags.
#[derive(Debug, Clone, clap::Args)]
#[command(
    after_help = "Only split-block filters convert: they hash with Parquet's XXH64, so a \
                        Parquet reader finds their keys. Build one with `bloomkit build \
                        --variant split-block`.\n\nExamples:\n  bloomkit convert ids.blmk -o \
                        ids.bloom --to parquet\n  bloomkit convert ids.bloom -o ids.blmk --to \
                        bloomkit"
)]
pub struct Args {
    /// The file to convert.
    pub input: PathBuf,
    /// The file to write.
    #[arg(short, long, value_name = "OUTPUT")]
    pub output: PathBuf,
    /// Replace OUTPUT even when it exists and holds no filter (an input is never replaced).
    #[arg(long)]
    pub force: bool,
    /// The format to write.
    #[arg(long, value_enum)]
    pub to: To,
}

/// Converts and writes; exit 0.
///
/// # Errors
/// An unreadable or corrupt file, a variant other than the split-block filter, an output
/// that cannot be written.
pub fn run(args: &Args) -> Result<ExitCode, CliError> {
    super::check_output(
        &args.output,
        std::slice::from_ref(&args.input),
        false,
        args.force,
    )?;
    let file = FilterFile::read(
        &args.input,
        Options {
            mmap: false,
            verify: true,
        },
    )?;
    let name = file.path().display();
    let filter = match file.kind() {
        Kind::Parquet => SplitBlockFilter::<str>::from_parquet_bytes(file.bytes())
            .map_err(|e| CliError::at(&name, e))?,
        Kind::Bloomkit(h) if h.variant == Variant::SplitBlock => {
            SplitBlockFilter::<str>::from_bytes(file.bytes()).map_err(|e| CliError::at(&name, e))?
        }
        Kind::Jvm(_) => {
            return Err(CliError::new(format!(
                "{name}: cannot convert a Guava or Spark BloomFilter: its positions come from \
                 MurmurHash3 (Guava: x64_128 of the funnel's bytes; Spark: its own x86_32) \
                 spread over all its bits, and no bloomkit variant nor Parquet derives positions \
                 that way, so its bits would answer other keys. Answer it in place (`bloomkit \
                 query --funnel`) or rebuild from the keys (`bloomkit build`)"
            )));
        }
        Kind::Bloomkit(h) => {
            let why = match h.variant {
                Variant::SimdBlock => "it has Parquet's layout but hashes with XXH3, and Parquet readers hash with XXH64",
                _ => "only Parquet's split-block filter has a Parquet form",
            };
            return Err(CliError::new(format!(
                "{name}: cannot convert a {} ({why}): rebuild it with `bloomkit build --variant split-block`",
                h.variant
            )));
        }
    };
    let bytes = match args.to {
        To::Parquet => filter.to_parquet_bytes(),
        To::Bloomkit => filter.to_bytes(),
    };
    write_bytes(&args.output, &bytes)?;
    eprintln!(
        "{}: {}",
        args.output.display(),
        human_bytes(bytes.len() as u64)
    );
    Ok(ExitCode::SUCCESS)
}
