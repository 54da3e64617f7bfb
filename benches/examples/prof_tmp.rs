//! tmp
fn main() {
    for n in [11477u64, 11000, 12000, 10000, 9000, 13000, 15000] {
        let mut d: Vec<u64> = (0..n).map(|i| bloomkit_benches::key(i ^ 0xabc)).collect();
        let g = bloomkit::BinaryFuse8::<u64>::from_keys(&d);
        d.sort_unstable();
        let x = xorf::BinaryFuse8::try_from(&d);
        println!(
            "{n}: ours {:?} xorf {:?}",
            g.map(|f| f.num_slots()),
            x.map(|f| f.fingerprints.len())
        );
    }
}
