//! Reading and writing the protocol's basic types ("Protocol Basic Data Types"): fixed-length
//! little-endian integers, length-encoded integers and strings, NUL-terminated strings.
//! The reader never panics: past the end it returns zeros/empty slices and remembers it failed.

pub fn u24(b: &[u8]) -> usize {
    b[0] as usize | (b[1] as usize) << 8 | (b[2] as usize) << 16
}

pub struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
    failed: bool,
}

impl<'a> Reader<'a> {
    pub fn new(b: &'a [u8]) -> Self {
        Reader {
            b,
            pos: 0,
            failed: false,
        }
    }
    pub fn pos(&self) -> usize {
        self.pos
    }
    pub fn failed(&self) -> bool {
        self.failed
    }
    pub fn is_empty(&self) -> bool {
        self.pos >= self.b.len()
    }
    pub fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }
    pub fn take(&mut self, n: usize) -> &'a [u8] {
        if self.pos + n > self.b.len() {
            self.failed = true;
            self.pos = self.b.len();
            return &[];
        }
        let s = &self.b[self.pos..self.pos + n];
        self.pos += n;
        s
    }
    pub fn skip(&mut self, n: usize) {
        self.take(n);
    }
    pub fn u8(&mut self) -> u8 {
        self.take(1).first().copied().unwrap_or(0)
    }
    pub fn u16(&mut self) -> u16 {
        let s = self.take(2);
        if s.len() == 2 {
            u16::from_le_bytes([s[0], s[1]])
        } else {
            0
        }
    }
    pub fn u32(&mut self) -> u32 {
        let s = self.take(4);
        if s.len() == 4 {
            u32::from_le_bytes([s[0], s[1], s[2], s[3]])
        } else {
            0
        }
    }
    pub fn rest(&mut self) -> &'a [u8] {
        let s = &self.b[self.pos.min(self.b.len())..];
        self.pos = self.b.len();
        s
    }
    /// A NUL-terminated string (without the NUL); the rest if there is no NUL.
    pub fn nul_str(&mut self) -> &'a [u8] {
        let rest = &self.b[self.pos.min(self.b.len())..];
        match rest.iter().position(|&c| c == 0) {
            Some(i) => {
                self.pos += i + 1;
                &rest[..i]
            }
            None => {
                self.pos = self.b.len();
                rest
            }
        }
    }
}

/// A length-encoded integer (0xFB, NULL in rows, reads as 0).
pub fn lenenc_int(r: &mut Reader) -> u64 {
    match r.u8() {
        0xFC => r.u16() as u64,
        0xFD => {
            let s = r.take(3);
            if s.len() == 3 {
                u24(s) as u64
            } else {
                0
            }
        }
        0xFE => {
            let s = r.take(8);
            if s.len() == 8 {
                u64::from_le_bytes(s.try_into().unwrap_or([0; 8]))
            } else {
                0
            }
        }
        0xFB => 0,
        b => b as u64,
    }
}

pub fn lenenc_str<'a>(r: &mut Reader<'a>) -> &'a [u8] {
    let n = lenenc_int(r) as usize;
    r.take(n)
}

pub fn put_lenenc_int(w: &mut Vec<u8>, n: u64) {
    if n < 251 {
        w.push(n as u8);
    } else if n < 1 << 16 {
        w.push(0xFC);
        w.extend_from_slice(&(n as u16).to_le_bytes());
    } else if n < 1 << 24 {
        w.push(0xFD);
        w.extend_from_slice(&(n as u32).to_le_bytes()[..3]);
    } else {
        w.push(0xFE);
        w.extend_from_slice(&n.to_le_bytes());
    }
}

pub fn put_lenenc_str(w: &mut Vec<u8>, s: &[u8]) {
    put_lenenc_int(w, s.len() as u64);
    w.extend_from_slice(s);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lenenc_round_trip() {
        for n in [
            0u64,
            250,
            251,
            65535,
            65536,
            16_777_215,
            16_777_216,
            u64::MAX,
        ] {
            let mut w = Vec::new();
            put_lenenc_int(&mut w, n);
            let mut r = Reader::new(&w);
            assert_eq!(lenenc_int(&mut r), n);
            assert!(r.is_empty() && !r.failed());
        }
    }

    #[test]
    fn short_input_does_not_panic() {
        let mut r = Reader::new(&[0xFD, 1]);
        assert_eq!(lenenc_int(&mut r), 0);
        assert!(r.failed());
        let mut r = Reader::new(&[5, b'a']);
        assert_eq!(lenenc_str(&mut r), b"");
    }
}
