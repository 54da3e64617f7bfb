//! The bit array both JVM formats share: `long` words (bit `i` is bit `i % 64` of word
//! `i / 64`), written as a big-endian `int` count then the words, big-endian (Java's
//! `DataOutputStream`). Guava's `LockFreeBitArray` and Spark's `BitArray` are this layout.

use std::io::{self, Read, Write};

use crate::Error;

/// The most words either format can declare: a Java array's length is an `int`.
pub(crate) const MAX_WORDS: u64 = i32::MAX as u64;

/// Words read by a stream at a time: memory grows with what arrives, not with what a
/// header declares.
const CHUNK_WORDS: usize = 1 << 16;

/// A bit array of 64-bit words.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Words {
    pub(crate) words: Vec<u64>,
}

impl Words {
    /// `count` zero words, allocated fallibly.
    pub(crate) fn zeroed(count: u64) -> Result<Words, Error> {
        if count == 0 || count > MAX_WORDS {
            return Err(Error::WordCount(count as i64));
        }
        let mut words = Vec::new();
        words
            .try_reserve_exact(count as usize)
            .map_err(|_| Error::AllocationFailed { bytes: count * 8 })?;
        words.resize(count as usize, 0);
        Ok(Words { words })
    }

    /// The number of bits (64 a word).
    #[inline]
    pub(crate) fn bit_size(&self) -> u64 {
        self.words.len() as u64 * 64
    }

    /// Sets bit `i` (below [`bit_size`](Self::bit_size)); whether it was clear.
    #[inline]
    pub(crate) fn set(&mut self, i: u64) -> bool {
        let w = &mut self.words[(i >> 6) as usize];
        let mask = 1u64 << (i & 63);
        let was_clear = *w & mask == 0;
        *w |= mask;
        was_clear
    }

    /// Bit `i` (below [`bit_size`](Self::bit_size)).
    #[inline]
    pub(crate) fn get(&self, i: u64) -> bool {
        self.words[(i >> 6) as usize] >> (i & 63) & 1 == 1
    }

    /// Asks for the line holding bit `i`.
    #[inline]
    pub(crate) fn prefetch(&self, i: u64) {
        bloomkit_core::batch::prefetch_at(&self.words, (i >> 6) as usize);
    }

    /// The bits set.
    pub(crate) fn count_ones(&self) -> u64 {
        self.words.iter().map(|w| u64::from(w.count_ones())).sum()
    }

    /// The length of [`write`](Self::write)'s bytes.
    pub(crate) fn encoded_len(&self) -> u64 {
        4 + 8 * self.words.len() as u64
    }

    /// Writes the count and the words, big-endian.
    pub(crate) fn write(&self, out: &mut impl Write) -> io::Result<()> {
        // `zeroed` and `decode` keep the count within an `int`.
        out.write_all(&(self.words.len() as i32).to_be_bytes())?;
        let mut buf = Vec::with_capacity(8 * CHUNK_WORDS.min(self.words.len()));
        for chunk in self.words.chunks(CHUNK_WORDS) {
            buf.clear();
            for w in chunk {
                buf.extend_from_slice(&w.to_be_bytes());
            }
            out.write_all(&buf)?;
        }
        Ok(())
    }

    /// The count and the words at the start of `bytes`, which must end with them: a count
    /// that is not positive, bytes short of it or bytes after it are errors, found before
    /// anything is allocated.
    pub(crate) fn decode(bytes: &[u8], at: u64) -> Result<Words, Error> {
        let Some((count, rest)) = bytes.split_first_chunk::<4>() else {
            return Err(Error::Truncated {
                needed: at + 4,
                got: at + bytes.len() as u64,
            });
        };
        let count = Self::check_count(i32::from_be_bytes(*count))?;
        let needed = at + 4 + 8 * count;
        let got = at + bytes.len() as u64;
        if got < needed {
            return Err(Error::Truncated { needed, got });
        }
        if got > needed {
            return Err(Error::TrailingBytes {
                expected: needed,
                got,
            });
        }
        let mut words = Words::zeroed(count)?;
        for (w, b) in words.words.iter_mut().zip(rest.chunks_exact(8)) {
            *w = u64::from_be_bytes(b.try_into().unwrap_or_default());
        }
        Ok(words)
    }

    /// The count and the words from a stream, read in chunks (a count of two billion words
    /// from a short stream fails when the stream ends, having held at most what arrived).
    pub(crate) fn read(input: &mut impl Read, at: u64) -> Result<Words, Error> {
        let mut count = [0u8; 4];
        read_exact(input, &mut count, at)?;
        let count = Self::check_count(i32::from_be_bytes(count))?;
        let mut words = Vec::new();
        let mut buf = vec![0u8; 8 * CHUNK_WORDS.min(count as usize)];
        let mut done = 0u64;
        while done < count {
            let n = (count - done).min(CHUNK_WORDS as u64) as usize;
            read_exact(input, &mut buf[..8 * n], at + 4 + 8 * done)?;
            words
                .try_reserve(n)
                .map_err(|_| Error::AllocationFailed { bytes: 8 * count })?;
            words.extend(
                buf[..8 * n]
                    .chunks_exact(8)
                    .map(|b| u64::from_be_bytes(b.try_into().unwrap_or_default())),
            );
            done += n as u64;
        }
        Ok(Words { words })
    }

    fn check_count(count: i32) -> Result<u64, Error> {
        if count <= 0 {
            return Err(Error::WordCount(i64::from(count)));
        }
        Ok(count as u64)
    }

    /// ORs `other`'s words into these (same length).
    pub(crate) fn or(&mut self, other: &Words) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a |= b;
        }
    }

    /// ANDs `other`'s words into these (same length).
    pub(crate) fn and(&mut self, other: &Words) {
        for (a, b) in self.words.iter_mut().zip(&other.words) {
            *a &= b;
        }
    }
}

/// `read_exact`, with a stream that ends early reported as [`Error::Truncated`] at byte
/// `at`.
pub(crate) fn read_exact(input: &mut impl Read, buf: &mut [u8], at: u64) -> Result<(), Error> {
    input.read_exact(buf).map_err(|e| {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            Error::Truncated {
                needed: at + buf.len() as u64,
                got: at,
            }
        } else {
            Error::Io(e)
        }
    })
}
