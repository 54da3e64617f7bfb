//! The `bloomkit` command end to end: the built binary run as a user runs it, on files in a
//! temporary directory. Every bad input must exit 2 with exactly one line on stderr and no
//! panic.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use bloomkit::prelude::*;

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// The binary started with `args`, its stdin as given and its stdout and stderr piped: for
/// a test that talks to it while it runs.
fn start(args: &[&str], stdin: Stdio) -> Child {
    Command::new(env!("CARGO_BIN_EXE_bloomkit"))
        .args(args)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs")
}

fn bloomkit(args: &[&str], stdin: Option<&[u8]>) -> Run {
    let mut child = start(
        args,
        if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        },
    );
    if let Some(input) = stdin {
        let mut pipe = child.stdin.take().unwrap();
        // A command that stops reading early closes the pipe: not the test's failure.
        let _ = pipe.write_all(input);
    }
    let Output {
        status,
        stdout,
        stderr,
    } = child.wait_with_output().unwrap();
    Run {
        code: status.code(),
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Exit 2, one line on stderr starting `error:` and containing `needle`, no panic.
#[track_caller]
fn bad(args: &[&str], stdin: Option<&[u8]>, needle: &str) {
    let r = bloomkit(args, stdin);
    assert_eq!(r.code, Some(2), "{args:?}: {}", r.stderr);
    assert!(!r.stderr.contains("panicked"), "{args:?}: {}", r.stderr);
    assert_eq!(r.stderr.lines().count(), 1, "{args:?}: {}", r.stderr);
    assert!(r.stderr.starts_with("error: "), "{args:?}: {}", r.stderr);
    assert!(
        r.stderr.contains(needle),
        "{args:?}: {} (wanted {needle})",
        r.stderr
    );
}

/// [`bad`] for each case: its arguments (nothing on stdin) and the text its error must hold.
#[track_caller]
fn bad_each(cases: &[(&[&str], &str)]) {
    for (args, needle) in cases {
        bad(args, None, needle);
    }
}

/// Exit 0, with stderr in the message otherwise: the run, for what it printed.
#[track_caller]
fn ok(args: &[&str], stdin: Option<&[u8]>) -> Run {
    let r = bloomkit(args, stdin);
    assert_eq!(r.code, Some(0), "{args:?}: {}", r.stderr);
    r
}

/// `build keys -o out` with `extra` flags, which must succeed: the run.
#[track_caller]
fn build(keys: &Path, out: &Path, extra: &[&str]) -> Run {
    let mut args = vec!["build", s(keys), "-o", s(out)];
    args.extend_from_slice(extra);
    ok(&args, None)
}

fn key(i: u64) -> String {
    format!("https://example.com/page/{i}")
}

fn keys_file(dir: &Path, name: &str, keys: impl Iterator<Item = u64>) -> PathBuf {
    let path = dir.join(name);
    let text: String = keys.map(|i| key(i) + "\n").collect();
    std::fs::write(&path, text).unwrap();
    path
}

const VARIANTS: [&str; 12] = [
    "classic",
    "blocked",
    "simd-block",
    "split-block",
    "counting",
    "scalable",
    "quotient",
    "expandable",
    "binary-fuse8",
    "binary-fuse16",
    "binary-fuse32",
    "ribbon",
];

#[test]
fn every_subcommand_answers_help() {
    for sub in [
        &[][..],
        &["build"],
        &["query"],
        &["info"],
        &["merge"],
        &["convert"],
        &["compare"],
    ] {
        let mut args = sub.to_vec();
        args.push("--help");
        let r = bloomkit(&args, None);
        assert_eq!(r.code, Some(0), "{args:?}: {}", r.stderr);
        assert!(
            r.stdout.contains("Usage: bloomkit"),
            "{args:?}: {}",
            r.stdout
        );
    }
    let r = bloomkit(&["--version"], None);
    assert_eq!(r.code, Some(0));
}

/// Every variant built from a file and from stdin answers every key present (exit 0), the
/// absent keys mostly absent (exit 1), and `info` describes it with its checksums checked.
#[test]
fn every_variant_builds_queries_and_describes_itself() {
    let dir = tempfile::tempdir().unwrap();
    // 4,097 keys: one past a chunk of the batched reads and lookups.
    let members = keys_file(dir.path(), "keys.txt", 0..4_097);
    let strangers = keys_file(dir.path(), "others.txt", 1_000_000..1_004_000);
    let text = std::fs::read(&members).unwrap();
    for variant in VARIANTS {
        let out = dir.path().join(format!("{variant}.blmk"));
        build(&members, &out, &["--variant", variant]);
        let from_stdin = dir.path().join(format!("{variant}-stdin.blmk"));
        ok(
            &["build", "-o", s(&from_stdin), "--variant", variant],
            Some(&text),
        );
        assert_eq!(
            std::fs::read(&out).unwrap(),
            std::fs::read(&from_stdin).unwrap(),
            "{variant}: the same keys from a file and from stdin"
        );
        let r = bloomkit(&["query", s(&out), "-q"], Some(&text));
        assert_eq!(r.code, Some(0), "{variant}: a member reported absent");
        assert!(r.stdout.is_empty());
        let r = bloomkit(
            &["query", s(&out), "--present"],
            Some(&std::fs::read(&strangers).unwrap()),
        );
        assert_eq!(r.code, Some(1), "{variant}: {}", r.stderr);
        // 4,000 absent keys at 1% (binary fuse 8: 0.4%): 40 expected; 100 is 9 sigma.
        let false_positives = r.stdout.lines().count();
        assert!(
            false_positives < 100,
            "{variant}: {false_positives} false positives"
        );
        let r = ok(&["info", s(&out)], None);
        assert!(r.stdout.contains("payload ok"), "{variant}: {}", r.stdout);
        assert!(
            r.stdout.contains("estimated items"),
            "{variant}: {}",
            r.stdout
        );
        let r = bloomkit(&["info", s(&out), "--json", "--no-mmap"], None);
        let json: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        // Typed values: what a script compares without parsing display strings.
        assert!(json["variant"].is_string(), "{json}");
        assert!(json["variant_tag"].is_u64(), "{json}");
        assert_eq!(
            json["size_bytes"].as_u64(),
            Some(std::fs::metadata(&out).unwrap().len()),
            "{json}"
        );
        let items = json["estimated_items"].as_u64().expect("a count");
        assert!((3_000..=6_000).contains(&items), "{variant}: {json}");
        let rate = json["estimated_rate"].as_f64().expect("a rate");
        assert!((0.0..0.1).contains(&rate), "{variant}: {json}");
        if let Some(p) = json.get("target_rate") {
            assert!(p.as_f64().is_some_and(|p| p > 0.0 && p < 0.05), "{json}");
        }
        assert_eq!(json["payload_checksum_ok"], serde_json::Value::Bool(true));
    }
}

/// The files answer as the library's filters of `str` keys do (the same hash and layout).
#[test]
fn files_answer_as_the_library_does() {
    let dir = tempfile::tempdir().unwrap();
    let members = keys_file(dir.path(), "keys.txt", 0..1_000);
    let out = dir.path().join("f.blmk");
    build(&members, &out, &["--items", "1000", "--seed", "7"]);
    let mut f = BlockedBloomFilter::<str>::builder(1_000, 0.01)
        .seed(7)
        .build()
        .unwrap();
    for i in 0..1_000 {
        f.insert(&key(i));
    }
    assert_eq!(std::fs::read(&out).unwrap(), f.to_bytes());
}

#[test]
fn query_output_and_exit_status() {
    let dir = tempfile::tempdir().unwrap();
    let members = keys_file(dir.path(), "keys.txt", 0..100);
    let out = dir.path().join("f.blmk");
    build(&members, &out, &["--fpr", "0.0001"]);
    let (a, b) = (key(1), key(2));
    let r = bloomkit(&["query", s(&out), &a, &b], None);
    assert_eq!(r.code, Some(0));
    assert_eq!(r.stdout, format!("present\t{a}\npresent\t{b}\n"));
    let r = bloomkit(&["query", s(&out), &a, "not-a-member"], None);
    assert_eq!(r.code, Some(1));
    assert_eq!(r.stdout, format!("present\t{a}\nabsent\tnot-a-member\n"));
    // Arguments are keys as given: `a\r` is another key than `a`.
    let r = bloomkit(&["query", s(&out), &format!("{a}\r"), "-q"], None);
    assert_eq!(r.code, Some(1));
    let r = bloomkit(&["query", s(&out), "--absent"], Some(b"x\r\ny\n\n"));
    assert_eq!((r.code, r.stdout.as_str()), (Some(1), "x\ny\n"));
    // A reader that stops early (`| head -1`) is not an error, and the status still counts.
    let many: String = (0..200_000).map(|i| format!("absent-{i}\n")).collect();
    let mut child = start(&["query", s(&out)], Stdio::piped());
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(many.as_bytes());
    });
    let mut first = [0u8; 16];
    std::io::Read::read_exact(child.stdout.as_mut().unwrap(), &mut first).unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn merged_partitions_answer_every_key_of_each() {
    let dir = tempfile::tempdir().unwrap();
    // The variants with a union, as the one list of variants says.
    let unions = VARIANTS
        .iter()
        .filter(|v| bloomkit::core::Variant::from_command_name(v).is_some_and(|v| v.facts().union));
    assert_eq!(unions.clone().count(), 7, "the variants that merge");
    for &variant in unions {
        let r = merge_partitions(dir.path(), variant, 1_000, 3_000);
        assert_eq!(
            r.code,
            Some(0),
            "{variant}: a key of a partition is missing"
        );
    }
}

