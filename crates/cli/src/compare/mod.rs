//! `cargo xtask compare`: measure every bloomkit structure, and `std`'s `HashSet` as the exact
//! baseline, on a workload (synthetic, or the user's own keys and queries), and recommend
//! one, with the numbers behind the choice.
//!
//! ```text
//! cargo xtask compare                                  # 1,000,000 u64 keys at 1%
//! cargo xtask compare --keys dense --density 0.8
//! cargo xtask compare --keys-file words.txt --queries-file queries.txt --json
//! cargo xtask compare --deletes 0.3 --plot memory.svg --lookup-plot speed.svg
//! ```

pub mod budget;
pub mod measure;
pub mod recommend;
pub mod records;
pub mod report;
pub mod shared;
pub mod window;
pub mod workload;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use measure::{measure_all, measure_bitmap, Sizing, STRUCTURES};
use recommend::{recommend, Needs};
use report::Report;
use workload::{KeyKind, Keys, Synthetic};

/// Every structure's row for `data`: the in-process ones, then the shared filters'
/// (against the Redis server at `redis`, if given).
fn every_row<K>(
    data: &workload::Data<K>,
    sizing: Sizing,
    bitmap: Option<measure::Row>,
    redis: Option<&str>,
    progress: &mut dyn FnMut(&str),
) -> Vec<measure::Row>
where
    K: std::hash::Hash
        + Eq
        + Clone
        + measure::HeapSize
        + measure::AsParquet
        + measure::AsJvm
        + shared::KeyBytes
        + Send
        + Sync,
{
    let mut rows = measure_all(data, sizing, bitmap, &mut *progress);
    progress("shared filters (Redis)");
    rows.extend(shared::measure_shared(data, sizing, redis));
    rows
}

/// The flags of `cargo xtask compare`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Number of distinct keys to insert (synthetic workloads).
    #[arg(long, default_value_t = 1_000_000)]
    pub items: usize,
    /// Target false-positive rate, in (0, 1).
    #[arg(long, default_value_t = 0.01)]
    pub fpr: f64,
    /// Kind of keys: u64, string, or dense (integers in a range). With --keys-file the
    /// default is string.
    #[arg(long, value_enum)]
    pub keys: Option<KeyKind>,
    /// For --keys dense: the share of the range that holds keys, in (0, 1].
    #[arg(long, default_value_t = 0.8)]
    pub density: f64,
    /// For --keys records: fields per record, in 2..=12.
    #[arg(long, default_value_t = 3)]
    pub attributes: usize,
    /// Length of synthetic string keys.
    #[arg(long, default_value_t = 24)]
    pub string_len: usize,
    /// Number of queries (synthetic, or when no --queries-file is given).
    #[arg(long, default_value_t = 1_000_000)]
    pub queries: usize,
    /// Share of queries that are members, in [0, 1].
    #[arg(long, default_value_t = 0.5)]
    pub member_share: f64,
    /// Your keys: one per line.
    #[arg(long)]
    pub keys_file: Option<PathBuf>,
    /// Your queries: one per line; those that are not keys measure the false-positive rate
    /// on your data.
    #[arg(long)]
    pub queries_file: Option<PathBuf>,
    /// Share of the keys removed after insertion, in [0, 1): only structures that delete
    /// can serve.
    #[arg(long, default_value_t = 0.0)]
    pub deletes: f64,
    /// The item count is not known up front: only structures that grow can serve.
    #[arg(long)]
    pub unknown_size: bool,
    /// The set is fixed once built (an immutable file's keys, a shipped blocklist): static
    /// filters (binary fuse, ribbon) are considered. Assumed for --keys-file workloads
    /// without --deletes or --unknown-size, unless --dynamic says keys come later.
    #[arg(long = "static", conflicts_with = "dynamic")]
    pub static_set: bool,
    /// Keys are inserted after the filter is first used: static filters cannot serve (the
    /// opposite of --static, for --keys-file workloads).
    #[arg(long)]
    pub dynamic: bool,
    /// Concurrent writers: also measure the atomic filters with this many threads inserting
    /// at once, `par_extend` on a pool of this many, and a `Mutex<HashSet>` (wall-clock
    /// build time per key).
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// A Redis server to measure the shared filters against (`redis://host:port`): the
    /// module-free `RedisFilter`, and `RedisBloomFilter` when the server has the module.
    /// Filters are created under unique names and removed afterwards.
    #[arg(long, value_name = "URL")]
    pub redis: Option<String>,
    /// Seed of the synthetic keys and of the hashers.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Only recent keys matter: compare the structures that answer "inserted in the last N
    /// inserts?" on a stream in which keys recur within and beyond the window (the window
    /// filter, two rotating Bloom filters, a counting filter with exact removals, a
    /// `HashMap` of last-seen times). Takes --fpr, --seed, --json.
    #[arg(long, value_name = "N")]
    pub window: Option<u64>,
    /// For --window: steps of the stream (at least 3 N; default 4 N).
    #[arg(long, value_name = "STEPS")]
    pub stream: Option<u64>,
    /// Print JSON instead of the table.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV instead of the table.
    #[arg(long)]
    pub csv: bool,
    /// Also write memory against measured FPR, with the classic curve, to this SVG file.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Also write lookup time against memory to this SVG file.
    #[arg(long)]
    pub lookup_plot: Option<PathBuf>,
}

