//! `SplitBlockFilter` against the `parquet` crate (parquet-rs): the same values give the
//! same header and bitset bytes as its `Sbbf`; it reads ours and answers as we do; and we
//! read the filter it wrote into a real Parquet file, written here, and answer identically
//! for every value.

use std::sync::Arc;

use bloomkit_classic::{ParquetValue, SplitBlockFilter};
use bloomkit_testkit::{seeded_rng, SplitMix64};
use parquet::bloom_filter::Sbbf;
use parquet::data_type::{AsBytes, ByteArray, ByteArrayType, DoubleType, Int32Type, Int64Type};
use parquet::file::properties::ReaderProperties;
use parquet::file::properties::WriterProperties;
use parquet::file::reader::FileReader;
use parquet::file::serialized_reader::{ReadOptionsBuilder, SerializedFileReader};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;

/// parquet-rs's `Sbbf` written out: header and bitset.
fn parquet_bytes(sbbf: &Sbbf) -> Vec<u8> {
    let mut out = Vec::new();
    sbbf.write(&mut out).expect("writes to a Vec");
    out
}

fn strings(rng: &mut SplitMix64, count: usize) -> Vec<String> {
    (0..count)
        .map(|_| {
            let len = 1 + rng.next_u64() as usize % 40;
            (0..len)
                .map(|_| char::from(b'a' + (rng.next_u64() % 26) as u8))
                .collect()
        })
        .collect()
}

/// Inserts `values` into both filters sized alike, compares the bytes, then checks that
/// each answers every member and every probe as the other does.
fn same_as_parquet<T, Q>(values: &[T], probes: &[T], as_parquet: impl Fn(&T) -> &Q)
where
    T: ParquetValue,
    Q: AsBytes + ?Sized,
{
    for (ndv, fpp) in [(values.len() as u64, 0.01), (1, 0.5), (1_000, 0.001)] {
        let mut sbbf = Sbbf::new_with_ndv_fpp(ndv, fpp).expect("valid");
        let mut ours = SplitBlockFilter::<T>::with_parquet_sizing(ndv, fpp).expect("valid");
        assert_eq!(ours.num_blocks() as usize, sbbf.num_blocks(), "ndv {ndv}");
        for v in values {
            sbbf.insert(as_parquet(v));
            ours.insert(v);
        }
        assert_eq!(
            ours.to_parquet_bytes(),
            parquet_bytes(&sbbf),
            "ndv {ndv} fpp {fpp}"
        );

        // parquet reads ours and answers as we do, for members and probes alike.
        let theirs = Sbbf::from_bytes(&ours.to_parquet_bytes()).expect("parquet reads ours");
        for v in values.iter().chain(probes) {
            assert_eq!(theirs.check(as_parquet(v)), ours.contains(v));
        }
        for v in values {
            assert!(ours.contains(v));
        }
    }
}

#[test]
fn same_values_give_the_same_bytes_as_parquets_sbbf() {
    let mut rng = seeded_rng("same_bytes");
    let ints: Vec<i32> = (0..5_000).map(|_| rng.next_u64() as i32).collect();
    let probes: Vec<i32> = (0..20_000).map(|_| rng.next_u64() as i32).collect();
    same_as_parquet(&ints, &probes, |v| v);

    let longs: Vec<i64> = (0..5_000).map(|_| rng.next_u64() as i64).collect();
    let probes: Vec<i64> = (0..20_000).map(|_| rng.next_u64() as i64).collect();
    same_as_parquet(&longs, &probes, |v| v);

    let doubles: Vec<f64> = (0..5_000).map(|_| rng.next_u64() as f64 / 7.0).collect();
    let probes: Vec<f64> = (0..20_000).map(|_| rng.next_u64() as f64 / 3.0).collect();
    same_as_parquet(&doubles, &probes, |v| v);

    let words = strings(&mut rng, 5_000);
    let probes = strings(&mut rng, 20_000);
    same_as_parquet(&words, &probes, |v| v.as_str());

    let blobs: Vec<Vec<u8>> = words.iter().map(|w| w.as_bytes().to_vec()).collect();
    same_as_parquet(&blobs, &[], |v| v.as_slice());
}

