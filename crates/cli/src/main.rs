//! `bloomkit`: the command line. Everything is in the library (`bloomkit_cli::commands`).

#![forbid(unsafe_code)]

use std::process::ExitCode;

use clap::error::ErrorKind;
use clap::Parser;

fn main() -> ExitCode {
    // Any panic left is a bug: one `error:` line and exit 2, as every other failure, not a
    // backtrace (whatever RUST_BACKTRACE says).
    std::panic::set_hook(Box::new(|info| {
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".to_owned());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!(
            "error: internal error: {}{at} (a file changed under --mmap, or a bug in bloomkit: \
             please report it)",
            what.replace('\n', " ")
        );
        std::process::exit(2);
    }));
    match bloomkit_cli::commands::Cli::try_parse() {
        Ok(cli) => bloomkit_cli::commands::main(&cli),
        // --help and --version print as clap prints them (help for a bare `bloomkit` too).
        Err(e)
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) =>
        {
            let _ = e.print();
            ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2))
        }
        // A usage error is one line, as every other error: clap's message and its hint.
        Err(e) => {
            eprintln!(
                "{}",
                bloomkit_cli::commands::one_line_usage_error(&e.render().to_string())
            );
            ExitCode::from(2)
        }
    }
}
