//! `bloomkit build`: a filter file from keys, one per line.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use bloomkit::registry::{self, AnyFilter, RegistryError, Spec};
use bloomkit::Variant;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::{check_fpr, check_output, human_bytes, thousands, write_atomically};
use crate::keys::{Lines, CHUNK};
use crate::CliError;

/// The variants `build` makes: every variant of the family's list whose keys are lines of
/// text and whose support is compiled in, by its command name, with its summary as help.
fn variant_parser() -> impl clap::builder::TypedValueParser<Value = Variant> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser as _};
    let values = Variant::ALL
        .into_iter()
        .filter(|&v| registry::str_entry(v).is_ok())
        .map(|v| PossibleValue::new(v.facts().command_name).help(v.facts().summary));
    PossibleValuesParser::new(values)
        .try_map(|name| Variant::from_command_name(&name).ok_or("not a variant's name"))
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
    #[arg(long, default_value = "blocked", value_parser = variant_parser())]
    pub variant: Variant,
    /// The number of distinct keys to size for (default: counted from the input; for
    /// scalable and expandable filters, the first size: default 100,000; for the window
    /// filter, the window: the last N keys of the input are kept).
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
    let entry = registry::str_entry(args.variant).map_err(|e| CliError::new(e.to_string()))?;
    let spec = |items: u64| {
        Spec::new(items, args.fpr)
            .seed(args.seed)
            .counter_bits(args.counter_bits)
    };
    let built = if entry.builds_from_hashes() {
        static_filter(args, &mut input, |hashes| {
            entry.from_hashes(hashes, &spec(1))
        })?
    } else if args.variant.facts().grows {
        growing(args, &mut input, |n| entry.make(&spec(n)))?
    } else {
        fixed(args, &mut input, |n| entry.make(&spec(n)))?
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

fn sized(e: RegistryError) -> CliError {
    #![allow(clippy::needless_pass_by_value)] // the shape map_err wants
    CliError::new(format!("cannot make the filter: {e}"))
}

fn insert_failed(e: impl std::fmt::Display) -> CliError {
    CliError::new(format!("insert failed: {e}"))
}

type Made = Result<Box<dyn AnyFilter>, RegistryError>;

fn finish(
    args: &Args,
    f: &dyn AnyFilter,
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
        estimated: f.core().estimated_len(),
        sized_for,
    })
}

/// Inserts every key of `input` into `f`; the number of keys read.
fn stream(f: &mut dyn AnyFilter, input: &mut Input) -> Result<u64, CliError> {
    while let Some(keys) = input.next()? {
        for key in keys {
            f.try_insert(key).map_err(insert_failed)?;
        }
    }
    match input.lines.keys_read() {
        0 => Err(input.no_keys()),
        read => Ok(read),
    }
}

/// A filter of a fixed size: sized by --items and streamed, or sized by the distinct keys
/// counted first.
fn fixed(args: &Args, input: &mut Input, make: impl Fn(u64) -> Made) -> Result<Built, CliError> {
    match args.items {
        Some(n) => {
            let mut f = make(n).map_err(sized)?;
            let read = stream(f.as_mut(), input)?;
            finish(args, f.as_ref(), read, Some(n))
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
            finish(args, f.as_ref(), input.lines.keys_read(), None)
        }
    }
}

/// A filter that grows: streamed, --items its first size.
fn growing(args: &Args, input: &mut Input, make: impl Fn(u64) -> Made) -> Result<Built, CliError> {
    let mut f = make(args.items.unwrap_or(100_000)).map_err(sized)?;
    let read = stream(f.as_mut(), input)?;
    finish(args, f.as_ref(), read, None)
}

/// A static filter, built once from every key's hash.
fn static_filter(
    args: &Args,
    input: &mut Input,
    build: impl Fn(Vec<u64>) -> Made,
) -> Result<Built, CliError> {
    // The static filters' own hash of a key, from an empty filter of the same seed.
    let probe = build(Vec::new()).map_err(sized)?;
    let hashes = input.distinct_hashes(|k| probe.hash_key(k))?;
    drop(probe);
    let f = build(hashes).map_err(sized)?;
    finish(args, f.as_ref(), input.lines.keys_read(), None)
}