/// Quotient files each sized for their own keys: their union needs more room, which the
/// merge makes (the filter doubles, as the library's `union_growing` does) and says so.
#[test]
fn a_quotient_merge_that_needs_room_grows_the_filter() {
    let dir = tempfile::tempdir().unwrap();
    let r = merge_partitions(dir.path(), "quotient", 3_000, 3_000);
    assert_eq!(r.code, Some(0), "a key of a partition is missing");
}

/// Three partitions of `per_part` keys, each built with `--items items`, merged (the merge
/// must succeed; its stderr is checked for the quotient's growth note when the union needs
/// room), then every key queried: the query's outcome.
fn merge_partitions(dir: &Path, variant: &str, per_part: u64, items: u64) -> Run {
    let items = items.to_string();
    let mut parts = Vec::new();
    for p in 0..3u64 {
        let keys = keys_file(
            dir,
            &format!("{variant}-p{p}.txt"),
            p * per_part..(p + 1) * per_part,
        );
        let out = dir.join(format!("{variant}-{p}.blmk"));
        build(&keys, &out, &["--variant", variant, "--items", &items]);
        parts.push(out);
    }
    let merged = dir.join(format!("{variant}-all.blmk"));
    let mut args = vec!["merge", "-o", s(&merged)];
    args.extend(parts.iter().map(|p| s(p)));
    let r = ok(&args, None);
    if 3 * per_part > items.parse::<u64>().unwrap() && variant == "quotient" {
        assert!(r.stderr.contains("doubled"), "{}", r.stderr);
    }
    let all: String = (0..3 * per_part).map(|i| key(i) + "\n").collect();
    bloomkit(&["query", s(&merged), "-q"], Some(all.as_bytes()))
}

