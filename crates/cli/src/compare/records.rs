//! The records workload (`--keys records --attributes N`): records of N fields, asked by
//! the whole record, by one field, and by two fields together. The multi-attribute filter
//! answers all three from one structure; a single-key filter or a `HashSet` of records
//! answers only the whole record (asking by a field would need a filter per field).
//!
//! Field 0 is unique per record (an id); field `i` has `max(items / 10^i, 16)` distinct
//! values (a city, a status). Absent queries are the hard ones: a record recombined from
//! the fields of two records, a pair of values that both exist but never together, and a
//! field value never seen.

use std::collections::HashSet;
use std::hint::black_box;
use std::time::Instant;

use bloomkit::{BlockedBloomFilter, MultiFilter};

use super::measure::{per, Answers, Row, Sizing};
use super::workload::{mix, Str};

/// A record: its fields' values.
pub type Record = Vec<Str>;

/// One way of asking: which fields, and the queries (their values, in field order).
#[derive(Debug, Clone)]
pub struct Kind {
    /// For the row names: `record`, `field 1`, `fields 0+1`.
    pub name: String,
    /// The fields asked.
    pub fields: Vec<usize>,
    /// Queries that match a record.
    pub members: Vec<Vec<Str>>,
    /// Queries that match none.
    pub non_members: Vec<Vec<Str>>,
}

/// The records and the three kinds of queries.
#[derive(Debug, Clone)]
pub struct Records {
    /// Distinct records, in insertion order.
    pub records: Vec<Record>,
    /// Distinct values of each field.
    pub distinct: Vec<u64>,
    /// The ways of asking.
    pub kinds: Vec<Kind>,
}

fn too_alike() -> String {
    "the records are too few or too alike to make absent queries of every kind: more --items".into()
}

/// `absent` queries that match no record: `make(1), make(2), ...`, skipping the candidates
/// it gives none for (they match one), or why the records cannot give that many.
fn absent_queries(
    absent: usize,
    mut make: impl FnMut(u64) -> Option<Vec<Str>>,
) -> Result<Vec<Vec<Str>>, String> {
    let mut non = Vec::with_capacity(absent);
    let mut j = 0u64;
    while non.len() < absent {
        j += 1;
        if j > 100 * absent as u64 + 10_000 {
            return Err(too_alike());
        }
        non.extend(make(j));
    }
    Ok(non)
}

fn value(field: usize, v: u64) -> Str {
    format!("f{field}:{v:x}").into()
}

