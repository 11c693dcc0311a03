//! The bytes distributed search sends: records of fixed-width little-endian
//! numbers and length-prefixed byte strings, written into one buffer per
//! destination and read back with every length checked. A buffer that does
//! not read is an error naming the record, never a panic.

use crate::property::Kind;

/// A buffer being written.
#[derive(Default)]
pub(super) struct Out(pub Vec<u8>);

impl Out {
    pub fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    pub fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u128(&mut self, v: u128) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    pub fn bytes(&mut self, v: &[u8]) {
        self.u32(v.len() as u32);
        self.0.extend_from_slice(v);
    }
    pub fn str(&mut self, v: &str) {
        self.bytes(v.as_bytes());
    }
    pub fn opt_u64(&mut self, v: Option<u64>) {
        match v {
            None => self.u8(0),
            Some(v) => {
                self.u8(1);
                self.u64(v);
            }
        }
    }
    pub fn kind(&mut self, k: Kind) {
        self.u8(match k {
            Kind::Always => 0,
            Kind::Sometimes => 1,
            Kind::Eventually => 2,
        });
    }
}

/// A buffer being read.
pub(super) struct In<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> In<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        In { bytes, at: 0 }
    }
    pub fn done(&self) -> bool {
        self.at == self.bytes.len()
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len()).ok_or_else(|| {
            format!("internal: a distributed search message ends early ({} bytes, {} more wanted)", self.bytes.len(), n)
        })?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }
    pub fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    pub fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
    pub fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().expect("8 bytes")))
    }
    pub fn u128(&mut self) -> Result<u128, String> {
        Ok(u128::from_le_bytes(self.take(16)?.try_into().expect("16 bytes")))
    }
    pub fn bytes(&mut self) -> Result<&'a [u8], String> {
        let n = self.u32()? as usize;
        self.take(n)
    }
    pub fn str(&mut self) -> Result<String, String> {
        Ok(String::from_utf8_lossy(self.bytes()?).into_owned())
    }
    pub fn opt_u64(&mut self) -> Result<Option<u64>, String> {
        Ok(match self.u8()? {
            0 => None,
            _ => Some(self.u64()?),
        })
    }
    pub fn kind(&mut self) -> Result<Kind, String> {
        Ok(match self.u8()? {
            0 => Kind::Always,
            1 => Kind::Sometimes,
            _ => Kind::Eventually,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{In, Out};

    #[test]
    fn what_is_written_reads_back_and_a_short_buffer_is_an_error() {
        let mut o = Out::default();
        o.u8(7);
        o.u32(1 << 20);
        o.u64(u64::MAX - 3);
        o.u128(1 << 100);
        o.bytes(b"abc");
        o.str("witness");
        o.opt_u64(None);
        o.opt_u64(Some(9));
        let mut i = In::new(&o.0);
        assert_eq!(i.u8(), Ok(7));
        assert_eq!(i.u32(), Ok(1 << 20));
        assert_eq!(i.u64(), Ok(u64::MAX - 3));
        assert_eq!(i.u128(), Ok(1 << 100));
        assert_eq!(i.bytes(), Ok(&b"abc"[..]));
        assert_eq!(i.str().as_deref(), Ok("witness"));
        assert_eq!(i.opt_u64(), Ok(None));
        assert_eq!(i.opt_u64(), Ok(Some(9)));
        assert!(i.done());
        let mut short = In::new(&o.0[..10]);
        assert_eq!(short.u8(), Ok(7));
        assert_eq!(short.u32(), Ok(1 << 20));
        assert!(short.u64().unwrap_err().contains("ends early"));
    }
}
