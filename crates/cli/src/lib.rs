//! The `bloomkit` command line, and the picker behind `bloomkit compare` (and
//! `cargo xtask compare`).
//!
//! For the people who run filters rather than write code against them: build a filter file
//! from a file of keys in a cron job, check a key from a shell, inspect a file someone sent,
//! merge the day's partitions, hand a filter to a Parquet writer, and measure which structure
//! suits a workload.
//!
//! ```text
//! bloomkit build urls.txt -o seen.blmk --items 1000000 --fpr 0.01
//! bloomkit query seen.blmk https://example.com/ && echo seen
//! cut -f1 today.tsv | bloomkit query seen.blmk --absent > new.txt
//! bloomkit info seen.blmk
//! bloomkit merge -o week.blmk mon.blmk tue.blmk wed.blmk
//! bloomkit convert ids.blmk -o ids.parquet-bloom --to parquet
//! bloomkit compare --keys-file urls.txt
//! ```
//!
//! Keys are lines (`\n`, a trailing `\r` dropped; empty lines skipped), hashed as `str`
//! keys, so a file built here answers `BloomFilter::<str>` (and every other variant's
//! `str` filter) in the library, and the other way round. Every failure is one line on
//! stderr and exit status 2; `query` exits 0 when every key is present and 1 when one is
//! absent, as `grep` does.
//!
//! The library side, for tools of your own:
//!
//! ```
//! use bloomkit::prelude::*;
//! use bloomkit_cli::open::FilterFile;
//!
//! let mut f = BlockedBloomFilter::<str>::new(1_000, 0.01)?;
//! f.insert("apple");
//! let file = FilterFile::from_bytes("fruit.blmk", &f.to_bytes(), Default::default())?;
//! let opened = file.open()?;
//! let mut found = Vec::new();
//! opened.contains_batch(&["apple", "pear"], &mut found);
//! assert_eq!(found, [true, false]);
//! assert!(opened.is_view());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod commands;
pub mod compare;
mod error;
pub mod jvm;
pub mod keys;
pub mod open;

pub use error::CliError;
