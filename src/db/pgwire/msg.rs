//! Messages of the PostgreSQL frontend/backend protocol v3 (PostgreSQL docs, "Message
//! Formats"): building frontend messages into a reused buffer and reading backend message
//! bodies in place. Pure functions, no I/O; the reader never panics on short input.

use crate::db::{ErrorClass, Value};

/// Protocol version 3.0 in the StartupMessage.
pub const PROTOCOL_V3: i32 = 196_608;
/// A backend message's header: type byte and a length that counts itself (4) but not the type.
pub const HEADER: usize = 5;
/// Largest backend message accepted (the server's own limit for most messages is 1 GB).
pub const MAX_MESSAGE: usize = 1 << 30;

/// Start a message of type `ty` (or a startup message when `ty` is 0); returns where its
/// length goes, for `finish`.
pub fn begin(w: &mut Vec<u8>, ty: u8) -> usize {
    if ty != 0 {
        w.push(ty);
    }
    let at = w.len();
    w.extend_from_slice(&[0; 4]);
    at
}

/// Write the length of the message started at `at` (everything from the length field on).
pub fn finish(w: &mut [u8], at: usize) {
    let len = (w.len() - at) as u32;
    w[at..at + 4].copy_from_slice(&len.to_be_bytes());
}

pub fn put_cstr(w: &mut Vec<u8>, s: &[u8]) {
    w.extend_from_slice(s);
    w.push(0);
}

/// StartupMessage: protocol 3.0 and the parameters as name/value pairs.
pub fn startup(w: &mut Vec<u8>, params: &[(&str, &str)]) {
    let at = begin(w, 0);
    w.extend_from_slice(&PROTOCOL_V3.to_be_bytes());
    for (k, v) in params {
        put_cstr(w, k.as_bytes());
        put_cstr(w, v.as_bytes());
    }
    w.push(0);
    finish(w, at);
}

/// PasswordMessage (also SASLResponse): `p` and the raw bytes (a password ends with its NUL).
pub fn password(w: &mut Vec<u8>, data: &[u8]) {
    let at = begin(w, b'p');
    w.extend_from_slice(data);
    finish(w, at);
}

/// SASLInitialResponse: mechanism name, then the client-first-message with its length.
pub fn sasl_initial(w: &mut Vec<u8>, mechanism: &str, data: &[u8]) {
    let at = begin(w, b'p');
    put_cstr(w, mechanism.as_bytes());
    w.extend_from_slice(&(data.len() as i32).to_be_bytes());
    w.extend_from_slice(data);
    finish(w, at);
}

/// Query (simple protocol).
pub fn query(w: &mut Vec<u8>, sql: &str) {
    let at = begin(w, b'Q');
    put_cstr(w, sql.as_bytes());
    finish(w, at);
}

/// Parse of a named statement; parameter types left to the server (0 given).
pub fn parse(w: &mut Vec<u8>, name: &str, sql: &str) {
    let at = begin(w, b'P');
    put_cstr(w, name.as_bytes());
    put_cstr(w, sql.as_bytes());
    w.extend_from_slice(&0i16.to_be_bytes());
    finish(w, at);
}

/// Describe of a named statement (`S`): answered by ParameterDescription and RowDescription
/// (or NoData).
pub fn describe_statement(w: &mut Vec<u8>, name: &str) {
    let at = begin(w, b'D');
    w.push(b'S');
    put_cstr(w, name.as_bytes());
    finish(w, at);
}

pub fn sync(w: &mut Vec<u8>) {
    w.extend_from_slice(&[b'S', 0, 0, 0, 4]);
}

pub fn terminate(w: &mut Vec<u8>) {
    w.extend_from_slice(&[b'X', 0, 0, 0, 4]);
}

/// Bind of the unnamed portal to statement `name`: every parameter and every result column
/// in text format (format code counts 0 mean "all text").
pub fn bind(w: &mut Vec<u8>, name: &str, params: &[Value]) {
    let at = begin(w, b'B');
    w.push(0); // unnamed portal
    put_cstr(w, name.as_bytes());
    w.extend_from_slice(&0i16.to_be_bytes()); // parameter format codes: all text
    w.extend_from_slice(&(params.len() as i16).to_be_bytes());
    for v in params {
        if let Value::Null = v {
            w.extend_from_slice(&(-1i32).to_be_bytes());
            continue;
        }
        let len_at = w.len();
        w.extend_from_slice(&[0; 4]);
        put_text(w, v);
        let len = (w.len() - len_at - 4) as i32;
        w[len_at..len_at + 4].copy_from_slice(&len.to_be_bytes());
    }
    w.extend_from_slice(&0i16.to_be_bytes()); // result format codes: all text
    finish(w, at);
}

/// Execute of the unnamed portal, all rows.
pub fn execute(w: &mut Vec<u8>) {
    w.extend_from_slice(&[b'E', 0, 0, 0, 9, 0, 0, 0, 0, 0]);
}

