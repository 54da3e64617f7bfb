//! `bloomkit build`: a filter file from keys, one per line.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use bloomkit::counting::{Counter, U4};
use bloomkit::prelude::*;
use bloomkit::{Codec, Error, FilterCore, LookupCore};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::{check_fpr, check_output, human_bytes, thousands, write_atomically};
use crate::keys::{Lines, CHUNK};
use crate::CliError;

/// The variants `build` makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BuildVariant {
    /// Classic Bloom filter: m bits, k positions anywhere.
    Classic,
    /// Blocked Bloom filter: k positions in one 512-bit block (one cache miss a lookup).
    Blocked,
    /// SIMD block filter: 256-bit blocks, one bit in each 32-bit word (fastest to query).
    SimdBlock,
    /// Parquet's split-block filter (Parquet's hash): convert it to Parquet's bytes.
    SplitBlock,
    /// Counting Bloom filter: keys can be removed later (see --counter-bits).
    Counting,
    /// Scalable Bloom filter: grows as keys come; --items is only its first size.
    Scalable,
    /// Quotient filter: deletes, merges, about a quarter of a counting filter's memory.
    Quotient,
    /// Expandable quotient filter: grows a thousandfold at a steady rate.
    Expandable,
    /// Binary fuse filter, 8-bit fingerprints (static: about 9 bits a key at 0.39%).
    BinaryFuse8,
    /// Binary fuse filter, 16-bit fingerprints (static: 0.0015%).
    BinaryFuse16,
    /// Binary fuse filter, 32-bit fingerprints (static: 2^-32).
    BinaryFuse32,
    /// Ribbon filter (static, any --fpr, near the space bound).
    Ribbon,
}

/// `bloomkit build`'s flags.
#[derive(Debug, Clone, clap::Args)]
#[command(
    after_help = "Without --items, fixed-size variants read every key first (8 bytes of \
                        memory a key) to count the distinct ones, then size the filter for them. \
                        The file is written beside OUTPUT and renamed over it when complete: a \
                        failure leaves no file. OUTPUT is never an input, and an existing file \
                        is replaced only when it holds a filter (or with --force).\n\nExamples:\n  bloomkit build urls.txt -o \
                        seen.blmk\n  zcat keys.gz | bloomkit build -o keys.blmk --variant \
                        binary-fuse8\n  bloomkit build ids.txt -o ids.blmk --variant split-block \
                        --items 1000000 --fpr 0.001"
)]
pub struct Args {
    /// Files of keys, one key per line (none, or `-`: stdin).
    pub files: Vec<PathBuf>,
    /// The filter file to write.
    #[arg(short, long, value_name = "OUTPUT")]
    pub output: PathBuf,
    /// Replace OUTPUT even when it exists and holds no filter (an input is never replaced).
    #[arg(long)]
    pub force: bool,
    /// Which filter.
    #[arg(long, value_enum, default_value_t = BuildVariant::Blocked)]
    pub variant: BuildVariant,
    /// The number of distinct keys to size for (default: counted from the input; for
    /// scalable and expandable filters, the first size: default 100,000).
    #[arg(long)]
    pub items: Option<u64>,
    /// The target false-positive rate, in (0, 1) (binary fuse filters have a fixed rate).
    #[arg(long, default_value_t = 0.01)]
    pub fpr: f64,
    /// The hash seed (Parquet's split-block filter has none).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Counter width of a counting filter: 4, 8, 16 or 32 bits.
    #[arg(long, default_value_t = 4, value_parser = counter_bits)]
    pub counter_bits: u32,
}

fn counter_bits(s: &str) -> Result<u32, String> {
    match s.parse() {
        Ok(bits @ (4 | 8 | 16 | 32)) => Ok(bits),
        _ => Err(format!("{s} is not one of 4, 8, 16, 32")),
    }
}

/// What a build did, for its summary line.
struct Built {
    keys: u64,
    bytes: u64,
    estimated: f64,
    sized_for: Option<u64>,
}

