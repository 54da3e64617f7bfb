//! Replays the fuzz targets' seeds (the golden files) and every input a fuzzer ever found
//! a failure with (`fuzz/regressions/<target>/`) through the targets' own checks, so that
//! each finding stays a regression test on stable Rust. (The fuzzing itself:
//! `cargo xtask fuzz`, nightly.)

// The fuzz crate's library, as a module here: its `pub` items are for the fuzz targets.
#[allow(unreachable_pub)]
#[path = "../../../../fuzz/src/checks.rs"]
mod checks;

use std::path::{Path, PathBuf};

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| Some(e.ok()?.path())).collect())
        .unwrap_or_default();
    found.sort();
    // Subdirectories' files too (the regression inputs kept beside the golden files).
    found
        .into_iter()
        .flat_map(|p| if p.is_dir() { files(&p) } else { vec![p] })
        .collect()
}

#[test]
fn seeds_and_regressions_pass_every_check() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let seeds: Vec<PathBuf> = [
        "tests/data/v1",
        "tests/data/v2",
        "tests/data/v3",
        "../redis/tests/data",
        "../jvm/tests/data/spark",
    ]
    .iter()
    .flat_map(|d| files(&root.join(d)))
    .collect();
    assert!(seeds.len() >= 18, "golden files missing");
    let mut regressions = 0;
    for (name, check) in checks::TARGETS {
        for path in &seeds {
            let bytes = std::fs::read(path).unwrap();
            check(&bytes);
            // And a few damaged forms of it.
            for cut in [bytes.len() / 2, bytes.len() - 1] {
                check(&bytes[..cut]);
            }
            let mut flipped = bytes.clone();
            flipped[40] ^= 1;
            check(&flipped);
        }
        for path in files(&root.join("../../fuzz/regressions").join(name)) {
            check(&std::fs::read(&path).unwrap());
            regressions += 1;
        }
    }
    println!("{regressions} regression inputs replayed");
}
