//! The tasks as a user starts them: `cargo xtask --help` lists each, and the fuzz task
//! takes the flags CI passes it (`.ci/run` runs this binary, built by the release test
//! step with the workspace's features, instead of rebuilding it through `cargo xtask`).

use std::process::Command;

fn help(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .arg("--help")
        .output()
        .expect("run xtask");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 help")
}

#[test]
fn every_task_is_listed() {
    let text = help(&[]);
    for task in ["compare", "fuzz", "redis-cluster"] {
        assert!(text.contains(task), "{task} missing from:\n{text}");
    }
}

#[test]
fn fuzz_takes_the_flags_ci_passes() {
    let text = help(&["fuzz"]);
    for flag in ["--seconds", "--parallel", "--target", "--sanitizer"] {
        assert!(text.contains(flag), "{flag} missing from:\n{text}");
    }
}
