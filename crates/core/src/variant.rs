//! The family's one list of variants: each variant's wire tag and the facts every tool
//! dispatches on (its names, its family, its keys, what it can do).
//!
//! Core knows no concrete filter type; it knows what each variant *is*. The facade crate's
//! `registry` binds each variant to its type (opening, building, merging), and the `bloomkit`
//! command, the picker, the fuzz checks and the foreign bindings read both lists instead of
//! keeping their own. Adding a variant: its crate, a row here (the enum, [`Variant::ALL`],
//! [`Variant::facts`]), and its entry in the facade's registry.

use core::fmt;

/// The filter variants that share bloomkit's byte format, with their wire tags.
///
/// This is a registry of tags, not of types: core knows no concrete filter, but one list
/// keeps tags unique and lets an error name what it found. [`Variant::facts`] says what
/// each one is and can do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum Variant {
    /// The classic Bloom filter (`bloomkit-classic`).
    Classic,
    /// The counting Bloom filter.
    Counting,
    /// The scalable Bloom filter.
    Scalable,
    /// The bitmap for dense integer keys.
    Bitmap,
    /// The cache-line blocked Bloom filter.
    Blocked,
    /// The multi-attribute (parallel) Bloom filter for records (`bloomkit-multi`).
    Multi,
    /// The SIMD block filter: split blocks (one bit in each of eight 32-bit words) hashed
    /// with bloomkit's hasher (`bloomkit-classic`'s `SimdBlockFilter`).
    SimdBlock,
    /// The binary fuse filter with 8-bit fingerprints (`bloomkit-static`'s `BinaryFuse8`).
    BinaryFuse8,
    /// The binary fuse filter with 16-bit fingerprints (`BinaryFuse16`).
    BinaryFuse16,
    /// The binary fuse filter with 32-bit fingerprints (`BinaryFuse32`).
    BinaryFuse32,
    /// The standard ribbon filter (`bloomkit-static`'s `RibbonFilter`).
    Ribbon,
    /// The rank-select quotient filter (`bloomkit-quotient`'s `QuotientFilter`).
    Quotient,
    /// The quotient filter that doubles as it fills (`bloomkit-quotient`'s
    /// `ExpandableFilter`).
    Expandable,
    /// Parquet's split-block Bloom filter, hashed with Parquet's XXH64
    /// (`bloomkit-classic`'s `SplitBlockFilter`).
    SplitBlock,
    /// The window filter: the keys of the last N inserts or the last T, a cuckoo table of
    /// generation-tagged fingerprints (`bloomkit-window`'s `WindowFilter`).
    Window,
}

/// Which structures a variant belongs with: how the picker groups and draws it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Family {
    /// Bits set by k hashes: the classic, blocked, split-block, counting, scalable and
    /// multi-attribute filters.
    Bloom,
    /// Built once from every key, never inserted into: binary fuse and ribbon filters.
    Static,
    /// Fingerprints in a table: the quotient, expandable and window filters.
    Quotient,
    /// No false positives: the bitmap.
    Exact,
}

/// What a variant's keys are, as far as a tool that reads lines of text is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Keys {
    /// Any hashable key: a line of text is a `str` key.
    Hashed,
    /// Integers that are their own positions (the bitmap): no hasher.
    Integers,
    /// Records whose fields are hashed one by one (the multi-attribute filter); the record
    /// type is not in the bytes.
    Records,
}

/// How a variant takes new keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Inserts {
    /// `insert -> bool`: an insert cannot fail (`InsertError = Infallible`).
    Always,
    /// Only `try_insert -> Result<bool, _>`: an insert can be refused (full, out of range,
    /// past a limit), and a refused insert changes nothing.
    Fallible,
    /// Never: the filter is built once from every key (the static filters).
    Never,
}

/// What one variant is and can do: the facts every tool dispatches on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Facts {
    /// The one-byte tag written in the header.
    pub tag: u8,
    /// A human-readable name ("classic Bloom filter").
    pub name: &'static str,
    /// The Rust type's name ("BloomFilter").
    pub type_name: &'static str,
    /// The name on the command line (`bloomkit build --variant`), kebab-case.
    pub command_name: &'static str,
    /// What it is for, in one line (the command's `--help`).
    pub summary: &'static str,
    /// Which structures it belongs with.
    pub family: Family,
    /// What its keys are.
    pub keys: Keys,
    /// How it takes new keys.
    pub inserts: Inserts,
    /// Keys can be removed (`Remove`).
    pub removes: bool,
    /// Two filters of one shape merge (`Union`).
    pub union: bool,
    /// Two filters of one shape intersect (`Intersection`).
    pub intersection: bool,
    /// It grows as keys come, keeping its rate.
    pub grows: bool,
    /// It answers from its bytes in place (a zero-copy `…Ref` view).
    pub view: bool,
}

