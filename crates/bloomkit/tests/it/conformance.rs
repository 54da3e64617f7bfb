//! The family's contract, checked by the compiler: generic functions over the trait sets,
//! instantiated for every variant, and each inherent method that shares a name with a trait
//! method assigned to the trait method's own function type. A variant that drops a trait or
//! changes a signature stops this file from compiling (core's `filter` module docs hold the
//! contract's table).

use std::convert::Infallible;
use std::fmt::Debug;

use bloomkit::counting::U4;
use bloomkit::prelude::*;
use bloomkit::{Codec, MultiFilter};

/// Every owned filter: inserts (`try_insert` at least), lookups one at a time and in batches,
/// bytes, and the standard traits a value type carries.
fn owned<F>()
where
    F: Filter + Lookup + Codec + Clone + Debug + PartialEq + Send + Sync,
{
}

/// A filter whose inserts cannot fail: `insert -> bool` and `insert_batch`.
fn infallible<F>()
where
    F: Filter + FilterCore<InsertError = Infallible>,
{
}

/// A filter that can forget a key.
fn removable<F: Remove>() {}

/// Filters that merge.
fn unions<F: Union>() {}

/// Filters that intersect.
fn intersects<F: Intersection>() {}

/// A filter that takes a whole iterator (`Extend`) without an error to report: those whose
/// inserts cannot fail (the multi-attribute filter of tuples too), and those that make room:
/// the scalable filter grows (past its limits it keeps the key in its newest slice), the
/// quotient and expandable filters double (and saturate when they cannot). The window filter
/// over time refuses a full generation and the bitmap a key outside its range: neither can
/// make room, so they take `try_insert_batch` / `try_insert`.
fn extends<F: Extend<u64> + for<'k> Extend<&'k u64>>() {}
fn extends_records<R, F: Extend<R> + for<'k> Extend<&'k R>>() {}

/// A read-only structure (a static filter, a zero-copy view).
fn lookup_only<F: Lookup + Debug + Send + Sync>() {}

#[test]
fn every_variant_holds_its_trait_set() {
    type Classic = BloomFilter<u64>;
    type Blocked = BlockedBloomFilter<u64>;
    type SimdBlock = SimdBlockFilter<u64>;
    type SplitBlock = SplitBlockFilter<u64>;
    type Counting = CountingBloomFilter<u64, U4>;
    type Scalable = ScalableBloomFilter<u64>;
    type Quotient = QuotientFilter<u64>;
    type Expandable = ExpandableFilter<u64>;
    type Window = WindowFilter<u64>;

    owned::<Classic>();
    owned::<Blocked>();
    owned::<SimdBlock>();
    owned::<SplitBlock>();
    owned::<Counting>();
    owned::<Scalable>();
    owned::<Quotient>();
    owned::<Expandable>();
    owned::<Window>();
    owned::<Bitmap<u64>>();
    owned::<MultiFilter<(u32, u32, u32)>>();

    infallible::<Classic>();
    infallible::<Blocked>();
    infallible::<SimdBlock>();
    infallible::<SplitBlock>();
    infallible::<Counting>();

    removable::<Counting>();
    removable::<Quotient>();
    removable::<Expandable>();
    removable::<Bitmap<u64>>();

    unions::<Classic>();
    unions::<Blocked>();
    unions::<SimdBlock>();
    unions::<SplitBlock>();
    unions::<Counting>();
    unions::<Scalable>();
    unions::<Quotient>();
    unions::<Bitmap<u64>>();
    intersects::<Classic>();
    intersects::<Bitmap<u64>>();

    extends::<Classic>();
    extends::<Blocked>();
    extends::<SimdBlock>();
    extends::<SplitBlock>();
    extends::<Counting>();
    extends::<Scalable>();
    extends::<Quotient>();
    extends::<Expandable>();
    extends_records::<(u64, &str), MultiFilter<(u64, &str)>>();

    lookup_only::<BinaryFuse8<u64>>();
    lookup_only::<BinaryFuse16<u64>>();
    lookup_only::<BinaryFuse32<u64>>();
    lookup_only::<RibbonFilter<u64>>();
    lookup_only::<BloomFilterRef<'static, u64>>();
    lookup_only::<BlockedBloomFilterRef<'static, u64>>();
    lookup_only::<SimdBlockFilterRef<'static, u64>>();
    lookup_only::<SplitBlockFilterRef<'static, u64>>();
    lookup_only::<CountingBloomFilterRef<'static, u64>>();
    lookup_only::<bloomkit::ScalableBloomFilterRef<'static, u64>>();
    lookup_only::<bloomkit::MultiFilterRef<'static, (u32, u32, u32)>>();
    lookup_only::<QuotientFilterRef<'static, u64>>();
    lookup_only::<bloomkit::ExpandableFilterRef<'static, u64>>();
    lookup_only::<bloomkit::WindowFilterRef<'static, u64>>();
    lookup_only::<BinaryFuseRef<'static, u8, u64>>();
    lookup_only::<BinaryFuseRef<'static, u16, u64>>();
    lookup_only::<BinaryFuseRef<'static, u32, u64>>();
    lookup_only::<RibbonFilterRef<'static, u64>>();
    lookup_only::<bloomkit::BitmapRef<'static, u64>>();
}

/// An inherent method and the trait method of the same name have one signature: both are
/// assigned to one function-pointer type (a path `Type::name` finds the inherent method
/// first, `<Type as Trait>::name` the trait's).
macro_rules! same_signature {
    ($ty:ty, $name:ident, $trait:ident, $sig:ty) => {{
        let inherent: $sig = <$ty>::$name;
        let through_trait: $sig = <$ty as $trait>::$name;
        let _ = (inherent, through_trait);
    }};
}

