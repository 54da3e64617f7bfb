//! Golden files: every variant and counter width, as bytes written by a known version and
//! checked in under `tests/data/v<N>/`.
//!
//! Two promises are pinned here:
//!
//! - **The current layout does not drift.** The fixtures below, written by this build,
//!   must equal the checked-in files of the current format version byte for byte. A change
//!   to any variant's layout fails this test; it needs a new format version (and new
//!   files), not new bytes under the old number.
//! - **Old files keep loading.** The files of every earlier version are read by this build
//!   and must decode to the same filter, answering every probe as when they were written.
//!
//! The generator is this file: `BLOOMKIT_BLESS=1 cargo test -p bloomkit --test it -- golden::`
//! writes the current version's files from [`fixtures`] (never an older version's: those
//! are frozen as the build of that version wrote them). See `docs/format.md`.

use std::fmt::Debug;
use std::path::PathBuf;

use bloomkit::counting::U4;
use bloomkit::format::VERSION;
use bloomkit::prelude::*;
use bloomkit::{ProbeScheme, Xxh3Scheme};

/// One golden file: its name, the bytes this build writes for it, and a check of bytes
/// read from disk against the fixture (decode, compare, probe).
struct Golden {
    name: &'static str,
    /// The first format version with this file (a variant added later has none before).
    since: u16,
    current: Vec<u8>,
    check: Box<Check>,
}

/// Decodes bytes read from disk and compares them with the fixture.
type Check = dyn Fn(&[u8]) -> Result<(), String>;

/// The keys inserted into every hashed fixture, and the keys probed (members and not).
const MEMBERS: std::ops::Range<u64> = 0..50;
const PROBES: std::ops::Range<u64> = 0..4_000;