#[test]
fn split_block_files_convert_to_parquet_and_back_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let keys = keys_file(dir.path(), "keys.txt", 0..2_000);
    let blmk = dir.path().join("f.blmk");
    let parquet = dir.path().join("f.bloom");
    let again = dir.path().join("g.blmk");
    build(
        &keys,
        &blmk,
        &["--variant", "split-block", "--items", "2000"],
    );
    ok(
        &["convert", s(&blmk), "-o", s(&parquet), "--to", "parquet"],
        None,
    );
    ok(
        &["convert", s(&parquet), "-o", s(&again), "--to", "bloomkit"],
        None,
    );
    let original = SplitBlockFilter::<str>::from_bytes(&std::fs::read(&blmk).unwrap()).unwrap();
    assert_eq!(
        std::fs::read(&parquet).unwrap(),
        original.to_parquet_bytes()
    );
    // The design does not travel through Parquet's bytes; the bits do.
    let back = SplitBlockFilter::<str>::from_bytes(&std::fs::read(&again).unwrap()).unwrap();
    assert_eq!(back.to_bitset(), original.to_bitset());
    let text = std::fs::read(&keys).unwrap();
    ok(&["query", s(&parquet), "-q"], Some(&text));
    let r = bloomkit(&["info", s(&parquet)], None);
    assert!(r.stdout.contains("Parquet"), "{}", r.stdout);
}