fn check(args: &Args) -> Result<(), String> {
    if !(args.fpr > 0.0 && args.fpr < 1.0) {
        return Err(format!("--fpr must be in (0, 1), got {}", args.fpr));
    }
    if args.keys_file.is_none() && args.items == 0 {
        return Err("--items must be at least 1".into());
    }
    if !(args.density > 0.0 && args.density <= 1.0) {
        return Err(format!("--density must be in (0, 1], got {}", args.density));
    }
    if !(0.0..=1.0).contains(&args.member_share) {
        return Err(format!(
            "--member-share must be in [0, 1], got {}",
            args.member_share
        ));
    }
    if !(0.0..1.0).contains(&args.deletes) {
        return Err(format!("--deletes must be in [0, 1), got {}", args.deletes));
    }
    if args.threads == 0 || args.threads > 1024 {
        return Err(format!(
            "--threads must be in 1..=1024, got {}",
            args.threads
        ));
    }
    if args.string_len == 0 {
        return Err("--string-len must be at least 1".into());
    }
    if args.string_len > budget::MAX_KEY_BYTES {
        return Err(format!(
            "--string-len must be at most {}, got {}",
            budget::MAX_KEY_BYTES,
            args.string_len
        ));
    }
    if args.queries_file.is_some() && args.keys_file.is_none() {
        return Err(
            "--queries-file needs --keys-file (queries are judged against your keys)".into(),
        );
    }
    Ok(())
}

/// Runs the comparison and returns the report. `progress` is told each phase.
///
/// # Errors
/// A message for bad flags or unreadable, empty or ill-typed input files.
pub fn run(args: &Args, mut progress: impl FnMut(&str)) -> Result<Report, String> {
    check(args)?;
    let kind = args.keys.unwrap_or(if args.keys_file.is_some() {
        KeyKind::String
    } else {
        KeyKind::U64
    });
    let synthetic = Synthetic {
        kind,
        items: args.items,
        queries: args.queries,
        member_share: args.member_share,
        density: args.density,
        string_len: args.string_len,
        deletes: args.deletes,
        seed: args.seed,
        filter_bits_per_key: -args.fpr.ln() / (std::f64::consts::LN_2 * std::f64::consts::LN_2),
    };
    if kind == KeyKind::Records {
        return run_records(args, &mut progress);
    }
    progress("preparing keys and queries");
    let keys = match &args.keys_file {
        Some(path) => workload::from_files(kind, path, args.queries_file.as_deref(), synthetic)?,
        None => {
            let estimate = workload::synthetic_estimate(&synthetic, synthetic.filter_bits_per_key);
            budget::check(&estimate)?;
            workload::synthetic(synthetic)?
        }
    };
    // A set read from a file, never deleted from or grown, is fixed once built: the
    // static filters are candidates unless the user says keys come later.
    let static_set = args.static_set
        || (args.keys_file.is_some() && !args.dynamic && args.deletes == 0.0 && !args.unknown_size);
    let sizing = Sizing {
        fpr: args.fpr,
        unknown_size: args.unknown_size,
        seed: args.seed,
        static_set,
        threads: args.threads,
    };
    let source = match &args.keys_file {
        Some(p) => format!("keys from {}", p.display()),
        None => "synthetic keys".into(),
    };
    let (rows, items, deleted, queries, range) = match &keys {
        Keys::Int(d) => {
            let bitmap = d.range.map(|(lo, hi)| {
                progress(STRUCTURES[5]);
                let bytes = u128::from(hi - lo) / 8 + 1;
                match budget::available_bytes() {
                    Some(have) if bytes > u128::from(have) => measure::Row::cannot(
                        STRUCTURES[5],
                        format!("a bitmap of {lo}..={hi} needs {bytes} bytes, more than available"),
                        true,
                        false,
                        true,
                    ),
                    _ => measure_bitmap(d, lo, hi),
                }
            });
            let rows = every_row(d, sizing, bitmap, args.redis.as_deref(), &mut progress);
            (rows, d.keys.len(), d.deleted, d.queries(), d.range)
        }
        Keys::Str(d) => {
            let rows = every_row(d, sizing, None, args.redis.as_deref(), &mut progress);
            (rows, d.keys.len(), d.deleted, d.queries(), None)
        }
    };
    let mut workload =
        format!("{items} {source} ({kind:?}), target FPR {}", args.fpr).to_lowercase();
    if let Some((lo, hi)) = range {
        workload.push_str(&format!(", range {lo}..={hi}"));
    }
    if deleted > 0 {
        workload.push_str(&format!(", {deleted} deleted after insertion"));
    }
    if args.unknown_size {
        workload.push_str(", item count unknown up front");
    }
    if args.threads > 1 {
        workload.push_str(&format!(", {} writer threads", args.threads));
    }
    if let Some(url) = &args.redis {
        workload.push_str(&format!(", shared through Redis at {url}"));
    }
    if static_set {
        workload.push_str(if args.static_set {
            ", a fixed set (--static)"
        } else {
            ", a fixed set (keys from a file, none deleted or added: --dynamic if keys come later)"
        });
    }
    let needs = Needs {
        dense: kind == KeyKind::Dense,
        records: false,
        deletes: deleted > 0,
        unknown_size: args.unknown_size,
        static_set,
        threads: args.threads,
        shared: args.redis.is_some(),
        fpr: args.fpr,
        member_share: queries.0 as f64 / (queries.0 + queries.1).max(1) as f64,
        non_members: queries.1 as u64,
    };
    let mut rows = rows;
    for row in &mut rows {
        row.misses_target = recommend::misses_target(row, &needs);
    }
    let recommendation = recommend(&rows, &needs);
    Ok(Report {
        workload,
        items: items as u64,
        deleted: deleted as u64,
        queries: (queries.0 as u64, queries.1 as u64),
        needs,
        optimized: !cfg!(debug_assertions),
        rows,
        recommendation,
    })
}

