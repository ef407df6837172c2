//! The rows of a reply: columns, the binary protocol's values (walked in place, or decoded to
//! text for the few callers that keep them) and the text protocol's rows.

use super::*;

/// The binary protocol's type of a parameter value.
pub(super) fn param_type(v: &Value) -> u8 {
    match v {
        Value::Null => 6,         // MYSQL_TYPE_NULL
        Value::Int(_) => 8,       // MYSQL_TYPE_LONGLONG
        Value::Text(_) => 253,    // MYSQL_TYPE_VAR_STRING
        Value::Date { .. } => 10, // MYSQL_TYPE_DATE
    }
}

/// Column definition 4.1: catalog, schema, table, org_table, name, org_name, then fixed fields.
pub(super) fn parse_column(pk: &[u8]) -> Col {
    let mut r = Reader::new(pk);
    for _ in 0..6 {
        lenenc_str(&mut r);
    }
    lenenc_int(&mut r); // length of the fixed fields (0x0c)
    r.skip(2); // character set
    r.skip(4); // column length
    let ty = r.u8();
    let flags = r.u16();
    let decimals = r.u8();
    Col {
        ty,
        flags,
        decimals,
    }
}

/// Bytes of a binary-protocol value of type `ty` at the start of `rest`, or None if the row is
/// too short. Types from the protocol docs ("Binary Protocol Value").
pub(super) fn binary_len(ty: u8, rest: &[u8]) -> Option<usize> {
    let n = match ty {
        1 => 1,                                          // TINY
        2 | 13 => 2,                                     // SHORT, YEAR
        3 | 9 | 4 => 4,                                  // LONG, INT24, FLOAT
        8 | 5 => 8,                                      // LONGLONG, DOUBLE
        7 | 10 | 11 | 12 => 1 + *rest.first()? as usize, // TIMESTAMP, DATE, TIME, DATETIME
        6 => 0,                                          // NULL
        _ => {
            let mut r = Reader::new(rest);
            let len = lenenc_int(&mut r) as usize;
            if r.failed() {
                return None;
            }
            r.pos() + len
        }
    };
    (n <= rest.len()).then_some(n)
}

/// Check that a binary row holds exactly its non-NULL values (no allocation).
pub(super) fn walk_binary_row(cols: &[Col], pk: &[u8]) -> bool {
    let nb = (cols.len() + 7 + 2) / 8;
    if pk.len() < 1 + nb {
        return false;
    }
    let bitmap = &pk[1..1 + nb];
    let mut pos = 1 + nb;
    for (i, c) in cols.iter().enumerate() {
        let b = i + 2;
        if bitmap[b / 8] & (1 << (b % 8)) != 0 {
            continue;
        }
        match binary_len(c.ty, &pk[pos..]) {
            Some(n) => pos += n,
            None => return false,
        }
    }
    pos == pk.len()
}

/// A binary row as text, formatted the way the text protocol shows each type.
pub(super) fn decode_binary_row(cols: &[Col], pk: &[u8]) -> Vec<Option<String>> {
    let nb = (cols.len() + 7 + 2) / 8;
    let bitmap = &pk[1..1 + nb];
    let mut pos = 1 + nb;
    let mut out = Vec::with_capacity(cols.len());
    for (i, c) in cols.iter().enumerate() {
        let b = i + 2;
        if bitmap[b / 8] & (1 << (b % 8)) != 0 {
            out.push(None);
            continue;
        }
        let n = binary_len(c.ty, &pk[pos..]).unwrap_or(0);
        let v = &pk[pos..pos + n];
        pos += n;
        let unsigned = c.flags & 32 != 0;
        let mut le = [0u8; 8];
        let s = match c.ty {
            1 | 2 | 13 | 3 | 9 | 8 => {
                le[..n].copy_from_slice(v);
                let u = u64::from_le_bytes(le);
                if unsigned {
                    u.to_string()
                } else {
                    let bits = 8 * n as u32;
                    let sh = 64 - bits;
                    (((u << sh) as i64) >> sh).to_string()
                }
            }
            4 => f32::from_le_bytes(v.try_into().unwrap_or([0; 4])).to_string(),
            5 => f64::from_le_bytes(v.try_into().unwrap_or([0; 8])).to_string(),
            7 | 10 | 12 => format_datetime(c, v),
            11 => format_time(c, v),
            _ => {
                let mut r = Reader::new(v);
                String::from_utf8_lossy(lenenc_str(&mut r)).into_owned()
            }
        };
        out.push(Some(s));
    }
    out
}

pub(super) fn format_datetime(c: &Col, v: &[u8]) -> String {
    let len = v[0] as usize;
    let b = &v[1..];
    let (mut y, mut mo, mut d, mut h, mut mi, mut s, mut us) = (0u16, 0, 0, 0, 0, 0, 0u32);
    if len >= 4 {
        y = u16::from_le_bytes([b[0], b[1]]);
        (mo, d) = (b[2], b[3]);
    }
    if len >= 7 {
        (h, mi, s) = (b[4], b[5], b[6]);
    }
    if len >= 11 {
        us = u32::from_le_bytes([b[7], b[8], b[9], b[10]]);
    }
    if c.ty == 10 {
        return format!("{y:04}-{mo:02}-{d:02}");
    }
    let mut out = format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}");
    push_fraction(&mut out, us, c.decimals);
    out
}

pub(super) fn format_time(c: &Col, v: &[u8]) -> String {
    let len = v[0] as usize;
    let b = &v[1..];
    let (mut neg, mut days, mut h, mut mi, mut s, mut us) = (false, 0u32, 0u8, 0u8, 0u8, 0u32);
    if len >= 8 {
        neg = b[0] == 1;
        days = u32::from_le_bytes([b[1], b[2], b[3], b[4]]);
        (h, mi, s) = (b[5], b[6], b[7]);
    }
    if len >= 12 {
        us = u32::from_le_bytes([b[8], b[9], b[10], b[11]]);
    }
    let hours = days * 24 + h as u32;
    let mut out = format!("{}{hours:02}:{mi:02}:{s:02}", if neg { "-" } else { "" });
    push_fraction(&mut out, us, c.decimals);
    out
}

pub(super) fn push_fraction(out: &mut String, us: u32, decimals: u8) {
    if (1..=6).contains(&decimals) {
        let f = format!("{us:06}");
        out.push('.');
        out.push_str(&f[..decimals as usize]);
    }
}

pub(super) fn decode_text_row(ncols: usize, pk: &[u8]) -> Vec<Option<String>> {
    let mut r = Reader::new(pk);
    (0..ncols)
        .map(|_| {
            if r.peek() == Some(0xFB) {
                r.skip(1);
                None
            } else {
                Some(String::from_utf8_lossy(lenenc_str(&mut r)).into_owned())
            }
        })
        .collect()
}