/// Builds and writes the filter; exit status 0.
///
/// # Errors
/// Bad flags, unreadable or empty input, a line that is not UTF-8, a filter too large for
/// the machine, an output that cannot be written.
pub fn run(args: &Args) -> Result<ExitCode, CliError> {
    check_fpr(args.fpr)?;
    if args.items == Some(0) {
        return Err(CliError::new("--items must be at least 1"));
    }
    let stdin = args.files.is_empty() || args.files.iter().any(|f| f.as_os_str() == "-");
    check_output(&args.output, &args.files, stdin, args.force)?;
    let started = Instant::now();
    let mut input = Input::new(&args.files);
    let built = match args.variant {
        BuildVariant::Classic => fixed(args, &mut input, |n| {
            BloomFilter::<str>::builder(n, args.fpr)
                .seed(args.seed)
                .build()
        })?,
        BuildVariant::Blocked => fixed(args, &mut input, |n| {
            BlockedBloomFilter::<str>::builder(n, args.fpr)
                .seed(args.seed)
                .build()
        })?,
        BuildVariant::SimdBlock => fixed(args, &mut input, |n| {
            SimdBlockFilter::<str>::builder(n, args.fpr)
                .seed(args.seed)
                .build()
        })?,
        BuildVariant::SplitBlock => fixed(args, &mut input, |n| {
            SplitBlockFilter::<str>::builder(n, args.fpr).build()
        })?,
        BuildVariant::Counting => match args.counter_bits {
            8 => counting::<u8>(args, &mut input)?,
            16 => counting::<u16>(args, &mut input)?,
            32 => counting::<u32>(args, &mut input)?,
            _ => counting::<U4>(args, &mut input)?,
        },
        BuildVariant::Quotient => fixed(args, &mut input, |n| {
            QuotientFilter::<str>::builder(n, args.fpr)
                .seed(args.seed)
                .build()
        })?,
        BuildVariant::Scalable => growing(args, &mut input, |n| {
            ScalableBloomFilter::<str>::builder(n, args.fpr)
                .seed(args.seed)
                .build()
        })?,
        BuildVariant::Expandable => growing(args, &mut input, |n| {
            ExpandableFilter::<str>::builder(n, args.fpr)
                .seed(args.seed)
                .build()
        })?,
        BuildVariant::BinaryFuse8 => static_filter(args, &mut input, |h, s| {
            BinaryFuse8::<str>::from_hashes_with_hasher(h, s)
        })?,
        BuildVariant::BinaryFuse16 => static_filter(args, &mut input, |h, s| {
            BinaryFuse16::<str>::from_hashes_with_hasher(h, s)
        })?,
        BuildVariant::BinaryFuse32 => static_filter(args, &mut input, |h, s| {
            BinaryFuse32::<str>::from_hashes_with_hasher(h, s)
        })?,
        BuildVariant::Ribbon => static_filter(args, &mut input, |h, s| {
            RibbonFilter::<str>::from_hashes_with_hasher(h, args.fpr, s)
        })?,
    };
    input.bar.finish_and_clear();
    let mut line = format!(
        "{}: {} keys ({} distinct, estimated), {}, in {:.2} s",
        args.output.display(),
        thousands(built.keys),
        distinct(built.estimated),
        human_bytes(built.bytes),
        started.elapsed().as_secs_f64()
    );
    if let Some(n) = built
        .sized_for
        .filter(|&n| built.estimated > n as f64 * 1.1)
    {
        line.push_str(&format!(
            "; note: sized for {} keys, so its rate is above --fpr: rebuild with --items {} \
             (or without --items)",
            thousands(n),
            suggested_items(built.estimated, built.keys)
        ));
    }
    eprintln!("{line}");
    Ok(ExitCode::SUCCESS)
}

/// An estimate of distinct keys for people: "more than any filter of this size holds" when
/// the filter is saturated (the estimate is infinite).
fn distinct(estimated: f64) -> String {
    if estimated.is_finite() {
        thousands(estimated.round() as u64)
    } else {
        "too many to estimate".to_owned()
    }
}

/// The `--items` to suggest after a build whose distinct keys were estimated at `estimated`
/// from `keys` lines: the estimate, but never more than the lines read (an overfull filter
/// estimates infinity, which no filter can be sized for).
fn suggested_items(estimated: f64, keys: u64) -> u64 {
    if estimated.is_finite() && estimated < keys as f64 {
        estimated.ceil() as u64
    } else {
        keys
    }
}

/// The keys and a progress bar on stderr (over the files' bytes, or a spinner for stdin),
/// hidden when stderr is not a terminal.
struct Input {
    lines: Lines,
    bar: ProgressBar,
    chunk: Vec<String>,
    source: String,
}

