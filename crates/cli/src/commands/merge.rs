//! `bloomkit merge`: the union of compatible filter files.

use std::path::PathBuf;
use std::process::ExitCode;

use bloomkit::prelude::*;
use bloomkit::registry::{self, AnyFilter, Detail, RegistryError};

use super::{human_bytes, thousands, write_bytes};
use crate::open::{FilterFile, Kind, Options};
use crate::CliError;

/// `bloomkit merge`'s flags.
#[derive(Debug, Clone, clap::Args)]
#[command(
    after_help = "Every file must be the same variant with the same size, hashes and \
                        seed: build the partitions with the same --variant, --items, --fpr and \
                        --seed (without --items each is sized for its own keys). The union answers \
                        \"present\" for every key of every file. Static filters (binary fuse, \
                        ribbon) and expandable filters cannot be merged: rebuild from the keys.\
                        \n\nExample:\n  bloomkit merge -o week.blmk mon.blmk tue.blmk wed.blmk"
)]
pub struct Args {
    /// The filter files to merge (at least two).
    #[arg(required = true, num_args = 2..)]
    pub files: Vec<PathBuf>,
    /// The merged file to write.
    #[arg(short, long, value_name = "OUTPUT")]
    pub output: PathBuf,
    /// Replace OUTPUT even when it exists and holds no filter (an input is never replaced).
    #[arg(long)]
    pub force: bool,
}

/// Merges and writes; exit 0.
///
/// # Errors
/// An unreadable or corrupt file, files of different variants or incompatible shapes, a
/// variant without a union, an output that cannot be written.
pub fn run(args: &Args) -> Result<ExitCode, CliError> {
    super::check_output(&args.output, &args.files, false, args.force)?;
    let files = args
        .files
        .iter()
        .map(|p| {
            FilterFile::read(
                p,
                Options {
                    mmap: false,
                    verify: true,
                },
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    let first = &files[0];
    let variant = first.require_variant()?;
    for other in &files[1..] {
        if other.require_variant()? != variant {
            return Err(CliError::new(format!(
                "cannot merge {} ({}) with {} ({}): the files must be the same variant",
                first.path().display(),
                variant,
                other.path().display(),
                other.require_variant()?
            )));
        }
    }
    let parquet_out = matches!(first.kind(), Kind::Parquet);
    let entry = registry::str_entry(variant).map_err(|e| first_err(first, e))?;
    let mut merged = decode(first)?;
    let mut doublings = 0;
    for file in &files[1..] {
        let other = bloomkit_bytes(file)?;
        doublings += entry
            .union_into(merged.as_mut(), &other)
            .map_err(|e| match e {
                RegistryError::Cannot { .. } => first_err(first, e),
                e => CliError::new(format!(
                    "cannot merge {} into {}: {e}",
                    file.path().display(),
                    first.path().display()
                )),
            })?;
    }
    if doublings > 0 {
        // The union made room as the library's `union_growing` does: say so.
        let slots = merged.details().into_iter().find_map(|d| match d {
            Detail::Slots { count, .. } => Some(count),
            _ => None,
        });
        eprintln!(
            "{}: the union needed more room: the {} doubled {} time{} to {} home slots (its \
             rate when full doubles with each)",
            args.output.display(),
            variant,
            doublings,
            if doublings == 1 { "" } else { "s" },
            thousands(slots.unwrap_or(0))
        );
    }
    let bytes = match merged.as_any().downcast_ref::<SplitBlockFilter<str>>() {
        Some(f) if parquet_out => f.to_parquet_bytes(),
        _ => {
            let mut out = Vec::with_capacity(merged.serialized_len() as usize);
            merged
                .write_to(&mut out)
                .map_err(|e| CliError::at(args.output.display(), e))?;
            out
        }
    };
    write_bytes(&args.output, &bytes)?;
    eprintln!(
        "{}: {} files merged, {}",
        args.output.display(),
        files.len(),
        human_bytes(bytes.len() as u64)
    );
    Ok(ExitCode::SUCCESS)
}

fn first_err(file: &FilterFile, e: impl std::fmt::Display) -> CliError {
    CliError::at(file.path().display(), e)
}

/// A file's filter in bloomkit's bytes (Parquet's bytes converted).
fn bloomkit_bytes(file: &FilterFile) -> Result<std::borrow::Cow<'_, [u8]>, CliError> {
    match file.kind() {
        Kind::Parquet => SplitBlockFilter::<str>::from_parquet_bytes(file.bytes())
            .map(|f| f.to_bytes().into())
            .map_err(|e| first_err(file, e)),
        Kind::Bloomkit(_) => Ok(file.bytes().into()),
        Kind::Jvm(_) => file.require_variant().map(|_| file.bytes().into()),
    }
}

/// The first file's filter, decoded to merge the others into.
fn decode(file: &FilterFile) -> Result<Box<dyn AnyFilter>, CliError> {
    registry::decode(&bloomkit_bytes(file)?).map_err(|e| first_err(file, e))
}
