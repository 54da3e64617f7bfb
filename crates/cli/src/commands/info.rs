//! `bloomkit info`: what a filter file holds.

use std::path::PathBuf;
use std::process::ExitCode;

use bloomkit::variant::Keys;

use std::io::Write;

use super::{flush_quietly, human_bytes, thousands};
use bloomkit::registry::Detail;

use crate::open::{FilterFile, Kind};
use crate::CliError;
use serde_json::Value;

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

/// One line of the report: the label and text people read, and the JSON fields it becomes
/// (typed: counts and sizes as integers, rates and fractions as floats).
struct Entry {
    label: &'static str,
    text: String,
    json: Vec<(&'static str, Value)>,
}

impl Entry {
    fn new(label: &'static str, text: impl Into<String>) -> Self {
        Entry {
            label,
            text: text.into(),
            json: Vec::new(),
        }
    }

    fn field(mut self, name: &'static str, value: impl Into<Value>) -> Self {
        self.json.push((name, value.into()));
        self
    }
}

/// A float as a JSON number; `null` for NaN and the infinities, which JSON cannot hold.
fn float(x: f64) -> Value {
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}

/// The entries of one variant's own figures.
fn detail(d: Detail) -> Entry {
    match d {
        Detail::Bits(bits) => Entry::new("bits", bits.to_string()).field("bits", bits),
        Detail::Blocks { count, bits } => Entry::new("blocks", format!("{count} of {bits} bits"))
            .field("blocks", count)
            .field("block_bits", bits),
        Detail::Hashes(Some(k)) => Entry::new("hashes (k)", k.to_string()).field("hashes", k),
        Detail::Hashes(None) => {
            Entry::new("hashes (k)", "8 (one bit in each 32-bit word of a block)")
                .field("hashes", 8)
        }
        Detail::Fill { ones, bits } => {
            let fill = ones as f64 / bits as f64;
            Entry::new("fill", format!("{fill:.4} ({ones} of {bits} bits set)"))
                .field("fill", float(fill))
                .field("bits_set", ones)
                .field("bits", bits)
        }
        Detail::Counters { count, bits } => {
            Entry::new("counters", format!("{count} of {bits} bits"))
                .field("counters", count)
                .field("counter_bits", bits)
        }
        Detail::Slices(n) => Entry::new("slices", n.to_string()).field("slices", n),
        Detail::Slots {
            count,
            remainder_bits,
        } => Entry::new(
            "slots",
            format!("{count} home slots, {remainder_bits}-bit remainders"),
        )
        .field("slots", count)
        .field("remainder_bits", remainder_bits),
        Detail::Ring {
            generations,
            per_generation,
            buckets,
            fingerprint_bits,
            tag_bits,
        } => Entry::new(
            "generations",
            format!(
                "a key alive {generations} generations after its own, a generation every \
                 {per_generation} inserts; {buckets} buckets of 4 slots \
                 ({fingerprint_bits}-bit fingerprints, {tag_bits}-bit tags)"
            ),
        )
        .field("generations", generations)
        .field("per_generation", per_generation)
        .field("buckets", buckets)
        .field("fingerprint_bits", fingerprint_bits)
        .field("tag_bits", tag_bits),
        Detail::Saturated(saturated) => Entry::new(
            "saturated",
            if saturated {
                "yes: it could not grow for a key, so every key answers present until cleared"
            } else {
                "no"
            },
        )
        .field("saturated", saturated),
        _ => Entry::new("detail", format!("{d:?}")),
    }
}

/// Prints the description; exit 0.
///
/// # Errors
/// An unreadable or corrupt file (a checksum that does not match included).
pub fn run(args: &Args) -> Result<ExitCode, CliError> {
    let file = FilterFile::read(&args.file, args.read.options())?;
    file.check()?;
    let size = file.bytes().len() as u64;
    let mut lines = vec![
        Entry::new("file", file.path().display().to_string())
            .field("file", file.path().display().to_string()),
        Entry::new(
            "size",
            format!("{} ({} bytes)", human_bytes(size), thousands(size)),
        )
        .field("size_bytes", size),
    ];
    if let Some(jvm) = file.open_jvm()? {
        let described = jvm.describe().into_iter();
        lines.extend(described.map(|(label, text, json)| Entry { label, text, json }));
        return print(lines, args.json);
    }
    let Some(variant) = file.variant() else {
        return Err(CliError::at(
            file.path().display(),
            "holds no filter this build knows",
        ));
    };
    match file.kind() {
        Kind::Bloomkit(h) => {
            lines.push(
                Entry::new("format", format!("bloomkit, version {}", h.version))
                    .field("format", "bloomkit")
                    .field("format_version", h.version),
            );
            lines.push(
                Entry::new("variant", format!("{variant} (tag {})", variant.tag()))
                    .field("variant", variant.to_string())
                    .field("variant_tag", variant.tag()),
            );
            lines.push(
                Entry::new(
                    "hasher",
                    format!(
                        "{} (id {}), seed {}",
                        hasher_name(h.hasher.id),
                        h.hasher.id,
                        h.hasher.seed
                    ),
                )
                .field("hasher", hasher_name(h.hasher.id))
                .field("hasher_id", h.hasher.id)
                .field("hasher_seed", h.hasher.seed),
            );
        }
        // (A JVM file was described above.)
        Kind::Jvm(_) => {}
        Kind::Parquet => {
            lines.push(
                Entry::new(
                    "format",
                    "Parquet Bloom filter bytes (Thrift header, bitset)",
                )
                .field("format", "parquet"),
            );
            lines.push(
                Entry::new("variant", variant.to_string()).field("variant", variant.to_string()),
            );
            lines.push(Entry::new("hasher", hasher_name(5)).field("hasher", hasher_name(5)));
        }
    }
    // The JSON: whether each checksum was checked and held (a file whose checksum fails
    // is an error before this point); `null` where the bytes carry none.
    lines.push(match (file.kind(), args.read.no_verify) {
        (Kind::Parquet, _) => Entry::new("checksums", "none in Parquet's bytes")
            .field("header_checksum_ok", Value::Null)
            .field("payload_checksum_ok", Value::Null),
        (_, false) => Entry::new("checksums", "header ok, payload ok")
            .field("header_checksum_ok", true)
            .field("payload_checksum_ok", true),
        (_, true) => Entry::new("checksums", "header ok, payload not checked (--no-verify)")
            .field("header_checksum_ok", true)
            .field("payload_checksum_ok", Value::Null),
    });
    match file.open() {
        Ok(filter) => {
            let core = filter.core();
            lines.extend(filter.details().into_iter().map(detail));
            if let Some(p) = core.target_fpr() {
                lines
                    .push(Entry::new("target rate", format!("{p}")).field("target_rate", float(p)));
            }
            let items = core.estimated_len();
            lines.push(
                Entry::new("estimated items", thousands(items.round() as u64)).field(
                    "estimated_items",
                    if items.is_finite() {
                        Value::from(items.round() as u64)
                    } else {
                        Value::Null
                    },
                ),
            );
            let rate = core.estimated_fpr();
            lines.push(
                Entry::new("estimated rate", format!("{rate:.6} (from the fill)"))
                    .field("estimated_rate", float(rate)),
            );
            lines.push(if filter.is_view() {
                Entry::new("read as", "a zero-copy view of the file").field("read_as", "view")
            } else {
                Entry::new("read as", "decoded into memory (this variant has no view)")
                    .field("read_as", "decoded")
            });
            lines.push(
                Entry::new(
                    "keys",
                    "not recorded in the file; answered as lines of text (str)",
                )
                .field("keys", "str"),
            );
        }
        // What the header says is printed; the contents need the library (a bitmap's
        // integers, a record type, a secret key).
        Err(e)
            if variant.facts().keys != Keys::Hashed
                || matches!(file.kind(), Kind::Bloomkit(h) if h.hasher.is_keyed() || h.hasher.id >= 128) =>
        {
            lines.push(Entry::new("contents", e.to_string()).field("contents", e.to_string()));
        }
        Err(e) => return Err(e),
    }
    print(lines, args.json)
}

/// Prints the entries as aligned lines or one JSON object; exit 0.
fn print(lines: Vec<Entry>, json: bool) -> Result<ExitCode, CliError> {
    let text = if json {
        let map: serde_json::Map<String, Value> = lines
            .into_iter()
            .flat_map(|e| e.json)
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        format!("{}\n", Value::Object(map))
    } else {
        let width = lines.iter().map(|e| e.label.len()).max().unwrap_or(0);
        lines
            .into_iter()
            .map(|e| format!("{:>width$}: {}\n", e.label, e.text))
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