#[test]
fn bad_input_exits_2_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let keys = keys_file(d, "keys.txt", 0..500);
    let good = d.join("good.blmk");
    build(&keys, &good, &[]);
    let bytes = std::fs::read(&good).unwrap();
    let write = |name: &str, b: &[u8]| {
        let p = d.join(name);
        std::fs::write(&p, b).unwrap();
        p
    };
    let mut flipped = bytes.clone();
    let at = flipped.len() - 100;
    flipped[at] ^= 0x10;
    let flipped = write("flipped.blmk", &flipped);
    let truncated = write("truncated.blmk", &bytes[..bytes.len() / 2]);
    let noise = write("noise.blmk", &[0x5a; 300]);
    let empty = write("empty.blmk", b"");
    let k = key(1);
    let missing = d.join("missing.blmk");
    let m = d.join("m.blmk");

    // Corrupt files.
    bad_each(&[
        (&["query", s(&flipped), &k], "checksum"),
        (&["info", s(&flipped)], "checksum"),
        (&["query", s(&truncated), &k], "truncated"),
        (&["query", s(&noise), &k], "not a bloomkit filter"),
        (&["query", s(&empty), &k], "is empty"),
        (&["query", s(d), &k], "is a directory"),
        (&["query", s(&missing), &k], "No such file"),
        (
            &["merge", "-o", s(&m), s(&good), s(&truncated)],
            "truncated",
        ),
    ]);
    // --no-verify answers from a payload it did not check, without crashing.
    let r = bloomkit(&["query", s(&flipped), &k, "--no-verify"], None);
    assert!(matches!(r.code, Some(0 | 1)), "{}", r.stderr);

    // Wrong variants and shapes.
    let classic = d.join("classic.blmk");
    let fuse = d.join("fuse.blmk");
    let small = d.join("small.blmk");
    let seeded = d.join("seeded.blmk");
    for (out, extra) in [
        (&classic, &["--variant", "classic"][..]),
        (&fuse, &["--variant", "binary-fuse8"][..]),
        (&small, &["--items", "10"][..]),
        (&seeded, &["--seed", "9"][..]),
    ] {
        build(&keys, out, extra);
    }
    for (a, b, needle) in [
        (&good, &classic, "same variant"),
        (&good, &small, "cannot merge"),
        (&good, &seeded, "cannot merge"),
        (&fuse, &fuse, "no union"),
    ] {
        bad(&["merge", "-o", s(&m), s(a), s(b)], None, needle);
    }
    bad(
        &["convert", s(&classic), "-o", s(&m), "--to", "parquet"],
        None,
        "split-block",
    );
    assert!(!m.exists(), "a failed merge or convert wrote its output");
    // clap's own usage errors: exit 2 and one line too.
    // `build keys -o m` with `extra` flags must fail with `needle`.
    let build_m = |extra: &[&str], needle: &str| {
        bad(
            &[&["build", s(&keys), "-o", s(&m)], extra].concat(),
            None,
            needle,
        );
    };
    build_m(&["--variant", "nonsense"], "possible values");
    bad(&["query"], None, "required");
    build_m(&["--counter-bits", "5"], "not one of 4, 8, 16, 32");
    // A keyed filter's key is not in the file.
    let keyed = {
        let key = bloomkit::core::hash::HashKey::new([7; 16]);
        let mut f = BloomFilter::<str>::builder(100, 0.01)
            .hasher(bloomkit::core::hash::KeyedHasher::new(key))
            .build()
            .unwrap();
        f.insert("a");
        write("keyed.blmk", &f.to_bytes())
    };
    bad(&["query", s(&keyed), "a"], None, "keyed hasher");

    // Empty key lists.
    bad(&["build", "-o", s(&m)], Some(b""), "no keys in stdin");
    let blank = write("blank.txt", b"\n\n\r\n");
    bad(&["build", s(&blank), "-o", s(&m)], None, "no keys in");
    bad(&["query", s(&good)], Some(b""), "no keys to query");
    let bad_utf8 = write("bad-utf8.txt", b"ok\n\xff\n");
    bad(
        &["build", s(&bad_utf8), "-o", s(&m)],
        None,
        "line 2 is not UTF-8",
    );

    // Unwritable outputs, and nothing left behind.
    let under_a_file = keys.join("x.blmk");
    for (out, needle) in [
        (s(&under_a_file), "Not a directory"),
        ("/nonexistent/dir/x.blmk", "No such file"),
        (s(d), "is a directory"),
    ] {
        bad(&["build", s(&keys), "-o", out], None, needle);
    }
    // (Temporary files are `.NAME.XXXXXX.tmp`.)
    assert!(!std::fs::read_dir(d).unwrap().any(|e| e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .ends_with(".tmp")));

    // Bad numbers.
    build_m(&["--fpr", "0"], "--fpr must be in (0, 1)");
    build_m(&["--fpr", "1.5"], "--fpr must be in (0, 1)");
    build_m(&["--items", "0"], "--items must be at least 1");
    build_m(&["--items", "1000000000000000"], "cannot make the filter");
    assert!(!m.exists());
}

/// Files a view cannot use in place (format version 1, written by bloomkit 0.1.0) are
/// decoded instead; a keyed filter's header is still described.
#[test]
fn old_and_keyed_files_are_described() {
    let v1 = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bloomkit/tests/data/v1/classic.bin");
    let r = ok(&["info", s(&v1)], None);
    assert!(
        r.stdout.contains("version 1") && r.stdout.contains("decoded into memory"),
        "{}",
        r.stdout
    );
    let r = bloomkit(&["query", s(&v1), "x"], None);
    assert!(matches!(r.code, Some(0 | 1)), "{}", r.stderr);
    let dir = tempfile::tempdir().unwrap();
    let keyed = dir.path().join("keyed.blmk");
    let key = bloomkit::core::hash::HashKey::new([7; 16]);
    let f = BloomFilter::<str>::builder(100, 0.01)
        .hasher(bloomkit::core::hash::KeyedHasher::new(key))
        .build()
        .unwrap();
    std::fs::write(&keyed, f.to_bytes()).unwrap();
    let r = ok(&["info", s(&keyed)], None);
    assert!(r.stdout.contains("keyed hasher"), "{}", r.stdout);
}

