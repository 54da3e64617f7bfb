//! Guava's own lookups beside bloomkit's on the same Guava file, in one run (the JVM issue's
//! target: faster one at a time, at least 3x batched).
//!
//! ```text
//! cargo run --release -p bloomkit-benches --example jvm
//! BLOOMKIT_JVM_N=1000000 cargo run --release -p bloomkit-benches --example jvm
//! ```
//!
//! Needs `javac`, `java` and Guava (`/usr/share/java/guava.jar`, or `BLOOMKIT_GUAVA_JAR`).
//! For each funnel (`long`, `utf8` strings) and strategy: a filter of `N` keys (10^7 by
//! default) at 1% is written in Guava's bytes (bloomkit writes the same bytes Guava does,
//! `crates/jvm/tests/guava.rs`); the Java driver (`crates/jvm/tests/java/GuavaInterop.java`,
//! `time` mode) reads it with `BloomFilter.readFrom` and times `mightContain` over `N` keys,
//! half present and half absent, interleaved (keys made before the clock starts, the best
//! of 3 passes after the JIT has warmed in the first); bloomkit reads the same file and
//! times the same keys one at a time and through `contains_batch` (best of 3). Ratio =
//! Guava's time / bloomkit's: above 1, bloomkit is faster.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use bloomkit::jvm::guava::{funnel, Funnel, GuavaBloomFilter, Strategy};

fn text(i: u64) -> String {
    format!("key-{i}{}", ["", "-\u{e9}", "-\u{1f511}"][(i % 3) as usize])
}

fn long_key(i: u64) -> i64 {
    i.wrapping_mul(0x9E37_79B9_7F4A_7C15) as i64
}

/// The driver's key order: present and absent interleaved.
fn order(n: u64) -> impl Iterator<Item = u64> {
    (0..n).map(move |i| if i % 2 == 0 { i / 2 } else { n + i / 2 })
}

fn best_of_3(n: u64, mut run: impl FnMut() -> usize) -> (f64, usize) {
    let mut best = f64::MAX;
    let mut hits = 0;
    for _ in 0..3 {
        let start = Instant::now();
        hits = run();
        best = best.min(start.elapsed().as_nanos() as f64 / n as f64);
    }
    (best, hits)
}

/// bloomkit's one-at-a-time and batched ns per lookup on the file, and the hits.
fn ours<F: Funnel>(file: &Path, keys: &[&F::Key]) -> (f64, f64, usize) {
    let f = GuavaBloomFilter::<F>::from_bytes(&std::fs::read(file).unwrap()).unwrap();
    let n = keys.len() as u64;
    let (single, hits) = best_of_3(n, || keys.iter().filter(|k| f.might_contain(k)).count());
    let mut out = Vec::with_capacity(keys.len());
    let (batched, batch_hits) = best_of_3(n, || {
        out.clear();
        f.contains_batch(keys.iter().copied(), &mut out);
        out.iter().filter(|&&b| b).count()
    });
    assert_eq!(hits, batch_hits);
    (single, batched, hits)
}

fn main() {
    let n: u64 = std::env::var("BLOOMKIT_JVM_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000_000);
    let jar = std::env::var_os("BLOOMKIT_GUAVA_JAR")
        .map_or_else(|| PathBuf::from("/usr/share/java/guava.jar"), PathBuf::from);
    let dir = std::env::temp_dir().join(format!("bloomkit-jvm-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let source =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/jvm/tests/java/GuavaInterop.java");
    let javac = Command::new("javac")
        .arg("-cp")
        .arg(&jar)
        .arg("-d")
        .arg(&dir)
        .arg(source)
        .status();
    if !javac.is_ok_and(|s| s.success()) {
        eprintln!(
            "needs javac, java and Guava at {} (BLOOMKIT_GUAVA_JAR)",
            jar.display()
        );
        std::process::exit(2);
    }
    let java_version = Command::new("java").arg("-version").output().unwrap();
    println!(
        "{} keys a filter at 1%, lookups of {n} keys (half present); ns per lookup; {}",
        n,
        String::from_utf8_lossy(&java_version.stderr)
            .lines()
            .next()
            .unwrap_or("java")
    );
    println!(
        "funnel  strategy           guava   bloomkit  batched   ratio (single)  ratio (batched)"
    );
    let texts: Vec<String> = order(n).map(text).collect();
    let longs: Vec<i64> = order(n).map(long_key).collect();
    for (name, strategy) in [
        ("long", Strategy::Murmur128Mitz64),
        ("utf8", Strategy::Murmur128Mitz64),
        ("long", Strategy::Murmur128Mitz32),
    ] {
        let file = dir.join(format!("{name}-{}.bin", strategy.ordinal()));
        let (single, batched, hits) = if name == "long" {
            let mut f =
                GuavaBloomFilter::<funnel::Long>::create_with_strategy(n, 0.01, strategy).unwrap();
            for i in 0..n {
                f.put(&long_key(i));
            }
            std::fs::write(&file, f.to_bytes()).unwrap();
            drop(f);
            let keys: Vec<&i64> = longs.iter().collect();
            ours::<funnel::Long>(&file, &keys)
        } else {
            let mut f =
                GuavaBloomFilter::<funnel::Utf8String>::create_with_strategy(n, 0.01, strategy)
                    .unwrap();
            for i in 0..n {
                f.put(&text(i));
            }
            std::fs::write(&file, f.to_bytes()).unwrap();
            drop(f);
            let keys: Vec<&str> = texts.iter().map(String::as_str).collect();
            ours::<funnel::Utf8String>(&file, &keys)
        };
        let cp = format!("{}:{}", dir.display(), jar.display());
        let out = Command::new("java")
            .args(["-Xmx8g", "-cp", &cp, "GuavaInterop", "time"])
            .arg(&file)
            .arg(name)
            .arg(n.to_string())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let line = String::from_utf8_lossy(&out.stdout);
        let field = |key: &str| -> f64 {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(key))
                .and_then(|v| v.parse().ok())
                .unwrap()
        };
        let guava = field("ns_per_lookup=");
        assert_eq!(
            field("hits=") as usize,
            hits,
            "Guava and bloomkit answer differently"
        );
        println!(
            "{name:6}  {strategy:17}  {guava:6.1}  {single:8.1}  {batched:7.1}   {:14.2}  {:15.2}",
            guava / single,
            guava / batched
        );
        std::fs::remove_file(&file).unwrap();
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
