//! Write a filter to a file, or answer queries from one: the other half of the
//! cross-process test, and a small tool in its own right.
//!
//! ```text
//! filter-tool build FILE ITEMS FPR SEED < keys     one key per line
//! filter-tool query FILE < keys                    prints 1 or 0 per key
//! ```

use std::io::{self, BufRead, BufWriter, Write};
use std::process::ExitCode;

use bloomkit::BloomFilter;

fn run(args: &[String]) -> Result<(), String> {
    let stdin = io::stdin().lock();
    match args {
        [cmd, file, items, fpr, seed] if cmd == "build" => {
            let parse = |what: &str, s: &str| format!("{what} {s:?} is not a number");
            let items = items.parse().map_err(|_| parse("ITEMS", items))?;
            let fpr = fpr.parse().map_err(|_| parse("FPR", fpr))?;
            let seed = seed.parse().map_err(|_| parse("SEED", seed))?;
            let mut filter = BloomFilter::builder(items, fpr)
                .seed(seed)
                .build()
                .map_err(|e| e.to_string())?;
            for line in stdin.lines() {
                filter.insert(line.map_err(|e| e.to_string())?.as_str());
            }
            std::fs::write(file, filter.to_bytes()).map_err(|e| format!("{file}: {e}"))
        }
        [cmd, file] if cmd == "query" => {
            let bytes = std::fs::read(file).map_err(|e| format!("{file}: {e}"))?;
            let filter =
                BloomFilter::<str>::from_bytes(&bytes).map_err(|e| format!("{file}: {e}"))?;
            let mut out = BufWriter::new(io::stdout().lock());
            for line in stdin.lines() {
                let hit = filter.contains(line.map_err(|e| e.to_string())?.as_str());
                writeln!(out, "{}", u8::from(hit)).map_err(|e| e.to_string())?;
            }
            out.flush().map_err(|e| e.to_string())
        }
        _ => Err(
            "usage: filter-tool build FILE ITEMS FPR SEED < keys | filter-tool query FILE < keys"
                .into(),
        ),
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