/// Builds the workload: `items` records of `arity` fields, `queries` of each kind, half
/// members (or `member_share`).
///
/// # Errors
/// An arity outside 2..=12.
pub fn synthetic(
    items: usize,
    arity: usize,
    queries: usize,
    member_share: f64,
    seed: u64,
) -> Result<Records, String> {
    if !(2..=12).contains(&arity) {
        return Err(format!("--attributes must be in 2..=12, got {arity}"));
    }
    if items < 16 {
        return Err(format!(
            "--keys records needs at least 16 --items, got {items}"
        ));
    }
    if queries < 2 {
        return Err(format!(
            "--keys records needs at least 2 --queries, got {queries}"
        ));
    }
    let distinct: Vec<u64> = (0..arity)
        .map(|i| {
            if i == 0 {
                items as u64
            } else {
                (items as u64 / 10u64.saturating_pow(i as u32)).max(16)
            }
        })
        .collect();
    let records: Vec<Record> = (0..items as u64)
        .map(|r| {
            (0..arity)
                .map(|i| {
                    if i == 0 {
                        value(0, mix(seed ^ r))
                    } else {
                        value(i, mix(seed ^ mix(r ^ (i as u64) << 56)) % distinct[i])
                    }
                })
                .collect()
        })
        .collect();
    let whole: HashSet<&Record> = records.iter().collect();
    let pairs: HashSet<(&Str, &Str)> = records.iter().map(|r| (&r[0], &r[1])).collect();
    let field1: HashSet<&Str> = records.iter().map(|r| &r[1]).collect();
    let members = (queries as f64 * member_share).round() as usize;
    let absent = queries - members;
    let pick = |i: u64, salt: u64| &records[(mix(seed ^ salt ^ mix(i)) % items as u64) as usize];
    let mut kinds = Vec::new();
    // Whole records; absent ones recombined: field 0 of one record, the rest of another.
    let non = absent_queries(absent, |j| {
        let (a, b) = (pick(j, 0x11), pick(j, 0x22));
        let mut r = b.clone();
        r[0] = a[0].clone();
        (!whole.contains(&r)).then_some(r)
    })?;
    kinds.push(Kind {
        name: "record".into(),
        fields: (0..arity).collect(),
        members: (0..members as u64).map(|i| pick(i, 0x33).clone()).collect(),
        non_members: non,
    });
    // Field 1 alone; absent values never used.
    let non = absent_queries(absent, |j| {
        let v = value(1, distinct[1] + j);
        (!field1.contains(&v)).then(|| vec![v])
    })?;
    kinds.push(Kind {
        name: "field 1".into(),
        fields: vec![1],
        members: (0..members as u64)
            .map(|i| vec![pick(i, 0x44)[1].clone()])
            .collect(),
        non_members: non,
    });
    // Fields 0 and 1 together; absent pairs of values that exist, never together.
    let non = absent_queries(absent, |j| {
        let (a, b) = (pick(j, 0x55), pick(j, 0x66));
        (!pairs.contains(&(&a[0], &b[1]))).then(|| vec![a[0].clone(), b[1].clone()])
    })?;
    kinds.push(Kind {
        name: "fields 0+1".into(),
        fields: vec![0, 1],
        members: (0..members as u64)
            .map(|i| {
                let r = pick(i, 0x77);
                vec![r[0].clone(), r[1].clone()]
            })
            .collect(),
        non_members: non,
    });
    Ok(Records {
        records,
        distinct,
        kinds,
    })
}

/// What a structure over records answers: `None` for a kind it cannot.
trait Asks {
    fn put(&mut self, record: &Record) -> Result<(), String>;
    fn ask(&self, kind: &Kind, values: &[Str]) -> Option<bool>;
    fn bytes(&self) -> u64;
}

struct Multi(MultiFilter<Vec<Str>>);

impl Asks for Multi {
    fn put(&mut self, record: &Record) -> Result<(), String> {
        self.0
            .try_insert(record)
            .map(drop)
            .map_err(|e| e.to_string())
    }
    fn ask(&self, kind: &Kind, values: &[Str]) -> Option<bool> {
        if kind.fields.len() == self.0.arity() {
            return Some(self.0.contains(&values.to_vec()));
        }
        let mut q = self.0.query();
        for (&field, v) in kind.fields.iter().zip(values) {
            q = q.try_attr(field, v).ok()?;
        }
        Some(q.contains())
    }
    fn bytes(&self) -> u64 {
        self.0.heap_bytes() as u64
    }
}

/// A record as one key: its fields joined with the unit separator.
fn joined(values: &[Str]) -> String {
    values
        .iter()
        .map(|v| &**v)
        .collect::<Vec<_>>()
        .join("\u{1f}")
}

struct Single(BlockedBloomFilter<str>);

impl Asks for Single {
    fn put(&mut self, record: &Record) -> Result<(), String> {
        self.0.insert(&joined(record));
        Ok(())
    }
    fn ask(&self, kind: &Kind, values: &[Str]) -> Option<bool> {
        (kind.name == "record").then(|| self.0.contains(&joined(values)))
    }
    fn bytes(&self) -> u64 {
        self.0.heap_bytes() as u64
    }
}

struct Set(HashSet<Record>);

