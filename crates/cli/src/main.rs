//! `bloomkit`: the command line. Everything is in the library (`bloomkit_cli::commands`).

#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    bloomkit_cli::commands::main(&bloomkit_cli::commands::Cli::parse())
}
