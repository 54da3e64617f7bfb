//! What a multi-attribute filter needs of its records: [`Record`] (hash each attribute, in
//! order) and [`Attribute`] (the type of attribute `I`, so that a query by one attribute
//! takes a value of the right type), implemented for tuples of up to 12 fields, for slices
//! and vectors (dynamic records, checked at run time), and by hand for a type of your own.

use core::borrow::Borrow;
use core::hash::Hash;

/// The most attributes a [`MultiFilter`](crate::MultiFilter)'s records can have.
pub const MAX_ATTRIBUTES: usize = 16;

/// Receives a record's attributes, in order; see [`Record::visit`]. The filter's visitor
/// hashes each value with that attribute's own hasher.
pub trait Visitor {
    /// The next attribute's value.
    fn attribute<T: Hash + ?Sized>(&mut self, value: &T);
}

/// A record of several attributes (fields), each hashable on its own.
///
/// Implemented for tuples of 1 to 12 hashable fields (arity fixed by the type), and for `[T]`
/// and `Vec<T>` (arity given to the filter's builder and checked on every record: a record of
/// another length is refused with [`Error::WrongArity`](bloomkit_core::Error::WrongArity)).
///
/// # Implementing
///
/// For a struct of your own, visit the fields in a fixed order, and implement [`Attribute`]
/// for each position so that queries by field are typed:
///
/// ```
/// use bloomkit_multi::{Attribute, MultiFilter, Record, Visitor};
///
/// struct Visit {
///     address: [u8; 4],
///     path: String,
/// }
///
/// impl Record for Visit {
///     const ARITY: Option<usize> = Some(2);
///     fn arity(&self) -> usize {
///         2
///     }
///     fn visit<V: Visitor>(&self, v: &mut V) {
///         v.attribute(&self.address);
///         v.attribute(&self.path);
///     }
/// }
/// impl Attribute<0> for Visit {
///     type Value = [u8; 4];
/// }
/// impl Attribute<1> for Visit {
///     type Value = String;
/// }
///
/// let mut f = MultiFilter::<Visit>::new(1_000, 0.01)?;
/// f.try_insert(&Visit { address: [10, 0, 0, 1], path: "/login".into() })?;
/// assert!(f.query().attr::<1>("/login").contains());
/// # Ok::<(), bloomkit_core::Error>(())
/// ```
///
/// The order and the values' `Hash` impls are part of the filter's contents: a filter
/// written to bytes answers the same in another process only if the record type visits the
/// same values in the same order there.
pub trait Record {
    /// The number of attributes, when the type fixes it (`None` for `[T]` and `Vec<T>`,
    /// whose filter is told its arity by the builder).
    const ARITY: Option<usize>;

    /// The number of attributes of this record (what [`visit`](Record::visit) visits).
    fn arity(&self) -> usize;

    /// Calls `visitor.attribute` once per attribute, in order.
    fn visit<V: Visitor>(&self, visitor: &mut V);
}

/// The type of attribute `I` of a [`Record`]: what a query by that attribute takes
/// ([`Query::attr`](crate::Query::attr)). A query with a value of another type, or with an
/// index the record does not have, does not compile.
///
/// ```compile_fail
/// use bloomkit_multi::MultiFilter;
///
/// let f = MultiFilter::<(u32, String)>::new(1_000, 0.01).unwrap();
/// f.query().attr::<2>(&7u32); // a record of 2 attributes has no attribute 2
/// ```
///
/// ```compile_fail
/// use bloomkit_multi::MultiFilter;
///
/// let f = MultiFilter::<(u32, String)>::new(1_000, 0.01).unwrap();
/// f.query().attr::<0>("seven"); // attribute 0 is a u32
/// ```
pub trait Attribute<const I: usize>: Record {
    /// The attribute's type.
    type Value: Hash + ?Sized;
}

