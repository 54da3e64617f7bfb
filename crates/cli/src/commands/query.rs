//! `bloomkit query`: may these keys be in the filter's set?

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use super::flush_quietly;
use crate::jvm::Funnel;
use crate::keys::{Lines, CHUNK};
use crate::open::FilterFile;
use crate::CliError;

/// `bloomkit query`'s flags.
#[derive(Debug, Clone, clap::Args)]
#[command(
    after_help = "Prints `present<TAB>KEY` or `absent<TAB>KEY` per key (present means \
                        \"may be in the set\": a filter has false positives, never false \
                        negatives). Exit status: 0 every key present, 1 some key absent, 2 bad \
                        input.\n\nThe file is read into memory first (--mmap maps it instead: \
                        see its hazard).\n\nExamples:\n  bloomkit query seen.blmk \
                        https://example.com/ && echo seen\n  bloomkit query seen.blmk --absent \
                        < today.txt > new.txt"
)]
pub struct Args {
    /// The filter file (bloomkit's format, Parquet's split-block filter bytes, Guava's or
    /// Spark's Bloom filter bytes).
    pub file: PathBuf,
    /// Keys to ask about, exactly as given (none: read them from stdin, one per line, a
    /// trailing `\r` dropped as `build` drops it).
    pub keys: Vec<String>,
    /// Print nothing: the exit status says it all.
    #[arg(short, long, conflicts_with_all = ["absent", "present"])]
    pub quiet: bool,
    /// Print only the keys that are absent (certainly not in the set), one per line.
    #[arg(long, conflicts_with = "present")]
    pub absent: bool,
    /// Print only the keys that may be present, one per line.
    #[arg(long)]
    pub present: bool,
    /// For Guava and Spark files, and required for them: how a line becomes the key the JVM
    /// hashed (their bytes do not say). bloomkit's files hash lines as `str` and take no
    /// funnel.
    #[arg(long, value_enum, value_name = "FUNNEL")]
    pub funnel: Option<Funnel>,
    /// How the file is read.
    #[command(flatten)]
    pub read: super::ReadFlags,
}

/// Appends the answers for a chunk of keys.
type Answer<'a> = Box<dyn Fn(&[&str], &mut Vec<bool>) -> Result<(), CliError> + 'a>;

/// Answers the keys; exit 0 if all are present, 1 if any is absent.
///
/// # Errors
/// An unreadable, corrupt or unsupported file, no keys, a key line that is not UTF-8.
pub fn run(args: &Args) -> Result<ExitCode, CliError> {
    let file = FilterFile::read(&args.file, args.read.options())?;
    let answer: Answer<'_> =
        match file.open_jvm()? {
            Some(jvm) => {
                // The bytes do not record how keys were hashed: a guess would answer "absent"
                // for every key put in through another funnel.
                let Some(funnel) = args.funnel else {
                    return Err(CliError::at(
                        file.path().display(),
                        "a Guava or Spark filter does not record how its keys were hashed: say \
                     --funnel utf8 (strings), chars (Guava's unencodedCharsFunnel), long, int or \
                     bytes",
                    ));
                };
                Box::new(move |keys, out| jvm.contains_batch(keys, funnel, out))
            }
            None if args.funnel.is_some() => return Err(CliError::at(
                file.path().display(),
                "--funnel is for Guava and Spark files; bloomkit's hash every line as a str key",
            )),
            None => {
                let filter = file.open()?;
                Box::new(move |keys, out| {
                    filter.contains_batch(keys, out);
                    Ok(())
                })
            }
        };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout.lock());
    let mut found = Vec::with_capacity(CHUNK);
    let (mut asked, mut absent) = (0u64, 0u64);
    let mut lines = (args.keys.is_empty()).then(|| Lines::new(&[]));
    let mut chunk: Vec<String> = Vec::with_capacity(CHUNK);
    let mut from_args = args.keys.chunks(CHUNK);
    let mut open_pipe = true;
    loop {
        let keys: &[String] = match &mut lines {
            Some(lines) => {
                if !lines.next_chunk(&mut chunk, CHUNK)? {
                    break;
                }
                &chunk
            }
            // Arguments are keys as given (a key stored from a line `k\r\r` is `k\r`);
            // only lines lose a trailing `\r`.
            None => match from_args.next() {
                Some(keys) => keys,
                None => break,
            },
        };
        found.clear();
        let refs: Vec<&str> = keys.iter().map(String::as_str).collect();
        answer(&refs, &mut found)?;
        asked += keys.len() as u64;
        for (key, &present) in keys.iter().zip(&found) {
            if !present {
                absent += 1;
            }
            if !open_pipe || args.quiet {
                continue;
            }
            let written = if args.absent {
                if present {
                    Ok(())
                } else {
                    writeln!(out, "{key}")
                }
            } else if args.present {
                if present {
                    writeln!(out, "{key}")
                } else {
                    Ok(())
                }
            } else {
                writeln!(out, "{}\t{key}", if present { "present" } else { "absent" })
            };
            match written {
                Ok(()) => {}
                // `| head`: the reader has what it wanted; keep answering for the status.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => open_pipe = false,
                Err(e) => return Err(CliError::at("stdout", e)),
            }
        }
    }
    if asked == 0 {
        return Err(CliError::new(
            "no keys to query: give them as arguments or one per line on stdin",
        ));
    }
    flush_quietly(&mut out)?;
    Ok(if absent == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