impl Variant {
    /// Every variant, in tag order.
    pub const ALL: [Variant; 15] = [
        Variant::Classic,
        Variant::Counting,
        Variant::Scalable,
        Variant::Bitmap,
        Variant::Blocked,
        Variant::Multi,
        Variant::SimdBlock,
        Variant::BinaryFuse8,
        Variant::BinaryFuse16,
        Variant::BinaryFuse32,
        Variant::Ribbon,
        Variant::Quotient,
        Variant::Expandable,
        Variant::SplitBlock,
        Variant::Window,
    ];

    /// What this variant is and can do.
    ///
    /// # Examples
    ///
    /// ```
    /// use bloomkit_core::{variant::Inserts, Variant};
    ///
    /// let deletable: Vec<&str> = Variant::ALL
    ///     .iter()
    ///     .filter(|v| v.facts().removes)
    ///     .map(|v| v.facts().type_name)
    ///     .collect();
    /// assert_eq!(deletable, ["CountingBloomFilter", "Bitmap", "QuotientFilter", "ExpandableFilter"]);
    /// assert_eq!(Variant::Ribbon.facts().inserts, Inserts::Never);
    /// ```
    pub const fn facts(self) -> Facts {
        use Family::{Bloom, Exact, Quotient, Static};
        use Inserts::{Always, Fallible, Never};
        /// One row: tag, names, summary, family, keys, inserts, then removes, union,
        /// intersection, grows, view.
        #[allow(clippy::too_many_arguments, clippy::fn_params_excessive_bools)]
        const fn row(
            tag: u8,
            name: &'static str,
            type_name: &'static str,
            command_name: &'static str,
            summary: &'static str,
            family: Family,
            keys: Keys,
            inserts: Inserts,
            [removes, union, intersection, grows, view]: [bool; 5],
        ) -> Facts {
            Facts {
                tag,
                name,
                type_name,
                command_name,
                summary,
                family,
                keys,
                inserts,
                removes,
                union,
                intersection,
                grows,
                view,
            }
        }
        const H: Keys = Keys::Hashed;
        // The table: [removes, union, intersection, grows, view] last.
        #[rustfmt::skip]
        let facts = match self {
            Variant::Classic => row(1, "classic Bloom filter", "BloomFilter", "classic", "Classic Bloom filter: m bits, k positions anywhere; union and intersection.", Bloom, H, Always, [false, true, true, false, true]),
            Variant::Counting => row(2, "counting Bloom filter", "CountingBloomFilter", "counting", "Counting Bloom filter: keys can be removed later (see --counter-bits).", Bloom, H, Always, [true, true, false, false, true]),
            Variant::Scalable => row(3, "scalable Bloom filter", "ScalableBloomFilter", "scalable", "Scalable Bloom filter: grows as keys come; --items is only its first size.", Bloom, H, Fallible, [false, true, false, true, true]),
            Variant::Bitmap => row(4, "bitmap", "Bitmap", "bitmap", "Bitmap of dense integer keys: exact, one bit a possible key.", Exact, Keys::Integers, Fallible, [true, true, true, false, true]),
            Variant::Blocked => row(5, "blocked Bloom filter", "BlockedBloomFilter", "blocked", "Blocked Bloom filter: k positions in one 512-bit block (one cache miss a lookup).", Bloom, H, Always, [false, true, true, false, true]),
            Variant::Multi => row(6, "multi-attribute Bloom filter", "MultiFilter", "multi", "Multi-attribute Bloom filter: records queried by any subset of their fields.", Bloom, Keys::Records, Fallible, [false, true, true, false, true]),
            Variant::SimdBlock => row(7, "SIMD block filter", "SimdBlockFilter", "simd-block", "SIMD block filter: 256-bit blocks, one bit in each 32-bit word (fastest to query).", Bloom, H, Always, [false, true, true, false, true]),
            Variant::BinaryFuse8 => row(8, "binary fuse filter (8-bit fingerprints)", "BinaryFuse8", "binary-fuse8", "Binary fuse filter, 8-bit fingerprints (static: about 9 bits a key at 0.39%).", Static, H, Never, [false, false, false, false, true]),
            Variant::BinaryFuse16 => row(9, "binary fuse filter (16-bit fingerprints)", "BinaryFuse16", "binary-fuse16", "Binary fuse filter, 16-bit fingerprints (static: 0.0015%).", Static, H, Never, [false, false, false, false, true]),
            Variant::BinaryFuse32 => row(10, "binary fuse filter (32-bit fingerprints)", "BinaryFuse32", "binary-fuse32", "Binary fuse filter, 32-bit fingerprints (static: 2^-32).", Static, H, Never, [false, false, false, false, true]),
            Variant::Ribbon => row(11, "ribbon filter", "RibbonFilter", "ribbon", "Ribbon filter (static, any rate, near the space bound).", Static, H, Never, [false, false, false, false, true]),
            Variant::Quotient => row(12, "quotient filter", "QuotientFilter", "quotient", "Quotient filter: deletes, counts and merges, about a quarter of a counting filter's memory.", Quotient, H, Fallible, [true, true, false, false, true]),
            Variant::Expandable => row(13, "expandable quotient filter", "ExpandableFilter", "expandable", "Expandable quotient filter: grows a thousandfold at a steady rate.", Quotient, H, Fallible, [true, false, false, true, true]),
            Variant::SplitBlock => row(14, "split-block Bloom filter (Parquet)", "SplitBlockFilter", "split-block", "Parquet's split-block filter (Parquet's hash): converts to Parquet's bytes.", Bloom, H, Always, [false, true, true, false, true]),
            Variant::Window => row(15, "window filter", "WindowFilter", "window", "Window filter: the keys of the last N inserts (or the last T); older keys forgotten.", Quotient, H, Fallible, [false, false, false, false, true]),
        };
        facts
    }

