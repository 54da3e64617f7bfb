//! Parquet's `BloomFilterHeader`, in Thrift's compact protocol: written byte for byte as
//! parquet-rs and parquet-java write it, and read by a small reader that checks every length
//! against the input, skips fields it does not know (as Thrift readers must), and refuses the
//! algorithms, hashes and compressions the spec may add later, which this filter cannot read.

use bloomkit_core::DecodeError;

/// The compact protocol's type codes (of a field header's low nibble).
mod ty {
    pub(super) const BOOL_TRUE: u8 = 1;
    pub(super) const BOOL_FALSE: u8 = 2;
    pub(super) const BYTE: u8 = 3;
    pub(super) const I16: u8 = 4;
    pub(super) const I32: u8 = 5;
    pub(super) const I64: u8 = 6;
    pub(super) const DOUBLE: u8 = 7;
    pub(super) const BINARY: u8 = 8;
    pub(super) const LIST: u8 = 9;
    pub(super) const SET: u8 = 10;
    pub(super) const MAP: u8 = 11;
    pub(super) const STRUCT: u8 = 12;
}

/// Nesting deeper than this is refused rather than followed (a stack overflow is not an
/// error message). Parquet's header nests three deep.
const MAX_DEPTH: u32 = 64;

fn invalid(what: impl Into<String>) -> DecodeError {
    DecodeError::NotSplitBlock(what.into())
}

/// The header of a split-block filter of `num_bytes` bytes: `numBytes`, then the algorithm
/// (`BLOCK`), hash (`XXHASH`) and compression (`UNCOMPRESSED`), each a union whose field 1
/// is an empty struct.
pub(crate) fn write_header(num_bytes: i32, out: &mut Vec<u8>) {
    out.push(0x15); // field 1, i32
    let mut zigzag = ((num_bytes << 1) ^ (num_bytes >> 31)) as u32;
    loop {
        let byte = (zigzag & 0x7f) as u8;
        zigzag >>= 7;
        if zigzag == 0 {
            out.push(byte);
            break;
        }
        out.push(byte | 0x80);
    }
    // Fields 2, 3 and 4 (each one past the last: delta 1, type struct), each a union holding
    // field 1, an empty struct.
    for head in [0x1c; 3] {
        out.extend_from_slice(&[head, 0x1c, 0x00, 0x00]);
    }
    out.push(0x00); // end of the header
}

