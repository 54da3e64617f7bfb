//! The JVM's filter files (Guava's `BloomFilter`, Spark's sketch `BloomFilter`): what `info`
//! says of them and how `query` answers lines of text through them
//! ([`bloomkit::jvm`]).
//!
//! Neither format records how its keys were turned into bytes (Guava's funnel, Spark's
//! `put` overload), so `query` requires `--funnel` for them: a guess would answer "absent"
//! for every key put in through another funnel.

use bloomkit::jvm::guava::{funnel, FunnelKind, GuavaBloomFilter};
use bloomkit::jvm::spark::SparkBloomFilter;
use bloomkit::jvm::JvmFormat;

use crate::CliError;

/// How a line of text becomes the key a JVM filter hashed (`--funnel`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Funnel {
    /// The line's UTF-8 bytes: Guava's `Funnels.stringFunnel(UTF_8)`, Spark's
    /// `putString`.
    Utf8,
    /// The line's UTF-16 code units: Guava's `Funnels.unencodedCharsFunnel()`.
    Chars,
    /// The line as a decimal `long`: Guava's `Funnels.longFunnel()`, Spark's `putLong`
    /// (and every Java integer type).
    Long,
    /// The line as a decimal `int`: Guava's `Funnels.integerFunnel()` (Spark widens an
    /// `int` to `long`: the same as `long`).
    Int,
    /// The line's bytes: Guava's `Funnels.byteArrayFunnel()`, Spark's `putBinary` (for a
    /// line, the same bytes as `utf8`).
    Bytes,
}

impl Funnel {
    fn guava(self) -> FunnelKind {
        match self {
            Funnel::Utf8 => FunnelKind::Utf8String,
            Funnel::Chars => FunnelKind::UnencodedChars,
            Funnel::Long => FunnelKind::Long,
            Funnel::Int => FunnelKind::Integer,
            Funnel::Bytes => FunnelKind::ByteArray,
        }
    }
}

/// One line of `info`: its label, its text, and the JSON fields it becomes.
pub type Line = (&'static str, String, Vec<(&'static str, serde_json::Value)>);

/// A decoded Guava or Spark filter.
#[derive(Debug)]
pub enum JvmFilter {
    /// Guava's (the funnel is chosen per query: the type here is only a carrier).
    Guava(GuavaBloomFilter<funnel::ByteArray>),
    /// Spark's.
    Spark(SparkBloomFilter),
}

impl JvmFilter {
    /// Decodes `bytes`, which [`JvmFormat::sniff`] said are `format`.
    ///
    /// # Errors
    /// The decoder's (truncated, absurd header).
    pub fn decode(name: &str, format: JvmFormat, bytes: &[u8]) -> Result<JvmFilter, CliError> {
        let filter = match format {
            JvmFormat::Guava(_) => GuavaBloomFilter::from_bytes(bytes).map(JvmFilter::Guava),
            JvmFormat::Spark(_) => SparkBloomFilter::from_bytes(bytes).map(JvmFilter::Spark),
        };
        filter.map_err(|e| CliError::at(name, e))
    }