/// A quotient filter that could not grow for a key says so (it answers every key).
#[test]
fn a_saturated_filter_is_described_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("full.blmk");
    let mut f = QuotientFilter::<str>::new(1_000, 0.01).unwrap();
    f.extend((0..150_000u64).map(key));
    assert!(f.is_saturated());
    std::fs::write(&path, f.to_bytes()).unwrap();
    let r = ok(&["info", s(&path)], None);
    assert!(
        r.stdout.contains("saturated") && r.stdout.contains("yes"),
        "{}",
        r.stdout
    );
    let r = ok(&["info", s(&path), "--json"], None);
    assert!(
        r.stdout.contains("\"saturated\": true") || r.stdout.contains("\"saturated\":true"),
        "{}",
        r.stdout
    );
    f.clear();
    std::fs::write(&path, f.to_bytes()).unwrap();
    let r = ok(&["info", s(&path), "--json"], None);
    assert!(
        r.stdout.contains("\"saturated\": false") || r.stdout.contains("\"saturated\":false"),
        "{}",
        r.stdout
    );
}

/// `bloomkit compare | head -1`: the closed pipe ends it quietly, not with a panic.
#[test]
fn compare_into_a_closed_pipe_is_not_a_panic() {
    let mut child = start(
        &["compare", "--items", "2000", "--queries", "2000"],
        Stdio::inherit(),
    );
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    let r = bloomkit(&["compare", "--keys", "records", "--items", "1"], None);
    assert_eq!(r.code, Some(2));
    assert!(r.stderr.contains("at least 16"), "{}", r.stderr);
}

/// No false negative through the command, whatever the keys: random sets of arbitrary
/// strings (any Unicode, tabs, spaces, `\r`; a `\n` splits a key into lines), built by every
/// variant in turn and asked back from stdin and as arguments, against the model of what a
/// line is (a trailing `\r` dropped, empty lines skipped).
#[test]
fn no_false_negative_through_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let case = std::cell::Cell::new(0usize);
    bloomkit_testkit::forall(24, |keys: &Vec<String>| {
        let n = case.get();
        case.set(n + 1);
        let variant = VARIANTS[n % VARIANTS.len()];
        let text: String = keys.iter().map(|k| format!("{k}\n")).collect();
        let model: std::collections::BTreeSet<String> = text
            .split('\n')
            .map(|l| l.strip_suffix('\r').unwrap_or(l).to_owned())
            .filter(|l| !l.is_empty())
            .collect();
        let out = dir.path().join(format!("{n}.blmk"));
        let r = bloomkit(
            &["build", "-o", s(&out), "--variant", variant],
            Some(text.as_bytes()),
        );
        if model.is_empty() {
            return bloomkit_testkit::ensure(r.code == Some(2), || {
                format!("{variant}: no keys, exit {:?}", r.code)
            });
        }
        bloomkit_testkit::ensure(r.code == Some(0), || format!("{variant}: {}", r.stderr))?;
        let r = bloomkit(&["query", s(&out), "--absent"], Some(text.as_bytes()));
        bloomkit_testkit::ensure(r.code == Some(0) && r.stdout.is_empty(), || {
            format!("{variant}: members reported absent: {:?}", r.stdout)
        })?;
        let mut args = vec!["query", s(&out), "-q", "--"];
        // (An argument cannot hold a NUL byte: those keys are asked through stdin only.)
        args.extend(
            model
                .iter()
                .filter(|k| !k.contains('\0'))
                .map(String::as_str),
        );
        if args.len() == 4 {
            return Ok(());
        }
        let r = bloomkit(&args, None);
        bloomkit_testkit::ensure(r.code == Some(0), || {
            format!("{variant}: a member given as an argument reported absent")
        })
    });
}