/// Reads a header from the front of `bytes`: the bitset's length in bytes, and the header's.
pub(crate) fn read_header(bytes: &[u8]) -> Result<(u64, usize), DecodeError> {
    let mut r = Reader { bytes, at: 0 };
    let mut num_bytes = None;
    let mut seen = [false; 3];
    let mut last = 0i16;
    while let Some((id, t)) = r.field_header(&mut last)? {
        match (id, t) {
            (1, ty::I32) => num_bytes = Some(r.i32()?),
            (2..=4, ty::STRUCT) => {
                let which = ["algorithm", "hash", "compression"][(id - 2) as usize];
                let want = ["BLOCK", "XXHASH", "UNCOMPRESSED"][(id - 2) as usize];
                r.union_of_field_1(which, want)?;
                seen[(id - 2) as usize] = true;
            }
            (1..=4, t) => {
                return Err(invalid(format!("header field {id} has Thrift type {t}")));
            }
            (_, t) => r.skip(t, 0)?,
        }
    }
    let num_bytes = num_bytes.ok_or_else(|| invalid("the header has no numBytes"))?;
    for (name, seen) in ["algorithm", "hash", "compression"].iter().zip(seen) {
        if !seen {
            return Err(invalid(format!("the header has no {name}")));
        }
    }
    let num_bytes = u64::try_from(num_bytes)
        .ok()
        .filter(|&n| n > 0 && n % 32 == 0)
        .ok_or_else(|| {
            invalid(format!(
                "numBytes is {num_bytes}, not a positive multiple of 32 (whole blocks)"
            ))
        })?;
    Ok((num_bytes, r.at))
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, n: u64) -> Result<&[u8], DecodeError> {
        let available = (self.bytes.len() - self.at) as u64;
        if n > available {
            return Err(DecodeError::Truncated {
                needed: (self.at as u64).saturating_add(n),
                available: self.bytes.len() as u64,
            });
        }
        let start = self.at;
        self.at += n as usize;
        Ok(&self.bytes[start..self.at])
    }

    fn byte(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }

    fn varint(&mut self) -> Result<u64, DecodeError> {
        let mut value = 0u64;
        for shift in (0..70).step_by(7) {
            let b = self.byte()?;
            if shift == 63 && b > 1 {
                return Err(invalid("a varint overflows 64 bits"));
            }
            value |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(invalid("a varint overflows 64 bits"))
    }

    fn zigzag(&mut self) -> Result<i64, DecodeError> {
        let v = self.varint()?;
        Ok((v >> 1) as i64 ^ -((v & 1) as i64))
    }

    fn i32(&mut self) -> Result<i64, DecodeError> {
        let v = self.zigzag()?;
        i32::try_from(v)
            .map(i64::from)
            .map_err(|_| invalid(format!("an i32 field holds {v}")))
    }

    /// The next field's id and type, or `None` at the end of the struct.
    fn field_header(&mut self, last: &mut i16) -> Result<Option<(i16, u8)>, DecodeError> {
        let b = self.byte()?;
        if b == 0 {
            return Ok(None);
        }
        let delta = i16::from(b >> 4);
        let id = if delta == 0 {
            let v = self.zigzag()?;
            i16::try_from(v).map_err(|_| invalid(format!("field id {v}")))?
        } else {
            last.checked_add(delta)
                .ok_or_else(|| invalid("field ids overflow"))?
        };
        *last = id;
        Ok(Some((id, b & 0x0f)))
    }

    /// A union whose only accepted member is field 1, an (empty, or skipped) struct.
    fn union_of_field_1(&mut self, which: &str, want: &str) -> Result<(), DecodeError> {
        let mut last = 0;
        let mut found = false;
        while let Some((id, t)) = self.field_header(&mut last)? {
            if id == 1 && t == ty::STRUCT && !found {
                self.skip(ty::STRUCT, 1)?;
                found = true;
            } else {
                return Err(invalid(format!(
                    "{which} is member {id} of its union, not {want} (member 1): \
                     this filter reads only BLOCK / XXHASH / UNCOMPRESSED"
                )));
            }
        }
        if found {
            Ok(())
        } else {
            Err(invalid(format!("{which} names no member")))
        }
    }

    /// Skips one element of a list, set or map: as [`skip`](Self::skip), except that a bool
    /// element is one byte (its value), where a bool field has none. Every element thus
    /// consumes input, so a huge announced length ends at the input's end (an error), not
    /// after 2^64 turns of a loop that reads nothing.
    fn skip_element(&mut self, t: u8, depth: u32) -> Result<(), DecodeError> {
        if t == ty::BOOL_TRUE || t == ty::BOOL_FALSE {
            self.byte().map(drop)
        } else {
            self.skip(t, depth)
        }
    }

    /// Skips one value of type `t`.
    fn skip(&mut self, t: u8, depth: u32) -> Result<(), DecodeError> {
        if depth > MAX_DEPTH {
            return Err(invalid("values nest too deep"));
        }
        match t {
            ty::BOOL_TRUE | ty::BOOL_FALSE => {}
            ty::BYTE => {
                self.byte()?;
            }
            ty::I16 | ty::I32 | ty::I64 => {
                self.varint()?;
            }
            ty::DOUBLE => {
                self.take(8)?;
            }
            ty::BINARY => {
                let len = self.varint()?;
                self.take(len)?;
            }
            ty::LIST | ty::SET => {
                let head = self.byte()?;
                let len = match head >> 4 {
                    15 => self.varint()?,
                    short => u64::from(short),
                };
                for _ in 0..len {
                    self.skip_element(head & 0x0f, depth + 1)?;
                }
            }
            ty::MAP => {
                let len = self.varint()?;
                if len > 0 {
                    let kinds = self.byte()?;
                    for _ in 0..len {
                        self.skip_element(kinds >> 4, depth + 1)?;
                        self.skip_element(kinds & 0x0f, depth + 1)?;
                    }
                }
            }
            ty::STRUCT => {
                let mut last = 0;
                while let Some((_, t)) = self.field_header(&mut last)? {
                    self.skip(t, depth + 1)?;
                }
            }
            t => return Err(invalid(format!("unknown Thrift type {t}"))),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_headers_read_back() {
        for n in [32, 64, 1 << 10, 1 << 20, 128 << 20, i32::MAX / 32 * 32] {
            let mut out = Vec::new();
            write_header(n, &mut out);
            assert_eq!(read_header(&out).unwrap(), (n as u64, out.len()), "{n}");
        }
    }

    #[test]
    fn unknown_fields_are_skipped_and_other_algorithms_refused() {
        // numBytes 64 (zigzag 128), the algorithm (field 2) and hash (field 3) as usual,
        // then unknown fields 9 (a binary "hi") and 10 (a list of two i32), then the
        // compression, field 4, named by the long form (its id as a zigzag varint: deltas
        // only count up), then the end.
        let mut bytes = vec![0x15, 0x80, 0x01];
        bytes.extend_from_slice(&[0x1c, 0x1c, 0x00, 0x00, 0x1c, 0x1c, 0x00, 0x00]);
        bytes.extend_from_slice(&[0x68, 0x02, b'h', b'i', 0x19, 0x25, 0x02, 0x04]);
        bytes.extend_from_slice(&[0x0c, 0x08, 0x1c, 0x00, 0x00, 0x00]);
        assert_eq!(read_header(&bytes).unwrap(), (64, bytes.len()));

        let mut other = Vec::new();
        write_header(64, &mut other);
        other[4] = 0x2c; // the algorithm's member 2, not BLOCK
        let err = read_header(&other).unwrap_err().to_string();
        assert!(err.contains("algorithm is member 2"), "{err}");
    }

    #[test]
    fn bad_headers_are_errors() {
        let mut good = Vec::new();
        write_header(64, &mut good);
        for len in 0..good.len() {
            assert!(read_header(&good[..len]).is_err(), "truncated at {len}");
        }
        let mut odd = Vec::new();
        write_header(33, &mut odd);
        assert!(read_header(&odd)
            .unwrap_err()
            .to_string()
            .contains("multiple of 32"));
        let mut negative = Vec::new();
        write_header(-32, &mut negative);
        assert!(read_header(&negative).is_err());
        assert!(read_header(&[0x00])
            .unwrap_err()
            .to_string()
            .contains("numBytes"));
        // A deep nest of lists is refused, not followed until the stack runs out.
        // A map announcing 2^62 pairs of bools (a bool field reads no byte; a bool element
        // one) ends at the input's end.
        let huge_map = [
            0x15, 0x80, 0x01, 0x8b, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40, 0x11,
            0x01,
        ];
        assert!(matches!(
            read_header(&huge_map),
            Err(DecodeError::Truncated { .. })
        ));
        let mut deep = vec![0x15, 0x80, 0x01, 0x89]; // numBytes, then field 9, a list
        deep.extend(std::iter::repeat_n(0x19, 10_000)); // of one list of one list ...
        assert!(read_header(&deep).is_err());
    }
}