impl Input {
    fn new(files: &[PathBuf]) -> Input {
        let total = Lines::total_bytes(files);
        let bar = match total {
            Some(n) => ProgressBar::new(n).with_style(
                ProgressStyle::with_template("{bar:30} {bytes}/{total_bytes} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            ),
            None => ProgressBar::new_spinner(),
        };
        bar.set_draw_target(if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        });
        let source = if files.is_empty() {
            "stdin".to_owned()
        } else {
            files
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        Input {
            lines: Lines::new(files),
            bar,
            chunk: Vec::with_capacity(CHUNK),
            source,
        }
    }

    /// The next chunk of keys, or `None` at the end.
    fn next(&mut self) -> Result<Option<&[String]>, CliError> {
        if !self.lines.next_chunk(&mut self.chunk, CHUNK)? {
            return Ok(None);
        }
        self.bar.set_position(self.lines.bytes_read());
        self.bar
            .set_message(format!("{} keys", thousands(self.lines.keys_read())));
        Ok(Some(&self.chunk))
    }

    fn no_keys(&self) -> CliError {
        CliError::new(format!(
            "no keys in {} (one key per line; empty lines are skipped)",
            self.source
        ))
    }

    /// Every key's hash under `hash`, sorted with duplicates dropped.
    fn distinct_hashes(&mut self, hash: impl Fn(&str) -> u64) -> Result<Vec<u64>, CliError> {
        let mut hashes = Vec::new();
        while let Some(keys) = self.next()? {
            hashes.try_reserve(keys.len()).map_err(|_| {
                CliError::new(format!(
                    "out of memory holding {} key hashes: pass --items to stream instead",
                    thousands(hashes.len() as u64)
                ))
            })?;
            hashes.extend(keys.iter().map(|k| hash(k)));
        }
        if hashes.is_empty() {
            return Err(self.no_keys());
        }
        hashes.sort_unstable();
        hashes.dedup();
        Ok(hashes)
    }
}

fn sized(e: Error) -> CliError {
    #![allow(clippy::needless_pass_by_value)] // the shape map_err wants
    CliError::new(format!("cannot make the filter: {e}"))
}

fn insert_failed(e: impl std::fmt::Display) -> CliError {
    CliError::new(format!("insert failed: {e}"))
}

fn finish<F: Codec + LookupCore>(
    args: &Args,
    f: &F,
    keys: u64,
    sized_for: Option<u64>,
) -> Result<Built, CliError> {
    write_atomically(&args.output, |out| {
        f.write_to(&mut *out)?;
        out.flush()
    })?;
    Ok(Built {
        keys,
        bytes: f.serialized_len(),
        estimated: f.estimated_len(),
        sized_for,
    })
}

/// A filter of a fixed size: sized by --items and streamed, or sized by the distinct keys
/// counted first.
fn fixed<F>(
    args: &Args,
    input: &mut Input,
    make: impl Fn(u64) -> Result<F, Error>,
) -> Result<Built, CliError>
where
    F: Filter<Key = str> + Codec,
    F::InsertError: std::fmt::Display,
{
    match args.items {
        Some(n) => {
            let mut f = make(n).map_err(sized)?;
            while let Some(keys) = input.next()? {
                for key in keys {
                    f.try_insert(key).map_err(insert_failed)?;
                }
            }
            let read = input.lines.keys_read();
            if read == 0 {
                return Err(input.no_keys());
            }
            finish(args, &f, read, Some(n))
        }
        None => {
            // The filter's own hash, from a filter of the same hasher and seed.
            let probe = make(1).map_err(sized)?;
            let hashes = input.distinct_hashes(|k| probe.hash_key(k))?;
            drop(probe);
            let mut f = make(hashes.len() as u64).map_err(sized)?;
            for &h in &hashes {
                f.try_insert_hash(h).map_err(insert_failed)?;
            }
            finish(args, &f, input.lines.keys_read(), None)
        }
    }
}

fn counting<C: Counter>(args: &Args, input: &mut Input) -> Result<Built, CliError>
where
    CountingBloomFilter<str, C>: Filter<Key = str> + Codec,
    <CountingBloomFilter<str, C> as FilterCore>::InsertError: std::fmt::Display,
{
    fixed(args, input, |n| {
        CountingBloomFilter::<str>::builder(n, args.fpr)
            .counter::<C>()
            .seed(args.seed)
            .build()
    })
}

/// A filter that grows: streamed, --items its first size.
fn growing<F>(
    args: &Args,
    input: &mut Input,
    make: impl Fn(u64) -> Result<F, Error>,
) -> Result<Built, CliError>
where
    F: Filter<Key = str> + Codec,
    F::InsertError: std::fmt::Display,
{
    let mut f = make(args.items.unwrap_or(100_000)).map_err(sized)?;
    while let Some(keys) = input.next()? {
        for key in keys {
            f.try_insert(key).map_err(insert_failed)?;
        }
    }
    let read = input.lines.keys_read();
    if read == 0 {
        return Err(input.no_keys());
    }
    finish(args, &f, read, None)
}

/// A static filter, built once from every key's hash.
fn static_filter<F>(
    args: &Args,
    input: &mut Input,
    build: impl Fn(Vec<u64>, Xxh3Builder) -> Result<F, Error>,
) -> Result<Built, CliError>
where
    F: Lookup<Key = str> + Codec,
{
    // The static filters' own hash of a key, from an empty filter of the same seed.
    let probe = build(Vec::new(), Xxh3Builder::with_seed(args.seed)).map_err(sized)?;
    let hashes = input.distinct_hashes(|k| probe.hash_key(k))?;
    drop(probe);
    let f = build(hashes, Xxh3Builder::with_seed(args.seed)).map_err(sized)?;
    finish(args, &f, input.lines.keys_read(), None)
}