/// The command never destroys a file it did not make (found by trying, on 7f262d2): an
/// output that is an input, through any name or on stdin, is refused before anything is
/// read; an existing file that holds no filter is replaced only with `--force`; a filter is
/// rebuilt in place.
#[test]
fn no_command_writes_over_an_input_or_a_file_it_did_not_make() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let keys = keys_file(d, "keys.txt", 0..100);
    let original = std::fs::read(&keys).unwrap();
    let unchanged = || assert_eq!(std::fs::read(&keys).unwrap(), original, "keys.txt changed");
    // The output is the input: as given, with --items, with --force, through a link.
    bad(&["build", s(&keys), "-o", s(&keys)], None, "is the input");
    unchanged();
    bad(
        &["build", s(&keys), "-o", s(&keys), "--items", "100"],
        None,
        "is the input",
    );
    bad(
        &["build", s(&keys), "-o", s(&keys), "--force"],
        None,
        "is the input",
    );
    let link = d.join("link.blmk");
    std::os::unix::fs::symlink(&keys, &link).unwrap();
    bad(&["build", s(&keys), "-o", s(&link)], None, "is the input");
    unchanged();
    // Keys on stdin from the output file itself.
    for extra in [&[][..], &["--items", "100"][..]] {
        let out = Command::new(env!("CARGO_BIN_EXE_bloomkit"))
            .args(["build", "-o", s(&keys)])
            .args(extra)
            .stdin(std::fs::File::open(&keys).unwrap())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("standard input"), "{stderr}");
        unchanged();
    }
    // Another file that holds no filter: refused, unless --force.
    let notes = d.join("notes.txt");
    std::fs::write(&notes, "my notes\n").unwrap();
    bad(&["build", s(&keys), "-o", s(&notes)], None, "--force");
    assert_eq!(std::fs::read(&notes).unwrap(), b"my notes\n");
    build(&keys, &notes, &["--force"]);
    // A pipe (or a device) is never replaced by the renamed file.
    let fifo = d.join("fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    bad(
        &["build", s(&keys), "-o", s(&fifo), "--force"],
        None,
        "not a regular file",
    );
    assert!(std::os::unix::fs::FileTypeExt::is_fifo(
        &std::fs::symlink_metadata(&fifo).unwrap().file_type()
    ));
    // An empty file (`out=$(mktemp)`) holds nothing to lose.
    let empty = d.join("empty.blmk");
    std::fs::write(&empty, "").unwrap();
    build(&keys, &empty, &[]);
    // A filter file is rebuilt in place; merge and convert check their outputs alike.
    let f = d.join("f.blmk");
    for _ in 0..2 {
        build(&keys, &f, &[]);
    }
    for (output, refusal) in [(&f, "is the input"), (&keys, "--force")] {
        bad(&["merge", s(&f), s(&notes), "-o", s(output)], None, refusal);
        bad(
            &["convert", s(&f), "-o", s(output), "--to", "parquet"],
            None,
            refusal,
        );
    }
    unchanged();
}

/// A link planted at a temporary name the command could use is never followed (the old
/// name was `.NAME.tmp-PID`, and the PID of an `exec` is the shell's): its target keeps its
/// bytes, and the output is a new regular file of the user's usual mode.
#[test]
fn a_planted_link_is_never_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let keys = keys_file(d, "keys.txt", 0..100);
    let victim = d.join("victim.txt");
    std::fs::write(&victim, "victim content\n").unwrap();
    let out = Command::new("bash")
        .arg("-c")
        .arg(r#"ln -s "$1" "$2/.out.blmk.tmp-$$" && exec "$3" build "$4" -o "$2/out.blmk""#)
        .arg("bash")
        .arg(&victim)
        .arg(d)
        .arg(env!("CARGO_BIN_EXE_bloomkit"))
        .arg(&keys)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read(&victim).unwrap(), b"victim content\n");
    let meta = std::fs::symlink_metadata(d.join("out.blmk")).unwrap();
    assert!(meta.file_type().is_file(), "out.blmk is not a regular file");
    use std::os::unix::fs::PermissionsExt;
    assert_ne!(
        meta.permissions().mode() & 0o044,
        0,
        "not readable as a new file is"
    );
    // Nothing else is left beside it.
    let names: Vec<String> = std::fs::read_dir(d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with(".out.blmk.tmp-"))
        .collect();
    assert_eq!(names.len(), 3, "{names:?}"); // keys.txt, victim.txt, out.blmk
}

/// A file truncated or rewritten in place while `query` runs (found: SIGBUS, exit 135, for
/// every view over a mapped file; a panic in the quotient view): the file is read once, so
/// every key gets an answer from the bytes as they were, or the command says in one line
/// that they could not be read. With `--mmap` (whose hazard `--help` states) a panic, if the
/// view meets one, is still one line and exit 2.
#[test]
fn a_file_that_changes_under_a_query_gives_answers_or_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let keys = keys_file(d, "keys.txt", 0..5_000);
    let probes: String = (0..40_000).map(|i| key(i * 7) + "\n").collect();
    for variant in [
        "classic",
        "blocked",
        "simd-block",
        "quotient",
        "binary-fuse8",
    ] {
        for (change, mmap) in [("truncate", false), ("rewrite", false), ("rewrite", true)] {
            let f = d.join(format!("{variant}.blmk"));
            build(&keys, &f, &["--variant", variant, "--items", "500000"]);
            let mut args = vec!["query", s(&f)];
            if mmap {
                args.push("--mmap");
            }
            let mut child = start(&args, Stdio::piped());
            // Keys written by a thread (the pipes would fill both ways otherwise): a quarter,
            // then the rest once the file has changed.
            let mut stdin = child.stdin.take().unwrap();
            let (changed, wait) = std::sync::mpsc::channel::<()>();
            let writer = {
                let probes = probes.clone();
                std::thread::spawn(move || {
                    let (first, rest) = probes.split_at(probes.len() / 4);
                    let _ = stdin.write_all(first.as_bytes());
                    let _ = wait.recv();
                    let _ = stdin.write_all(rest.as_bytes());
                })
            };
            // The first answers out: the file is open and being answered from.
            let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
            let mut line = String::new();
            let _ = std::io::BufRead::read_line(&mut stdout, &mut line);
            let len = std::fs::metadata(&f).unwrap().len();
            let file = std::fs::OpenOptions::new().write(true).open(&f).unwrap();
            match change {
                "truncate" => file.set_len(4096.min(len / 2)).unwrap(),
                _ => std::os::unix::fs::FileExt::write_all_at(
                    &file,
                    &vec![0xff; len as usize - 200],
                    100,
                )
                .unwrap(),
            }
            drop(file);
            let _ = changed.send(());
            let mut out = String::new();
            let _ = std::io::Read::read_to_string(&mut stdout, &mut out);
            let answers = usize::from(!line.is_empty()) + out.lines().count();
            writer.join().unwrap();
            let status = child.wait().unwrap();
            let mut stderr = String::new();
            let _ = std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr);
            let case = format!("{variant}, {change}, mmap {mmap}: {status:?} {stderr}");
            match status.code() {
                Some(0 | 1) => {
                    assert!(stderr.is_empty(), "{case}");
                    if !mmap {
                        assert_eq!(answers, 40_000, "{case}");
                    }
                }
                Some(2) => {
                    assert_eq!(stderr.lines().count(), 1, "{case}");
                    assert!(stderr.starts_with("error: "), "{case}");
                    // Every view answers from whatever bits it finds (a damaged quotient
                    // run: "maybe"); the panic hook's line would mean one panicked.
                    assert!(
                        !stderr.contains("internal error"),
                        "a view panicked: {case}"
                    );
                    assert!(
                        mmap,
                        "a read file cannot fail after its first answer: {case}"
                    );
                }
                _ => panic!("killed or panicked: {case}"),
            }
        }
    }
}

