//! Redis Cluster's key hash, on its own: no item here names anything else of this crate, so
//! the test kit (`bloomkit-testkit`, which this crate cannot depend on nor it on this one's
//! private items) compiles this same file into its cluster harness with `#[path]`.

/// The hash slot of `key` (0..16384), as Redis Cluster computes it: CRC16 (XMODEM) of the
/// key, or of its hash tag (the bytes between the first `{` and the next `}`, when there
/// are some), modulo 16384.
pub(crate) fn slot_of(key: &[u8]) -> u16 {
    let tagged = key.iter().position(|&b| b == b'{').and_then(|open| {
        let rest = &key[open + 1..];
        let close = rest.iter().position(|&b| b == b'}')?;
        (close > 0).then(|| &rest[..close])
    });
    crc16_xmodem(tagged.unwrap_or(key)) % 16_384
}

/// CRC16-XMODEM (polynomial 0x1021, initial value 0), Redis Cluster's key hash.
pub(crate) fn crc16_xmodem(bytes: &[u8]) -> u16 {
    let mut crc = 0u16;
    for &b in bytes {
        crc ^= u16::from(b) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}