/// A value in PostgreSQL's text input form (NULL is written by the caller as length -1).
pub fn put_text(w: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Null => {}
        Value::Int(i) => put_int(w, *i),
        Value::Text(t) => w.extend_from_slice(t.as_bytes()),
        Value::Date { y, m, d } => {
            use std::io::Write;
            let _ = write!(w, "{y:04}-{m:02}-{d:02}");
        }
    }
}

/// Decimal digits of `i` without going through `fmt` (this is on every bound integer).
pub fn put_int(w: &mut Vec<u8>, i: i64) {
    let mut buf = [0u8; 20];
    let mut n = i.unsigned_abs();
    let mut p = buf.len();
    loop {
        p -= 1;
        buf[p] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    if i < 0 {
        w.push(b'-');
    }
    w.extend_from_slice(&buf[p..]);
}

/// A text-format integer column ("-42"); `None` when it is not a plain integer.
pub fn parse_int(b: &[u8]) -> Option<i64> {
    let (neg, digits) = match b.first() {
        Some(b'-') => (true, &b[1..]),
        Some(b'+') => (false, &b[1..]),
        _ => (false, b),
    };
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    let mut n: i64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_sub((c - b'0') as i64)?;
    }
    if neg {
        Some(n)
    } else {
        n.checked_neg()
    }
}

/// Big-endian reader over one message body.
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
    pub fn failed(&self) -> bool {
        self.failed
    }
    pub fn is_empty(&self) -> bool {
        self.pos >= self.b.len()
    }
    pub fn take(&mut self, n: usize) -> &'a [u8] {
        if n > self.b.len() - self.pos {
            self.failed = true;
            self.pos = self.b.len();
            return &[];
        }
        let s = &self.b[self.pos..self.pos + n];
        self.pos += n;
        s
    }
    pub fn i16(&mut self) -> i16 {
        let s = self.take(2);
        if s.len() == 2 {
            i16::from_be_bytes([s[0], s[1]])
        } else {
            0
        }
    }
    pub fn i32(&mut self) -> i32 {
        let s = self.take(4);
        if s.len() == 4 {
            i32::from_be_bytes([s[0], s[1], s[2], s[3]])
        } else {
            0
        }
    }
    pub fn rest(&mut self) -> &'a [u8] {
        let s = &self.b[self.pos..];
        self.pos = self.b.len();
        s
    }
    /// A NUL-terminated string without its NUL (the rest, and failed, when there is no NUL).
    pub fn cstr(&mut self) -> &'a [u8] {
        let rest = &self.b[self.pos..];
        match rest.iter().position(|&c| c == 0) {
            Some(i) => {
                self.pos += i + 1;
                &rest[..i]
            }
            None => {
                self.failed = true;
                self.pos = self.b.len();
                rest
            }
        }
    }
}

/// The columns of a DataRow body, `None` for NULL; `on_value` sees each in order. Returns
/// false when the body is malformed (lengths past its end, or bytes left over).
pub fn walk_data_row(body: &[u8], mut on_value: impl FnMut(Option<&[u8]>)) -> bool {
    let mut r = Reader::new(body);
    let n = r.i16();
    for _ in 0..n {
        let len = r.i32();
        if len < 0 {
            on_value(None);
        } else {
            on_value(Some(r.take(len as usize)));
        }
    }
    !r.failed() && r.is_empty()
}

/// Fields of an ErrorResponse or NoticeResponse that enginebench uses.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ServerError {
    /// Localized severity (`S`), as shown to users ("ERROR", "FATAL").
    pub severity: String,
    /// Non-localized severity (`V`, servers 9.6+), for decisions; falls back to `S`.
    pub severity_raw: String,
    pub code: String,
    pub message: String,
}

pub fn parse_error(body: &[u8]) -> ServerError {
    let mut e = ServerError::default();
    let mut r = Reader::new(body);
    while !r.is_empty() {
        let field = r.take(1)[0];
        if field == 0 {
            break;
        }
        let v = String::from_utf8_lossy(r.cstr()).into_owned();
        match field {
            b'S' => e.severity = v,
            b'V' => e.severity_raw = v,
            b'C' => e.code = v,
            b'M' => e.message = v,
            _ => {}
        }
    }
    if e.severity_raw.is_empty() {
        e.severity_raw = e.severity.clone();
    }
    e
}