/// Inputs without a length (a device, a pipe) are read up to the length their header
/// declares (found: `info /dev/zero` read 2.1 GB before failing).
#[test]
fn endless_inputs_are_read_no_further_than_their_header() {
    bad(&["info", "/dev/zero"], None, "not a bloomkit filter");
    bad(&["info", "/dev/urandom"], None, "not a bloomkit filter");
    bad(&["query", "/dev/zero", "k"], None, "not a bloomkit filter");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let keys = keys_file(d, "keys.txt", 0..1_000);
    let f = d.join("f.blmk");
    build(&keys, &f, &[]);
    let p = d.join("f.parquet");
    build(&keys, &f, &["--variant", "split-block"]);
    ok(&["convert", s(&f), "-o", s(&p), "--to", "parquet"], None);
    // A filter followed by endless zeros, through a process substitution: the filter is
    // read, the zeros are not.
    for file in [&f, &p] {
        query_through_endless_pipe(file, &key(3), &[]);
    }
}

/// `bloomkit query <(cat FILE; cat /dev/zero) KEY`, which must answer "present": a filter
/// followed by endless zeros is read no further than its header declares.
#[track_caller]
fn query_through_endless_pipe(file: &Path, key: &str, flags: &[&str]) {
    let out = Command::new("bash")
        .arg("-c")
        .arg(r#""$1" query <(cat "$2"; cat /dev/zero) "$3" "${@:4}""#)
        .arg("bash")
        .arg(env!("CARGO_BIN_EXE_bloomkit"))
        .arg(file)
        .arg(key)
        .args(flags)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{}: {stderr}", file.display());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("present\t{key}\n")
    );
}

/// A build sized far too small suggests a size it can be built with (found: `--items
/// 18446744073709551615`, which then failed).
#[test]
fn an_overfull_build_suggests_a_size_that_builds() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let keys = keys_file(d, "keys.txt", 0..20_000);
    let f = d.join("f.blmk");
    let r = build(&keys, &f, &["--items", "1"]);
    let suggested: u64 = r
        .stderr
        .split("--items ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no suggestion in {}", r.stderr));
    assert!((1..=20_000).contains(&suggested), "{}", r.stderr);
    let n = suggested.to_string();
    build(&keys, &f, &["--items", &n]);
}

/// The expandable filter from the command (found on 7f262d2): a rate below what it reaches
/// was a panic (exit 101), and 2,000 copies of one line were `Full` (exit 2).
#[test]
fn the_expandable_filter_takes_any_rate_and_repeated_lines() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let keys = keys_file(d, "keys.txt", 0..100);
    let out = d.join("e.blmk");
    for fpr in ["5e-324", "2.2250738585072014e-308"] {
        let args = ["build", s(&keys), "-o", s(&out), "--variant", "expandable"];
        bad(
            &[&args[..], &["--fpr", fpr]].concat(),
            None,
            "is below the minimum of",
        );
    }
    let same = "same\n".repeat(2_000);
    ok(
        &[
            "build",
            "-o",
            s(&out),
            "--variant",
            "expandable",
            "--items",
            "10",
        ],
        Some(same.as_bytes()),
    );
    let r = bloomkit(&["query", s(&out), "same"], None);
    assert_eq!((r.code, r.stdout.as_str()), (Some(0), "present\tsame\n"));
}