    /// Appends whether each line may be in the filter, the lines made keys by `funnel`.
    ///
    /// # Errors
    /// A line that is not a key of the funnel (`long`, `int`: not a decimal integer in
    /// range), or a funnel Spark has no keys for (`chars`).
    pub fn contains_batch(
        &self,
        lines: &[&str],
        funnel: Funnel,
        out: &mut Vec<bool>,
    ) -> Result<(), CliError> {
        match self {
            JvmFilter::Guava(f) => {
                let kind = funnel.guava();
                let hashes = lines
                    .iter()
                    .map(|line| kind.hash_text(line))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| CliError::new(e.to_string()))?;
                f.contains_hash_batch(hashes, out);
            }
            JvmFilter::Spark(f) => {
                match funnel {
                    Funnel::Utf8 | Funnel::Bytes => f.contains_batch(lines.iter().copied(), out),
                    Funnel::Long | Funnel::Int => {
                        let keys = lines
                            .iter()
                            .map(|line| {
                                let (parsed, name) = if funnel == Funnel::Int {
                                    (line.trim().parse::<i32>().map(i64::from), "int")
                                } else {
                                    (line.trim().parse::<i64>(), "long")
                                };
                                parsed.map_err(|_| {
                                    CliError::new(format!(
                                        "{line:?} is not a decimal {name} (--funnel {name})"
                                    ))
                                })
                            })
                            .collect::<Result<Vec<i64>, _>>()?;
                        f.contains_batch(&keys, out);
                    }
                    Funnel::Chars => return Err(CliError::new(
                        "--funnel chars is Guava's UTF-16 funnel; Spark hashes strings as UTF-8 \
                         (--funnel utf8) and integers as long (--funnel long)",
                    )),
                }
            }
        }
        Ok(())
    }

    /// `info`'s lines.
    pub fn describe(&self) -> Vec<Line> {
        use serde_json::Value;
        let float = |x: f64| serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number);
        let (format, strategy, k, bits, ones, items, rate) = match self {
            JvmFilter::Guava(f) => (
                "Guava BloomFilter (writeTo bytes)".to_string(),
                format!("{} (ordinal {})", f.strategy(), f.strategy().ordinal()),
                f.num_hash_functions(),
                f.bit_size(),
                f.bit_count(),
                f.approximate_element_count(),
                f.expected_fpp(),
            ),
            JvmFilter::Spark(f) => (
                format!("Spark sketch BloomFilter, version {}", f.version().number()),
                format!(
                    "Spark's MurmurHash3 x86_32, {} positions, seed {}",
                    match f.version() {
                        bloomkit::jvm::spark::Version::V1 => "32-bit",
                        bloomkit::jvm::spark::Version::V2 => "64-bit",
                    },
                    f.seed()
                ),
                f.num_hash_functions(),
                f.bit_size(),
                f.cardinality(),
                f.approximate_element_count(),
                f.expected_fpp(),
            ),
        };
        let fill = ones as f64 / bits as f64;
        let (json_format, keys) = match self {
            JvmFilter::Guava(_) => (
                "guava",
                "not recorded (Guava's funnel is not in the bytes): `bloomkit query` needs \
                 --funnel",
            ),
            JvmFilter::Spark(_) => (
                "spark",
                "not recorded (strings, byte arrays and integers hash differently): `bloomkit \
                 query` needs --funnel",
            ),
        };
        vec![
            ("format", format, vec![("format", json_format.into())]),
            (
                "strategy",
                strategy.clone(),
                vec![("strategy", strategy.into())],
            ),
            ("hashes (k)", k.to_string(), vec![("hashes", k.into())]),
            ("bits", bits.to_string(), vec![("bits", bits.into())]),
            (
                "fill",
                format!("{fill:.4} ({ones} of {bits} bits set)"),
                vec![("fill", float(fill)), ("bits_set", ones.into())],
            ),
            // Every bit set: the estimate is infinite (Guava throws).
            if ones == bits {
                (
                    "estimated items",
                    "none: every bit is set (it answers \"present\" for every key)".to_string(),
                    vec![("estimated_items", Value::Null)],
                )
            } else {
                (
                    "estimated items",
                    super::commands::thousands(items),
                    vec![("estimated_items", items.into())],
                )
            },
            (
                "estimated rate",
                format!("{rate:.6} (expectedFpp: (bits set / bits)^k)"),
                vec![("estimated_rate", float(rate))],
            ),
            (
                "checksums",
                "none in the JVM's bytes".to_string(),
                vec![
                    ("header_checksum_ok", Value::Null),
                    ("payload_checksum_ok", Value::Null),
                ],
            ),
            (
                "read as",
                "decoded into memory".to_string(),
                vec![("read_as", "decoded".into())],
            ),
            ("keys", keys.to_string(), vec![("keys", "str".into())]),
        ]
    }
}
