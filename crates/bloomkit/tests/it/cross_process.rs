//! A filter written in one process answers identically in another: this test process and
//! the separately spawned `filter-tool` example binary exchange filters through files, in
//! both directions, and compare answers key by key.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use bloomkit::BloomFilter;

/// The `filter-tool` example, which `cargo test` builds next to this test's binary.
fn tool() -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target dir");
    let path = dir
        .join("examples")
        .join(format!("filter-tool{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} is missing: build the examples with `cargo test` (or `cargo build --examples`)",
        path.display()
    );
    path
}

fn keys(range: std::ops::Range<u64>) -> Vec<String> {
    range
        .map(|i| format!("https://host{}.example/path/{i}", i % 97))
        .collect()
}

fn run(args: &[&str], stdin_keys: &[String]) -> Vec<u8> {
    let mut child = Command::new(tool())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn filter-tool");
    let mut stdin = child.stdin.take().unwrap();
    let input = stdin_keys.join("\n");
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("filter-tool output");
    writer.join().unwrap().unwrap();
    assert!(
        out.status.success(),
        "filter-tool {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("bloomkit-cross-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

#[test]
fn written_here_read_there() {
    let members = keys(0..5_000);
    let probes = keys(0..20_000); // the first 5,000 are members
    let mut filter = BloomFilter::builder(5_000, 0.01)
        .seed(0xfeed)
        .build()
        .unwrap();
    for k in &members {
        filter.insert(k.as_str());
    }
    let file = scratch("here.blmk");
    std::fs::write(&file, filter.to_bytes()).unwrap();

    let answers = run(&["query", file.to_str().unwrap()], &probes);
    let answers: Vec<bool> = String::from_utf8(answers)
        .unwrap()
        .lines()
        .map(|l| l == "1")
        .collect();
    assert_eq!(answers.len(), probes.len());
    let mut positives = 0;
    for (k, there) in probes.iter().zip(&answers) {
        assert_eq!(filter.contains(k.as_str()), *there, "answers differ on {k}");
        if *there {
            positives += 1; // not `usize::from(flag)`: rust-lang/rust#158206
        }
    }
    assert!(
        answers[..5_000].iter().all(|&a| a),
        "a member was lost in transit"
    );
    // Sanity: the other process is not answering "yes" to everything.
    assert!(positives < 5_000 + 400, "{positives} positives");
}

#[test]
fn written_there_read_here() {
    let members = keys(100_000..103_000);
    let file = scratch("there.blmk");
    run(
        &["build", file.to_str().unwrap(), "3000", "0.001", "77"],
        &members,
    );
    let bytes = std::fs::read(&file).unwrap();
    let filter = BloomFilter::from_bytes(&bytes).unwrap();

    let mut expected = BloomFilter::builder(3_000, 0.001).seed(77).build().unwrap();
    for k in &members {
        expected.insert(k.as_str());
    }
    assert_eq!(
        filter, expected,
        "the other process built a different filter"
    );
    assert!(members.iter().all(|k| filter.contains(k.as_str())));
}

#[test]
fn the_tool_reports_bad_files_clearly() {
    let file = scratch("garbage.blmk");
    std::fs::write(&file, b"definitely not a filter").unwrap();
    let out = Command::new(tool())
        .args(["query", file.to_str().unwrap()])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a bloomkit filter"), "{err}");
}