#[test]
fn parquet_reads_a_filter_sized_for_its_rate() {
    let mut rng = seeded_rng("parquet_reads_ours");
    let mut ours = SplitBlockFilter::<i64>::new(100_000, 0.01).expect("valid");
    let values: Vec<i64> = (0..100_000).map(|_| rng.next_u64() as i64).collect();
    ours.insert_batch(&values);
    let theirs = Sbbf::from_bytes(&ours.to_parquet_bytes()).expect("parquet reads ours");
    assert_eq!(theirs.num_blocks() as u64, ours.num_blocks());
    assert!(values.iter().all(|v| theirs.check(v)));
    for _ in 0..100_000 {
        let v = rng.next_u64() as i64;
        assert_eq!(theirs.check(&v), ours.contains(&v));
    }
}

/// Writes a Parquet file with Bloom filters on (parquet-rs's writer), then reads each
/// column's filter straight from the file's bytes at the offset its metadata gives, and
/// also as parquet-rs's reader loads it.
#[test]
fn we_read_the_filters_parquet_wrote_into_a_file() {
    let mut rng = seeded_rng("file");
    let rows = 20_000;
    let ids: Vec<i64> = (0..rows).map(|_| rng.next_u64() as i64).collect();
    let codes: Vec<i32> = (0..rows).map(|_| rng.next_u64() as i32).collect();
    let scores: Vec<f64> = (0..rows).map(|_| rng.next_u64() as f64 / 11.0).collect();
    let names = strings(&mut rng, rows);

    let dir = std::env::temp_dir().join(format!("bloomkit-parquet-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("rows.parquet");
    let schema = Arc::new(
        parse_message_type(
            "message rows { REQUIRED INT64 id; REQUIRED INT32 code; \
             REQUIRED DOUBLE score; REQUIRED BYTE_ARRAY name (UTF8); }",
        )
        .expect("schema"),
    );
    let props = Arc::new(
        WriterProperties::builder()
            .set_bloom_filter_enabled(true)
            .set_bloom_filter_fpp(0.01)
            .set_bloom_filter_max_ndv(rows as u64)
            .build(),
    );
    let file = std::fs::File::create(&path).expect("create");
    let mut writer = SerializedFileWriter::new(file, schema, props).expect("writer");
    let mut group = writer.next_row_group().expect("row group");
    let byte_arrays: Vec<ByteArray> = names.iter().map(|s| ByteArray::from(s.as_str())).collect();
    let mut column = 0;
    while let Some(mut col) = group.next_column().expect("column") {
        match column {
            0 => col.typed::<Int64Type>().write_batch(&ids, None, None),
            1 => col.typed::<Int32Type>().write_batch(&codes, None, None),
            2 => col.typed::<DoubleType>().write_batch(&scores, None, None),
            _ => col
                .typed::<ByteArrayType>()
                .write_batch(&byte_arrays, None, None),
        }
        .expect("write");
        col.close().expect("close column");
        column += 1;
    }
    group.close().expect("close row group");
    writer.close().expect("close file");

    let bytes = std::fs::read(&path).expect("read back");
    let options = ReadOptionsBuilder::new()
        .with_reader_properties(
            ReaderProperties::builder()
                .set_read_bloom_filter(true)
                .build(),
        )
        .build();
    let reader =
        SerializedFileReader::new_with_options(std::fs::File::open(&path).expect("open"), options)
            .expect("reader");
    let row_group = reader.get_row_group(0).expect("row group 0");
    let meta = reader.metadata().row_group(0);

    // Each column's filter from the file's own bytes, and as parquet-rs loaded it.
    let filter_bytes = |i: usize| -> Vec<u8> {
        let c = meta.column(i);
        let offset = c.bloom_filter_offset().expect("a filter was written") as usize;
        match c.bloom_filter_length() {
            Some(len) => bytes[offset..offset + len as usize].to_vec(),
            // Without a recorded length, the filter runs to where parquet-rs's copy ends.
            None => {
                let len = parquet_bytes(row_group.get_column_bloom_filter(i).unwrap()).len();
                bytes[offset..offset + len].to_vec()
            }
        }
    };
    let theirs = |i: usize| row_group.get_column_bloom_filter(i).expect("loaded");

    let id_filter = SplitBlockFilter::<i64>::from_parquet_bytes(&filter_bytes(0)).expect("ours");
    let code_filter = SplitBlockFilter::<i32>::from_parquet_bytes(&filter_bytes(1)).expect("ours");
    let score_filter = SplitBlockFilter::<f64>::from_parquet_bytes(&filter_bytes(2)).expect("ours");
    let name_filter = SplitBlockFilter::<str>::from_parquet_bytes(&filter_bytes(3)).expect("ours");
    for (i, f) in [
        (0, id_filter.to_parquet_bytes()),
        (1, code_filter.to_parquet_bytes()),
    ] {
        assert_eq!(f, parquet_bytes(theirs(i)), "column {i}");
    }
    assert_eq!(score_filter.to_parquet_bytes(), parquet_bytes(theirs(2)));
    assert_eq!(name_filter.to_parquet_bytes(), parquet_bytes(theirs(3)));

    // Every written value is found; every probe is answered as parquet-rs answers it.
    assert!(ids.iter().all(|v| id_filter.contains(v)));
    assert!(codes.iter().all(|v| code_filter.contains(v)));
    assert!(scores.iter().all(|v| score_filter.contains(v)));
    assert!(names.iter().all(|v| name_filter.contains(v.as_str())));
    let mut absent_found = 0;
    for _ in 0..50_000 {
        let x = rng.next_u64();
        let (id, code, score) = (x as i64, (x >> 17) as i32, x as f64 / 13.0);
        assert_eq!(id_filter.contains(&id), theirs(0).check(&id));
        assert_eq!(code_filter.contains(&code), theirs(1).check(&code));
        assert_eq!(score_filter.contains(&score), theirs(2).check(&score));
        if id_filter.contains(&id) {
            absent_found += 1;
        }
    }
    for name in strings(&mut rng, 20_000) {
        assert_eq!(
            name_filter.contains(name.as_str()),
            theirs(3).check(name.as_str())
        );
    }
    println!(
        "parquet-rs's filter for {rows} ids: {} blocks, {absent_found} of 50,000 probes 'maybe'",
        id_filter.num_blocks()
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// Corrupted or truncated Parquet filter bytes are typed errors, never a panic.
#[test]
fn bad_bytes_are_errors() {
    let mut f = SplitBlockFilter::<u64>::new(1_000, 0.01).expect("valid");
    f.insert(&7);
    let bytes = f.to_parquet_bytes();
    for len in 0..bytes.len() {
        assert!(
            SplitBlockFilter::<u64>::from_parquet_bytes(&bytes[..len]).is_err(),
            "{len}"
        );
    }
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(SplitBlockFilter::<u64>::from_parquet_bytes(&longer)
        .unwrap_err()
        .to_string()
        .contains("trailing"));
    // Every single-byte change of the header is an error or a filter (never a panic).
    let header = bytes.len() - f.to_bitset().len();
    for i in 0..header {
        for b in [0x00, 0x01, 0x0f, 0x19, 0x1c, 0x80, 0xff] {
            let mut bad = bytes.clone();
            bad[i] = b;
            let _ = SplitBlockFilter::<u64>::from_parquet_bytes(&bad);
        }
    }
    assert!(SplitBlockFilter::<u64>::from_bitset(&[0; 31]).is_err());
    assert!(SplitBlockFilter::<u64>::from_bitset(&[]).is_err());
}