    /// The one-byte tag written in the header.
    pub const fn tag(self) -> u8 {
        self.facts().tag
    }

    /// The variant with this tag, if any.
    pub fn from_tag(tag: u8) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.tag() == tag)
    }

    /// The variant with this command-line name ([`Facts::command_name`]), if any.
    pub fn from_command_name(name: &str) -> Option<Variant> {
        Variant::ALL
            .into_iter()
            .find(|v| v.facts().command_name == name)
    }

    /// A human-readable name.
    pub const fn name(self) -> &'static str {
        self.facts().name
    }

    /// The name with its indefinite article, for messages ("an expandable quotient filter").
    pub fn with_article(self) -> String {
        let name = self.name();
        let article = if name.starts_with(['a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        format!("{article} {name}")
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tags and names are unique, and `ALL` is in tag order: the list cannot silently
    /// give two variants one tag or one command name.
    #[test]
    fn tags_and_names_are_unique_and_in_order() {
        for (i, v) in Variant::ALL.iter().enumerate() {
            assert_eq!(usize::from(v.tag()), i + 1, "{v:?}");
            assert_eq!(Variant::from_tag(v.tag()), Some(*v));
            assert_eq!(Variant::from_command_name(v.facts().command_name), Some(*v));
            for w in &Variant::ALL[..i] {
                assert_ne!(v.facts().name, w.facts().name);
                assert_ne!(v.facts().type_name, w.facts().type_name);
                assert_ne!(v.facts().command_name, w.facts().command_name);
            }
        }
        assert_eq!(Variant::from_tag(0), None);
        assert_eq!(Variant::from_tag(16), None);
        assert_eq!(Variant::from_command_name("bloom"), None);
    }

    /// The facts agree with one another: a static filter neither inserts nor merges, a
    /// filter that grows can refuse an insert.
    #[test]
    fn facts_are_consistent() {
        for v in Variant::ALL {
            let f = v.facts();
            if f.inserts == Inserts::Never {
                assert!(!f.removes && !f.union && !f.grows, "{v:?}");
                assert_eq!(f.family, Family::Static, "{v:?}");
            }
            if f.grows {
                assert_eq!(f.inserts, Inserts::Fallible, "{v:?}");
            }
        }
    }
}