/// The records workload: its own keys, rows and rule.
fn run_records(args: &Args, progress: &mut impl FnMut(&str)) -> Result<Report, String> {
    if args.keys_file.is_some() {
        return Err(workload::RECORDS_FROM_FILES.into());
    }
    if args.deletes > 0.0
        || args.unknown_size
        || args.static_set
        || args.threads > 1
        || args.redis.is_some()
    {
        return Err("--keys records measures inserts and three kinds of queries: it does not combine with --deletes, --unknown-size, --static, --threads or --redis".into());
    }
    // Each record: its fields (a shared string of ~12 bytes and its 16-byte pointer).
    budget::check(&budget::Estimate {
        items: (args.items as u128) * (args.attributes as u128).max(1),
        key_bytes: 28,
        strings: true,
        queries: 3 * args.queries as u128 * 2,
        range: 0,
        filter_bits_per_key: 3.0 * -args.fpr.ln()
            / (std::f64::consts::LN_2 * std::f64::consts::LN_2),
    })?;
    progress("preparing records and queries");
    let data = records::synthetic(
        args.items,
        args.attributes,
        args.queries,
        args.member_share,
        args.seed,
    )?;
    let sizing = Sizing {
        fpr: args.fpr,
        unknown_size: false,
        seed: args.seed,
        static_set: false,
        threads: 1,
    };
    let rows = records::measure_all(&data, sizing, &mut *progress);
    let per_kind = data.kinds[0].members.len() + data.kinds[0].non_members.len();
    let needs = Needs {
        dense: false,
        records: true,
        deletes: false,
        unknown_size: false,
        static_set: false,
        threads: 1,
        shared: false,
        fpr: args.fpr,
        member_share: args.member_share,
        non_members: data.kinds[0].non_members.len() as u64,
    };
    let mut rows = rows;
    for row in &mut rows {
        row.misses_target = recommend::misses_target(row, &needs);
    }
    let recommendation = recommend(&rows, &needs);
    Ok(Report {
        workload: format!(
            "{} synthetic records of {} fields (distinct values per field: {}), asked by record, by field 1 and by fields 0+1 ({per_kind} queries each), target fpr {}",
            args.items,
            args.attributes,
            data.distinct.iter().map(u64::to_string).collect::<Vec<_>>().join(", "),
            args.fpr
        ),
        items: args.items as u64,
        deleted: 0,
        queries: (
            data.kinds[0].members.len() as u64,
            data.kinds[0].non_members.len() as u64,
        ),
        needs,
        optimized: !cfg!(debug_assertions),
        rows,
        recommendation,
    })
}