/// Error classes by SQLSTATE (PostgreSQL docs, Appendix A "PostgreSQL Error Codes"); the same
/// table for both PostgreSQL clients.
pub fn class_of_sqlstate(code: &str) -> ErrorClass {
    match code {
        "40P01" => ErrorClass::Deadlock,
        "40001" => ErrorClass::SerializationFailure,
        "55P03" => ErrorClass::LockWaitTimeout,
        "23505" => ErrorClass::DuplicateKey,
        "57014" => ErrorClass::QueryTimeout,
        "53300" => ErrorClass::TooManyConnections,
        "28P01" | "28000" => ErrorClass::AccessDenied,
        c if c.starts_with("08") || c == "57P01" => ErrorClass::ConnectionLost,
        _ => ErrorClass::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn startup_and_simple_messages() {
        let mut w = Vec::new();
        startup(&mut w, &[("user", "pg"), ("database", "db")]);
        let mut expect = vec![0, 0, 0, 0, 0, 3, 0, 0];
        expect.extend_from_slice(b"user\0pg\0database\0db\0\0");
        let n = expect.len() as u8;
        expect[3] = n;
        assert_eq!(w, expect);

        w.clear();
        query(&mut w, "BEGIN");
        assert_eq!(w, b"Q\0\0\0\x0aBEGIN\0");
        w.clear();
        sync(&mut w);
        execute(&mut w);
        assert_eq!(w, b"S\0\0\0\x04E\0\0\0\x09\0\0\0\0\0");
    }

    #[test]
    fn parse_describe_bind() {
        let mut w = Vec::new();
        parse(&mut w, "s0", "SELECT $1");
        assert_eq!(w, b"P\0\0\0\x13s0\0SELECT $1\0\0\0");
        w.clear();
        describe_statement(&mut w, "s0");
        assert_eq!(w, b"D\0\0\0\x08Ss0\0");
        w.clear();
        bind(
            &mut w,
            "s1",
            &[
                Value::Int(-120),
                Value::Null,
                Value::Text("hé".into()),
                Value::Date {
                    y: 2001,
                    m: 2,
                    d: 3,
                },
            ],
        );
        let mut expect = b"B\0\0\0\0\0s1\0\0\0\0\x04".to_vec();
        expect.extend_from_slice(b"\0\0\0\x04-120");
        expect.extend_from_slice(b"\xff\xff\xff\xff");
        expect.extend_from_slice(b"\0\0\0\x03h\xc3\xa9");
        expect.extend_from_slice(b"\0\0\0\x0a2001-02-03");
        expect.extend_from_slice(b"\0\0");
        let len = (expect.len() - 1) as u8;
        expect[4] = len;
        assert_eq!(w, expect);
    }

    #[test]
    fn sasl_and_password_messages() {
        let mut w = Vec::new();
        sasl_initial(&mut w, "SCRAM-SHA-256", b"n,,n=,r=abc");
        let mut expect = b"p\0\0\0\x00SCRAM-SHA-256\0\0\0\0\x0bn,,n=,r=abc".to_vec();
        expect[4] = (expect.len() - 1) as u8;
        assert_eq!(w, expect);
        w.clear();
        password(&mut w, b"secret\0");
        assert_eq!(w, b"p\0\0\0\x0bsecret\0");
    }

    #[test]
    fn integers_both_ways() {
        for i in [0i64, 7, -1, 10, -120, 1_000_000, i64::MAX, i64::MIN] {
            let mut w = Vec::new();
            put_int(&mut w, i);
            assert_eq!(w, i.to_string().as_bytes());
            assert_eq!(parse_int(&w), Some(i));
        }
        for bad in [
            &b""[..],
            b"-",
            b"1.5",
            b"12a",
            b"99999999999999999999",
            b"t",
        ] {
            assert_eq!(parse_int(bad), None, "{:?}", bad);
        }
    }

    #[test]
    fn data_rows() {
        // 3 columns: "42", NULL, "" .
        let body = b"\0\x03\0\0\0\x0242\xff\xff\xff\xff\0\0\0\0";
        let mut seen = Vec::new();
        assert!(walk_data_row(body, |v| seen.push(v.map(|b| b.to_vec()))));
        assert_eq!(seen, vec![Some(b"42".to_vec()), None, Some(Vec::new())]);
        // Truncated: a length past the end.
        assert!(!walk_data_row(&body[..8], |_| {}));
        // Bytes left over.
        let mut long = body.to_vec();
        long.push(1);
        assert!(!walk_data_row(&long, |_| {}));
    }

    #[test]
    fn error_fields_and_classes() {
        let body = b"SERROR\0VERROR\0C23505\0Mduplicate key value\0Dx\0\0";
        let e = parse_error(body);
        assert_eq!(
            e,
            ServerError {
                severity: "ERROR".into(),
                severity_raw: "ERROR".into(),
                code: "23505".into(),
                message: "duplicate key value".into(),
            }
        );
        assert_eq!(class_of_sqlstate(&e.code), ErrorClass::DuplicateKey);
        assert_eq!(class_of_sqlstate("08006"), ErrorClass::ConnectionLost);
        assert_eq!(class_of_sqlstate("40P01"), ErrorClass::Deadlock);
        assert_eq!(class_of_sqlstate("42P01"), ErrorClass::Other);
        // Garbage does not panic.
        let _ = parse_error(b"S");
        let _ = parse_error(b"");
    }
}