#[test]
fn inherent_methods_keep_the_trait_signatures() {
    type Quotient = QuotientFilter<u64>;
    type Expandable = ExpandableFilter<u64>;
    type Scalable = ScalableBloomFilter<u64>;

    same_signature!(
        Quotient,
        try_insert,
        Filter,
        fn(&mut Quotient, &u64) -> Result<bool, Error>
    );
    same_signature!(
        Quotient,
        try_insert_hash,
        FilterCore,
        fn(&mut Quotient, u64) -> Result<bool, Error>
    );
    same_signature!(Quotient, contains, Lookup, fn(&Quotient, &u64) -> bool);
    same_signature!(
        Quotient,
        remove,
        Remove,
        fn(&mut Quotient, &u64) -> Result<(), Error>
    );
    same_signature!(
        Quotient,
        target_fpr,
        LookupCore,
        fn(&Quotient) -> Option<f64>
    );
    same_signature!(
        Quotient,
        union_with,
        Union,
        fn(&mut Quotient, &Quotient) -> Result<(), Error>
    );

    same_signature!(
        Expandable,
        try_insert,
        Filter,
        fn(&mut Expandable, &u64) -> Result<bool, Error>
    );
    same_signature!(
        Expandable,
        try_insert_hash,
        FilterCore,
        fn(&mut Expandable, u64) -> Result<bool, Error>
    );
    same_signature!(Expandable, contains, Lookup, fn(&Expandable, &u64) -> bool);
    same_signature!(
        Expandable,
        remove,
        Remove,
        fn(&mut Expandable, &u64) -> Result<(), Error>
    );
    same_signature!(
        Expandable,
        target_fpr,
        LookupCore,
        fn(&Expandable) -> Option<f64>
    );

    type Window = WindowFilter<u64>;
    same_signature!(
        Window,
        try_insert,
        Filter,
        fn(&mut Window, &u64) -> Result<bool, Error>
    );
    same_signature!(
        Window,
        try_insert_hash,
        FilterCore,
        fn(&mut Window, u64) -> Result<bool, Error>
    );
    same_signature!(Window, contains, Lookup, fn(&Window, &u64) -> bool);
    same_signature!(Window, target_fpr, LookupCore, fn(&Window) -> Option<f64>);

    same_signature!(
        Scalable,
        try_insert,
        Filter,
        fn(&mut Scalable, &u64) -> Result<bool, Error>
    );
    same_signature!(
        Scalable,
        target_fpr,
        LookupCore,
        fn(&Scalable) -> Option<f64>
    );

    same_signature!(
        Bitmap<u64>,
        try_insert,
        Filter,
        fn(&mut Bitmap<u64>, &u64) -> Result<bool, Error>
    );
    same_signature!(
        Bitmap<u64>,
        contains,
        Lookup,
        fn(&Bitmap<u64>, &u64) -> bool
    );
    same_signature!(
        Bitmap<u64>,
        remove,
        Remove,
        fn(&mut Bitmap<u64>, &u64) -> Result<(), Error>
    );
    same_signature!(
        Bitmap<u64>,
        union_with,
        Union,
        fn(&mut Bitmap<u64>, &Bitmap<u64>) -> Result<(), Error>
    );

    same_signature!(
        BloomFilter<u64>,
        insert,
        Filter,
        fn(&mut BloomFilter<u64>, &u64) -> bool
    );
    same_signature!(
        BloomFilter<u64>,
        contains,
        Lookup,
        fn(&BloomFilter<u64>, &u64) -> bool
    );
}

/// Every owned variant's batched insert (the trait's `try_insert_batch`, each variant's
/// prefetching override) holds every key and counts the new ones as one-at-a-time inserts
/// would.
#[test]
fn batched_inserts_hold_every_key_in_every_variant() {
    fn check<F: Filter<Key = u64>>(mut f: F, mut one_by_one: F, name: &str)
    where
        F::InsertError: Debug,
    {
        let keys: Vec<u64> = (0..5_000u64).chain(0..100).collect();
        let new = f.try_insert_batch(&keys).unwrap();
        let mut expected = 0;
        for k in &keys {
            if one_by_one.try_insert(k).unwrap() {
                expected += 1;
            }
        }
        assert_eq!(new, expected, "{name}");
        let mut out = Vec::new();
        f.contains_batch(&keys, &mut out);
        assert!(
            out.iter().all(|&b| b),
            "{name}: a false negative after a batched insert"
        );
    }
    macro_rules! both {
        ($name:literal, $make:expr) => {
            check($make, $make, $name)
        };
    }
    both!("classic", BloomFilter::<u64>::new(5_000, 0.01).unwrap());
    both!(
        "blocked",
        BlockedBloomFilter::<u64>::new(5_000, 0.01).unwrap()
    );
    both!(
        "simd block",
        SimdBlockFilter::<u64>::new(5_000, 0.01).unwrap()
    );
    both!(
        "split block",
        SplitBlockFilter::<u64>::new(5_000, 0.01).unwrap()
    );
    both!(
        "counting",
        CountingBloomFilter::<u64>::new(5_000, 0.01).unwrap()
    );
    both!(
        "scalable",
        ScalableBloomFilter::<u64>::new(100, 0.01).unwrap()
    );
    // 5,100 copies: a second copy takes a slot of its own, and the table holds what it is
    // sized for.
    both!("quotient", QuotientFilter::<u64>::new(5_100, 0.01).unwrap());
    both!(
        "expandable",
        ExpandableFilter::<u64>::new(100, 0.01).unwrap()
    );
    both!("window", WindowFilter::<u64>::new(5_000, 0.01).unwrap());
    both!("bitmap", Bitmap::<u64>::new(0..=10_000).unwrap());
}