/// `cargo xtask compare`: runs, prints, and exits 0, or 2 with a message on bad input, or 1
/// if any structure had false negatives.
pub fn main(args: &Args) -> ExitCode {
    if let Some(window) = args.window {
        return window_main(args, window);
    }
    let bar = ProgressBar::with_draw_target(
        Some(STRUCTURES.len() as u64 + 2 + if args.threads > 1 { 5 } else { 0 }),
        ProgressDrawTarget::stderr(),
    );
    if !std::io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let result = run(args, |phase| {
        bar.set_message(phase.to_owned());
        bar.inc(1);
    });
    bar.finish_and_clear();
    let report = match result.map_err(refused) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let text = if args.json {
        format!("{}\n", report.json())
    } else if args.csv {
        report.csv()
    } else {
        report.table()
    };
    if let Err(code) = print(&text) {
        return code;
    }
    type Draw = fn(&Report, &std::path::Path) -> Result<(), String>;
    let plots: [(Option<&PathBuf>, Draw); 2] = [
        (args.plot.as_ref(), Report::plot),
        (args.lookup_plot.as_ref(), Report::lookup_plot),
    ];
    for (path, draw) in plots {
        if let Some(path) = path {
            if let Err(e) = draw(&report, path) {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
            eprintln!("plot written to {}", path.display());
        }
    }
    if report.defects().is_empty() {
        ExitCode::SUCCESS
    } else {
        for d in report.defects() {
            eprintln!(
                "DEFECT: {} had {} false negatives",
                d.structure, d.false_negatives
            );
        }
        ExitCode::from(1)
    }
}

/// Bad input: the message, exit code 2.
fn refused(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(2)
}

/// Writes the report to stdout; a reader that stops early (`| head`) has what it wanted, not
/// an error. Any other failure is exit code 2, after a message.
fn print(text: &str) -> Result<(), ExitCode> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            eprintln!("error: stdout: {e}");
            Err(ExitCode::from(2))
        }
        _ => Ok(()),
    }
}

/// `compare --window N`: the windowed structures on a stream; exit 0, 2 on bad input, 1 if
/// any had false negatives.
fn window_main(args: &Args, n: u64) -> ExitCode {
    if let Err(code) = check(args).map_err(refused) {
        return code;
    }
    if args.keys_file.is_some() || args.csv || args.plot.is_some() || args.lookup_plot.is_some() {
        eprintln!("error: --window measures a synthetic stream of u64 keys, as a table or --json: it does not take --keys-file, --csv or plots");
        return ExitCode::from(2);
    }
    let steps = args.stream.unwrap_or(n.saturating_mul(4));
    let mut progress = |phase: &str| eprintln!("{phase} ...");
    let report = match window::run(n, steps, args.fpr, args.seed, &mut progress).map_err(refused) {
        Ok(r) => r,
        Err(code) => return code,
    };
    if let Err(code) = print(&if args.json {
        report.json() + "\n"
    } else {
        report.table()
    }) {
        return code;
    }
    let defects = report.defects();
    for d in &defects {
        eprintln!(
            "DEFECT: {} had {} false negatives",
            d.structure, d.false_negatives
        );
    }
    if defects.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

#[cfg(test)]
mod layout {
    use std::collections::BTreeMap;

    /// The picker's modules import one another without a circle (docs/architecture.md):
    /// each `super::name` a module's code (not its docs) names is an edge, and a walk from
    /// every module never comes back to it.
    #[test]
    fn the_pickers_modules_import_without_a_circle() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/compare");
        let mut edges: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&path).unwrap();
            let mut to: Vec<String> = text
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .flat_map(|l| l.match_indices("super::").map(move |(i, _)| &l[i + 7..]))
                .map(|rest| {
                    rest.chars()
                        .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                        .collect::<String>()
                })
                .filter(|m| !m.is_empty() && dir.join(format!("{m}.rs")).exists())
                .collect();
            to.sort();
            to.dedup();
            edges.insert(name, to);
        }
        assert!(edges.len() >= 8, "{edges:?}");
        fn reaches(
            edges: &BTreeMap<String, Vec<String>>,
            from: &str,
            goal: &str,
            seen: &mut Vec<String>,
        ) -> bool {
            for next in edges.get(from).into_iter().flatten() {
                if next == goal {
                    return true;
                }
                if !seen.contains(next) {
                    seen.push(next.clone());
                    if reaches(edges, next, goal, seen) {
                        return true;
                    }
                }
            }
            false
        }
        for module in edges.keys() {
            assert!(
                !reaches(&edges, module, module, &mut Vec::new()),
                "compare/{module}.rs imports itself through a circle: {edges:?}"
            );
        }
    }
}
