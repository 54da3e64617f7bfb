//! `bloomkit merge`: the union of compatible filter files.

use std::path::PathBuf;
use std::process::ExitCode;

use bloomkit::counting::{Counter, U4};
use bloomkit::prelude::*;
use bloomkit::{Codec, Error, Union, Variant};

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
    for other in &files[1..] {
        if other.variant() != first.variant() {
            return Err(CliError::new(format!(
                "cannot merge {} ({}) with {} ({}): the files must be the same variant",
                first.path().display(),
                first.variant(),
                other.path().display(),
                other.variant()
            )));
        }
    }
    let parquet_out = matches!(first.kind(), Kind::Parquet);
    let bytes = match first.variant() {
        Variant::Classic => union::<BloomFilter<str>>(&files, Union::union_with)?,
        Variant::Blocked => union::<BlockedBloomFilter<str>>(&files, Union::union_with)?,
        Variant::SimdBlock => union::<SimdBlockFilter<str>>(&files, Union::union_with)?,
        Variant::SplitBlock => {
            let f: SplitBlockFilter<str> = fold(&files, Union::union_with)?;
            if parquet_out {
                f.to_parquet_bytes()
            } else {
                f.to_bytes()
            }
        }
        Variant::Counting => counting(&files)?,
        Variant::Scalable => union::<ScalableBloomFilter<str>>(&files, Union::union_with)?,
        Variant::Quotient => {
            // The union makes room as the library's `union_growing` does, and says so.
            let doublings = std::cell::Cell::new(0u32);
            let f = fold(
                &files,
                |a: &mut QuotientFilter<str>, b: &QuotientFilter<str>| {
                    doublings.set(doublings.get() + a.union_growing(b)?);
                    Ok(())
                },
            )?;
            if doublings.get() > 0 {
                eprintln!(
                    "{}: the union needed more room: the quotient filter doubled {} time{} \
                     to {} home slots (its rate when full doubles with each)",
                    args.output.display(),
                    doublings.get(),
                    if doublings.get() == 1 { "" } else { "s" },
                    thousands(f.capacity())
                );
            }
            f.to_bytes()
        }
        Variant::Bitmap | Variant::Multi => {
            return Err(CliError::new(format!(
                "{}: a {}'s keys are not lines of text: merge it with the library",
                first.path().display(),
                first.variant()
            )))
        }
        v @ (Variant::BinaryFuse8
        | Variant::BinaryFuse16
        | Variant::BinaryFuse32
        | Variant::Ribbon) => {
            return Err(CliError::new(format!(
                "{}: a {v} is built once from every key and has no union: rebuild it from the \
                 keys of every partition",
                first.path().display()
            )))
        }
        v => {
            return Err(CliError::new(format!(
                "{}: merging {v} files is not supported",
                first.path().display()
            )))
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

/// Every file decoded as `F` and folded with `combine`.
fn fold<F: Codec>(
    files: &[FilterFile],
    combine: impl Fn(&mut F, &F) -> Result<(), Error>,
) -> Result<F, CliError> {
    let decode = |file: &FilterFile| -> Result<F, CliError> {
        match file.kind() {
            Kind::Parquet => {
                let f = SplitBlockFilter::<str>::from_parquet_bytes(file.bytes())
                    .map_err(|e| CliError::at(file.path().display(), e))?;
                F::from_bytes(&f.to_bytes()).map_err(|e| CliError::at(file.path().display(), e))
            }
            Kind::Bloomkit(_) => {
                F::from_bytes(file.bytes()).map_err(|e| CliError::at(file.path().display(), e))
            }
        }
    };
    let mut acc = decode(&files[0])?;
    for file in &files[1..] {
        let next = decode(file)?;
        combine(&mut acc, &next).map_err(|e| {
            CliError::new(format!(
                "cannot merge {} into {}: {e}",
                file.path().display(),
                files[0].path().display()
            ))
        })?;
    }
    Ok(acc)
}

fn union<F: Codec>(
    files: &[FilterFile],
    combine: impl Fn(&mut F, &F) -> Result<(), Error>,
) -> Result<Vec<u8>, CliError> {
    fold(files, combine).map(|f: F| f.to_bytes())
}

fn counting(files: &[FilterFile]) -> Result<Vec<u8>, CliError> {
    fn width<C: Counter>(files: &[FilterFile]) -> Result<Vec<u8>, CliError>
    where
        CountingBloomFilter<str, C>: Codec + Union,
    {
        union::<CountingBloomFilter<str, C>>(files, Union::union_with)
    }
    // The first file's width decides; a file of another width is refused by its decoder.
    // Format version 1 does not say it where a glance finds it: every width is tried.
    match files[0].counter_width() {
        Some(8) => width::<u8>(files),
        Some(16) => width::<u16>(files),
        Some(32) => width::<u32>(files),
        Some(_) => width::<U4>(files),
        None => width::<U4>(files).or_else(|first| {
            width::<u8>(files)
                .or_else(|_| width::<u16>(files))
                .or_else(|_| width::<u32>(files))
                .map_err(|_| first)
        }),
    }
}