/// A record whose type fixes its arity, as every tuple does: a filter of such records never
/// refuses one, so it takes whole iterators of them (`Extend`). Implemented for tuples of 1
/// to 12 `Hash` values and sealed: a hand-written [`Record`] (whose `visit` the type cannot
/// vouch for) and dynamic records cannot implement it, so `extend` never meets a record it
/// would have to drop.
pub trait FixedArity: Record + sealed::Tuple {}

mod sealed {
    /// The tuples: what may be [`FixedArity`](super::FixedArity).
    pub trait Tuple {}
}

/// A record whose arity is known only at run time and whose attributes all have one type
/// (`[T]`, `Vec<T>`): queries name its attributes by index
/// ([`Query::try_attr`](crate::Query::try_attr)), with values of that type.
pub trait DynamicRecord: Record {
    /// The type of every attribute.
    type Value: Hash + ?Sized;
}

impl<T: Hash> DynamicRecord for [T] {
    type Value = T;
}

impl<T: Hash> DynamicRecord for Vec<T> {
    type Value = T;
}

/// What a query accepts for an attribute of type `V`: a `V`, or any form `V` borrows as
/// (`&str` for a `String`, `[u8]` for a `Vec<u8>`), which hashes alike (the contract of
/// [`Borrow`]). Implemented for every such type; not meant to be implemented by hand.
pub trait QueryValue<V: ?Sized>: Hash {}

impl<Q: Hash + ?Sized, V: Borrow<Q> + ?Sized> QueryValue<V> for Q {}

/// `Attribute<I>` for each position of a tuple.
macro_rules! tuple_attributes {
    ([$($All:ident),+];) => {};
    ([$($All:ident),+]; $idx:tt $T:ident $(, $rest_idx:tt $rest_T:ident)*) => {
        impl<$($All: Hash),+> Attribute<$idx> for ($($All,)+) {
            type Value = $T;
        }
        tuple_attributes!([$($All),+]; $($rest_idx $rest_T),*);
    };
}

/// `Record` (and its `Attribute`s) for a tuple of the given arity.
macro_rules! tuple_record {
    ($n:literal; $($idx:tt $T:ident),+) => {
        impl<$($T: Hash),+> Record for ($($T,)+) {
            const ARITY: Option<usize> = Some($n);
            #[inline]
            fn arity(&self) -> usize {
                $n
            }
            #[inline]
            fn visit<V: Visitor>(&self, visitor: &mut V) {
                $(visitor.attribute(&self.$idx);)+
            }
        }
        impl<$($T: Hash),+> sealed::Tuple for ($($T,)+) {}
        impl<$($T: Hash),+> FixedArity for ($($T,)+) {}
        tuple_attributes!([$($T),+]; $($idx $T),+);
    };
}

tuple_record!(1; 0 A);
tuple_record!(2; 0 A, 1 B);
tuple_record!(3; 0 A, 1 B, 2 C);
tuple_record!(4; 0 A, 1 B, 2 C, 3 D);
tuple_record!(5; 0 A, 1 B, 2 C, 3 D, 4 E);
tuple_record!(6; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F);
tuple_record!(7; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G);
tuple_record!(8; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H);
tuple_record!(9; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I);
tuple_record!(10; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J);
tuple_record!(11; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K);
tuple_record!(12; 0 A, 1 B, 2 C, 3 D, 4 E, 5 F, 6 G, 7 H, 8 I, 9 J, 10 K, 11 L);

/// `Record` for a dynamic record type: one attribute per element, all of one type.
macro_rules! dynamic_record {
    ($($ty:ty),*) => {$(
        /// A dynamic record: one attribute per element, all of one type.
        impl<T: Hash> Record for $ty {
            const ARITY: Option<usize> = None;
            #[inline]
            fn arity(&self) -> usize {
                self.len()
            }
            #[inline]
            fn visit<V: Visitor>(&self, visitor: &mut V) {
                for value in self.iter() {
                    visitor.attribute(value);
                }
            }
        }
    )*};
}

dynamic_record!([T], Vec<T>);