/// Guava's and Spark's files: `info` describes them, `query` answers them through the funnel
/// asked for (and through a pipe, read no further than the filter), `convert` and `merge`
/// say why they cannot.
#[test]
fn jvm_files_are_described_and_answered() {
    use bloomkit::jvm::guava::{funnel, GuavaBloomFilter, Strategy};
    use bloomkit::jvm::spark::SparkBloomFilter;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The bytes Guava writes (the jvm crate's tests check them against Guava itself).
    let mut longs = GuavaBloomFilter::<funnel::Long>::create_with_strategy(
        10_000,
        0.01,
        Strategy::Murmur128Mitz32,
    )
    .unwrap();
    let mut strings = GuavaBloomFilter::<funnel::Utf8String>::create(10_000, 0.01).unwrap();
    let mut spark = SparkBloomFilter::create(10_000, 0.01).unwrap();
    for i in 0..5_000i64 {
        longs.put(&i);
        strings.put(&key(i as u64));
        spark.put(&i);
        spark.put(key(i as u64).as_str());
    }
    let (gl, gs, sp) = (
        d.join("longs.guava"),
        d.join("strings.guava"),
        d.join("ids.spark"),
    );
    std::fs::write(&gl, longs.to_bytes()).unwrap();
    std::fs::write(&gs, strings.to_bytes()).unwrap();
    std::fs::write(&sp, spark.to_bytes()).unwrap();

    let info = ok(&["info", s(&gl)], None).stdout;
    assert!(info.contains("Guava BloomFilter"), "{info}");
    assert!(info.contains("MURMUR128_MITZ_32 (ordinal 0)"), "{info}");
    assert!(
        info.contains(&format!("hashes (k): {}", longs.num_hash_functions())),
        "{info}"
    );
    let json = ok(&["info", "--json", s(&sp)], None).stdout;
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["format"], "spark");
    assert_eq!(v["bits"], spark.bit_size());
    assert_eq!(v["estimated_items"], spark.approximate_element_count());

    // Answers as the library's, through each funnel; every key put is present.
    let ints: String = (0..10_000).map(|i| format!("{i}\n")).collect();
    for (file, funnel, filter_says) in [
        (
            &gl,
            "long",
            &(|i: i64| longs.might_contain(&i)) as &dyn Fn(i64) -> bool,
        ),
        (&sp, "long", &|i: i64| spark.might_contain(&i)),
    ] {
        let out = bloomkit(
            &["query", s(file), "--funnel", funnel],
            Some(ints.as_bytes()),
        );
        assert_eq!(out.code, Some(1), "{}", out.stderr);
        for (i, line) in out.stdout.lines().enumerate() {
            let expected = if filter_says(i as i64) {
                "present"
            } else {
                "absent"
            };
            assert_eq!(line, format!("{expected}\t{i}"));
            assert!(i >= 5_000 || expected == "present");
        }
    }
    let texts: String = (0..5_000).map(|i| key(i) + "\n").collect();
    for file in [&gs, &sp] {
        let out = ok(
            &["query", s(file), "--funnel", "utf8", "--absent"],
            Some(texts.as_bytes()),
        );
        assert_eq!(out.stdout, "");
        // Without a funnel: refused, not guessed.
        bad(
            &["query", s(file), "k"],
            None,
            "does not record how its keys were hashed",
        );
    }
    // Through a pipe followed by endless zeros: read no further than the filter.
    query_through_endless_pipe(&gs, &key(3), &["--funnel", "utf8"]);

    bad_each(&[
        (
            &["query", s(&gl), "--funnel", "long", "seven"],
            "not a key of Funnels.longFunnel()",
        ),
        (
            &["query", s(&sp), "--funnel", "int", "99999999999"],
            "not a decimal int",
        ),
        (
            &["query", s(&sp), "--funnel", "chars", "x"],
            "Spark hashes strings as UTF-8",
        ),
        (
            &["convert", s(&gl), "-o", s(&d.join("x")), "--to", "bloomkit"],
            "cannot convert a Guava or Spark",
        ),
        (
            &["merge", "-o", s(&d.join("y")), s(&gl), s(&gl)],
            "not one of bloomkit's variants",
        ),
    ]);
    let f = d.join("f.blmk");
    build(&keys_file(d, "k.txt", 0..10), &f, &[]);
    bad(
        &["query", s(&f), "--funnel", "utf8", "k"],
        None,
        "--funnel is for Guava and Spark files",
    );
    // A Guava file cut short: its header no longer matches its length.
    let bytes = longs.to_bytes();
    let cut = d.join("cut.guava");
    std::fs::write(&cut, &bytes[..bytes.len() - 1]).unwrap();
    bad(&["info", s(&cut)], None, "not a bloomkit filter");
}