fn golden<F>(name: &'static str, fixture: F, probe: fn(&F, u64) -> bool) -> Golden
where
    F: Codec + PartialEq + Debug + 'static,
{
    let current = fixture.to_bytes();
    let check = move |bytes: &[u8]| -> Result<(), String> {
        let read = F::from_bytes(bytes).map_err(|e| format!("{name}: does not decode: {e}"))?;
        if read != fixture {
            return Err(format!("{name}: decodes to another filter"));
        }
        if let Some(key) = PROBES
            .clone()
            .find(|&k| probe(&read, k) != probe(&fixture, k))
        {
            return Err(format!("{name}: answers key {key} differently"));
        }
        Ok(())
    };
    Golden {
        name,
        since: 1,
        current,
        check: Box::new(check),
    }
}

impl Golden {
    /// A file that exists from format version `version` on.
    fn since(self, version: u16) -> Golden {
        Golden {
            since: version,
            ..self
        }
    }
}

/// The fixtures of the current version.
fn fixtures() -> Vec<Golden> {
    fixtures_of(VERSION)
}

/// The fixtures as format `version` wrote them, one per variant tag and counter width.
/// Changing one changes the current version's files: only do it together with a new format
/// version. Before version 3 the classic, counting and multi-attribute filters placed their
/// positions by the enhanced scheme, the only one then; they are built so here to compare
/// with those files.
fn fixtures_of(version: u16) -> Vec<Golden> {
    let probes = if version < 3 {
        ProbeScheme::Enhanced
    } else {
        ProbeScheme::Wide
    };
    // The hasher the files were first written with (id 1): for the u64 keys and short strings
    // here both XXH3 schemes give the same bits, and the files pin the layout.
    let v1 = Xxh3Builder::with_scheme(7, Xxh3Scheme::Buffered);
    let classic = {
        let mut f = BloomFilter::<u64>::builder(100, 0.01)
            .hasher(v1)
            .probe_scheme(probes)
            .build()
            .unwrap();
        f.extend(MEMBERS);
        f
    };
    let blocked = {
        let mut f = BlockedBloomFilter::<u64>::builder(100, 0.01)
            .hasher(v1)
            .build()
            .unwrap();
        f.extend(MEMBERS);
        f
    };
    fn counting<C: bloomkit::counting::Counter>(
        probes: ProbeScheme,
    ) -> CountingBloomFilter<u64, C> {
        let mut f = CountingBloomFilter::<u64>::builder(100, 0.01)
            .hasher(Xxh3Builder::with_scheme(7, Xxh3Scheme::Buffered))
            .counter::<C>()
            .probe_scheme(probes)
            .build()
            .unwrap();
        // Members, plus keys inserted and removed again, plus one key inserted often
        // enough to saturate the 4-bit counters (they must stay stuck after a reload).
        f.extend(MEMBERS.chain(1_000..1_010));
        for key in 1_000..1_010u64 {
            f.remove(&key).unwrap();
        }
        for _ in 0..20 {
            f.insert(&7);
        }
        f
    }
    let scalable = {
        // Small slices so that the file holds several (different sizes and rates).
        let mut f = ScalableBloomFilter::<u64>::builder(8, 0.01)
            .hasher(v1)
            .build()
            .unwrap();
        for key in MEMBERS {
            f.try_insert(&key).unwrap();
        }
        assert!(f.num_slices() >= 3);
        f
    };
    let signed = {
        let mut b = Bitmap::<i16>::new(-300..=300).unwrap();
        b.extend_checked([-300, -7, -1, 0, 1, 64, 65, 299, 300])
            .unwrap();
        b
    };
    let unsigned = {
        let mut b = Bitmap::<u32>::new(1_000..=1_700).unwrap();
        b.extend_checked((1_000..1_700).step_by(7)).unwrap();
        b
    };
    let multi = {
        // Records of (key, key % 5, key as text): a declared subset, the record-level
        // filter, and attributes sized apart.
        let mut f = MultiFilter::<(u64, u8, String)>::builder(100, 0.01)
            .attribute(1, 5, 0.05)
            .and_then(|b| b.subset(&[0, 2]))
            .map(|b| b.hasher(v1).probe_scheme(probes))
            .and_then(bloomkit::multi::MultiBuilder::build)
            .unwrap();
        for key in MEMBERS {
            f.try_insert(&(key, (key % 5) as u8, key.to_string()))
                .unwrap();
        }
        f
    };
    // Keys of 24 bytes hashed by the chained scheme (hasher id 2, the default from format
    // version 2 until the one-shot scheme), which hashes them differently from the buffered
    // one, and by the one-shot scheme (hasher id 4, the default now): these files pin them.
    let strings = |hasher: Xxh3Builder| {
        let mut f = BloomFilter::<str>::builder(100, 0.01)
            .hasher(hasher)
            .probe_scheme(probes)
            .build()
            .unwrap();
        for key in MEMBERS {
            f.insert(&text(key));
        }
        f
    };
    let chained = strings(Xxh3Builder::with_scheme(7, Xxh3Scheme::Chained));
    let one_shot = strings(Xxh3Builder::with_seed(7));
    assert_eq!(one_shot.hasher().scheme(), Xxh3Scheme::OneShot);
    // The SIMD block filter (variant tag 7), new in format version 3, on string keys with
    // the one-shot hasher: both its layout and the hash of its keys are pinned.
    let simd_block = {
        let mut f = SimdBlockFilter::<str>::builder(100, 0.01)
            .hasher(Xxh3Builder::with_seed(7))
            .build()
            .unwrap();
        for key in MEMBERS {
            f.insert(&text(key));
        }
        f
    };
    // Parquet's split-block filter (variant tag 14, hasher id 5: XXH64 seed 0, fixed), added
    // to format version 3: its layout and Parquet's hash of string keys are pinned.
    let split_block = {
        let mut f = SplitBlockFilter::<str>::builder(100, 0.01).build().unwrap();
        for key in MEMBERS {
            f.insert(&text(key));
        }
        f
    };
    let mut v = vec![
        golden("simd-block", simd_block, |f, k| f.contains(&text(k))).since(3),
        golden("split-block", split_block, |f, k| f.contains(&text(k))).since(3),
        golden("classic-xxh3-chained", chained, |f, k| f.contains(&text(k))).since(2),
        golden("classic-xxh3-oneshot", one_shot, |f, k| {
            f.contains(&text(k))
        })
        .since(3),
        golden("multi", multi, |f, k| {
            f.contains(&(k, (k % 5) as u8, k.to_string()))
                && f.query().attr::<0>(&k).attr::<2>(&k.to_string()).contains()
                || f.contains_attr::<1>(&((k % 7) as u8))
        })
        .since(2),
        golden("classic", classic, |f, k| f.contains(&k)),
        golden("blocked", blocked, |f, k| f.contains(&k)),
        golden("counting-u4", counting::<U4>(probes), |f, k| f.contains(&k)),
        golden("counting-u8", counting::<u8>(probes), |f, k| f.contains(&k)),
        golden("counting-u16", counting::<u16>(probes), |f, k| {
            f.contains(&k)
        }),
        golden("counting-u32", counting::<u32>(probes), |f, k| {
            f.contains(&k)
        }),
        golden("scalable", scalable, |f, k| f.contains(&k)),
        golden("bitmap-i16", signed, |b, k| b.contains(&(k as i16 - 2_000))),
        golden("bitmap-u32", unsigned, |b, k| b.contains(&(k as u32))),
    ];
    #[cfg(feature = "static")]
    v.extend(static_fixtures());
    #[cfg(feature = "quotient")]
    v.push(quotient_fixture());
    #[cfg(feature = "quotient")]
    v.push(quotient_blocks_fixture());
    #[cfg(feature = "quotient")]
    v.push(expandable_fixture());
    #[cfg(feature = "window")]
    v.push(window_fixture());
    v
}

/// The window filter (variant tag 15, format version 3): string keys with the one-shot
/// hasher into a window over time of 1,000 units for 20 items at 10%, inserted 60 units
/// apart so that generations shift (and keys are forgotten) along the way: the file pins the
/// hash, the buckets and fingerprints, the packed slots with their generation tags, the
/// generations' counts and the clock.
#[cfg(feature = "window")]
fn window_fixture() -> Golden {
    let mut f = WindowFilter::<str>::builder(20, 0.1)
        .over_time(1_000)
        .seed(7)
        .build()
        .unwrap();
    for k in MEMBERS {
        f.try_insert_at(&text(k), k * 60).unwrap();
    }
    golden("window", f, |f, k| f.contains(&text(k))).since(3)
}

/// The quotient filter (variant tag 12, format version 3): string keys with the one-shot
/// hasher, some held in several copies and one removed, in a table small enough that runs
/// share slots, so the file pins the hash, the runs and the packed remainders.
#[cfg(feature = "quotient")]
fn quotient_fixture() -> Golden {
    let mut f = QuotientFilter::<str>::builder(50, 0.01)
        .seed(7)
        .build()
        .unwrap();
    for k in MEMBERS {
        f.try_insert(&text(k)).unwrap();
    }
    for k in [3, 3, 17] {
        f.try_insert(&text(k)).unwrap();
    }
    f.remove(&text(17)).unwrap();
    golden("quotient", f, |f, k| f.contains(&text(k))).since(3)
}

/// The quotient filter whose home slots are not a power of two (192: sized for 150 keys),
/// written as its count of 64-slot blocks with the top bit of the field set: the file pins
/// that form and the home-slot mapping (the 128-bit product of the hash and the home slots).
#[cfg(feature = "quotient")]
fn quotient_blocks_fixture() -> Golden {
    let mut f = QuotientFilter::<str>::builder(150, 0.01)
        .seed(7)
        .build()
        .unwrap();
    assert_eq!(f.capacity(), 192);
    for k in 0..150 {
        f.try_insert(&text(k)).unwrap();
    }
    f.remove(&text(17)).unwrap();
    golden("quotient-blocks", f, |f, k| f.contains(&text(k))).since(3)
}

/// The expandable filter (variant tag 13, format version 3): string keys with the one-shot
/// hasher into a filter made for 8 at a 50% target (4-bit fingerprints), grown past five
/// doublings so that the first entries are void and copied, one key removed: the file pins
/// the hash, the home-slot mapping, the unary age code and the widths.
#[cfg(feature = "quotient")]
fn expandable_fixture() -> Golden {
    let mut f = ExpandableFilter::<str>::builder(8, 0.5)
        .seed(7)
        .build()
        .unwrap();
    for k in 0..2_000 {
        f.try_insert(&text(k)).unwrap();
    }
    f.remove(&text(17)).unwrap();
    golden("expandable", f, |f, k| f.contains(&text(k))).since(3)
}

/// The static filters (variant tags 8-11, format version 3): string keys with the one-shot
/// hasher, so the files pin the hash too.
#[cfg(feature = "static")]
fn static_fixtures() -> Vec<Golden> {
    let keys = || MEMBERS.map(text);
    let hasher = || Xxh3Builder::with_seed(7);
    let fuse8 = BinaryFuse8::<str>::from_keys_with_hasher(keys(), hasher()).unwrap();
    let fuse16 = BinaryFuse16::<str>::from_keys_with_hasher(keys(), hasher()).unwrap();
    let fuse32 = BinaryFuse32::<str>::from_keys_with_hasher(keys(), hasher()).unwrap();
    let ribbon = RibbonFilter::<str>::from_keys_with_hasher(keys(), 0.01, hasher()).unwrap();
    vec![
        golden("binary-fuse8", fuse8, |f, k| f.contains(&text(k))).since(3),
        golden("binary-fuse16", fuse16, |f, k| f.contains(&text(k))).since(3),
        golden("binary-fuse32", fuse32, |f, k| f.contains(&text(k))).since(3),
        golden("ribbon", ribbon, |f, k| f.contains(&text(k))).since(3),
    ]
}

/// A 24-byte string key.
fn text(key: u64) -> String {
    format!("https://example.com/{key:04}")
}

fn path(version: u16, name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(format!("v{version}"))
        .join(format!("{name}.bin"))
}

#[test]
fn current_version_layout_is_pinned() {
    let bless = std::env::var_os("BLOOMKIT_BLESS").is_some();
    for g in fixtures() {
        let path = path(VERSION, g.name);
        if bless {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &g.current).unwrap();
        }
        let stored = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (generate with BLOOMKIT_BLESS=1)", path.display()));
        assert!(
            g.current == stored,
            "{}: this build writes other bytes than the version {VERSION} golden file; a \
             layout change needs a new format version",
            g.name
        );
        (g.check)(&stored).unwrap();
    }
}

#[test]
fn every_version_keeps_loading() {
    for version in 1..=VERSION {
        for g in fixtures_of(version)
            .into_iter()
            .filter(|g| g.since <= version)
        {
            let path = path(version, g.name);
            let stored = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (g.check)(&stored).unwrap_or_else(|e| panic!("version {version}: {e}"));
        }
    }
}