impl Asks for Set {
    fn put(&mut self, record: &Record) -> Result<(), String> {
        self.0.insert(record.clone());
        Ok(())
    }
    fn ask(&self, kind: &Kind, values: &[Str]) -> Option<bool> {
        (kind.name == "record").then(|| self.0.contains(values))
    }
    fn bytes(&self) -> u64 {
        // hashbrown's table (a Vec per record: 24 bytes, and a control byte), the Vecs'
        // buffers of shared strings (16 bytes each), and the strings once.
        let buckets = (self.0.capacity() * 8 / 7).next_power_of_two();
        let vecs: usize = self.0.iter().map(|r| r.len() * 16).sum();
        let strings: usize = self
            .0
            .iter()
            .flat_map(|r| r.iter().map(|v| v.len() + 16))
            .sum();
        (buckets * 25 + vecs + strings) as u64
    }
}

/// One structure: built once, then a row per kind of query.
fn measure<S: Asks>(
    name: &str,
    exact: bool,
    data: &Records,
    make: impl FnOnce() -> Result<S, String>,
) -> Vec<Row> {
    let row_name = |kind: &Kind| format!("{name} [{}]", kind.name);
    let mut s = match make() {
        Ok(s) => s,
        Err(e) => {
            return data
                .kinds
                .iter()
                .map(|k| Row::cannot(&row_name(k), e.clone(), false, false, exact))
                .collect()
        }
    };
    let start = Instant::now();
    for r in &data.records {
        if let Err(e) = s.put(r) {
            return vec![Row::cannot(
                name,
                format!("refused a record: {e}"),
                false,
                false,
                exact,
            )];
        }
    }
    let build_ns = per(start.elapsed(), data.records.len());
    let bytes = s.bytes();
    data.kinds
        .iter()
        .map(|kind| {
            if kind
                .members
                .iter()
                .chain(&kind.non_members)
                .next()
                .and_then(|q| s.ask(kind, q))
                .is_none()
            {
                return Row::cannot(
                    &row_name(kind),
                    "one key per record: asking by field needs a filter per field (MultiFilter)",
                    false,
                    false,
                    exact,
                );
            }
            let present = |q: &Vec<Str>| s.ask(kind, black_box(q)) == Some(true);
            let answers = Answers::each(&kind.members, &kind.non_members, present);
            // The exact set removes and grows; the filters do neither.
            let flags = (exact, exact, exact);
            let (structure, kept) = (row_name(kind), data.records.len());
            Row::served(&structure, flags, bytes, kept, build_ns, answers)
        })
        .collect()
}

/// The rows of the records workload.
pub fn measure_all(data: &Records, sizing: Sizing, mut progress: impl FnMut(&str)) -> Vec<Row> {
    let n = data.records.len() as u64;
    let arity = data.distinct.len();
    let mut rows = Vec::new();
    progress("HashSet of records");
    rows.extend(measure("HashSet (exact)", true, data, || {
        Ok(Set(HashSet::new()))
    }));
    progress("BlockedBloomFilter of records");
    rows.extend(measure("BlockedBloomFilter", false, data, || {
        BlockedBloomFilter::builder(n, sizing.fpr)
            .seed(sizing.seed)
            .build()
            .map(Single)
            .map_err(|e| e.to_string())
    }));
    progress("MultiFilter");
    rows.extend(measure("MultiFilter", false, data, || {
        let mut b = MultiFilter::<Vec<Str>>::builder(n, sizing.fpr)
            .arity(arity)
            .map_err(|e| e.to_string())?;
        for (i, &d) in data.distinct.iter().enumerate().skip(1) {
            b = b.attribute(i, d, sizing.fpr).map_err(|e| e.to_string())?;
        }
        b.subset(&[0, 1])
            .map_err(|e| e.to_string())?
            .seed(sizing.seed)
            .build()
            .map(Multi)
            .map_err(|e| e.to_string())
    }));
    rows
}

/// The keys a row name says it was asked by, if any (`[field 1]`).
pub fn kind_of(structure: &str) -> Option<&str> {
    let start = structure.rfind('[')?;
    structure[start + 1..].strip_suffix(']')
}
