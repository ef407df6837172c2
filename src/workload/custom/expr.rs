//! Integer expressions of a workload file: `100000 * scale`, `(recordcount - 1)`, `42`.
//! Integers, variable names, `+ - * /` (integer division, truncating) and parentheses.

use std::collections::BTreeMap;

/// Evaluate `src` with the variables `vars`. The error says what is wrong, without location
/// (the caller adds the file, line and key).
pub fn eval(src: &str, vars: &BTreeMap<String, i64>) -> Result<i64, String> {
    let toks = lex(src)?;
    let mut p = Parser {
        toks: &toks,
        pos: 0,
        vars,
    };
    let v = p.sum()?;
    if p.pos != toks.len() {
        return Err(format!("unexpected `{}` in `{src}`", toks[p.pos]));
    }
    Ok(v)
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(i64),
    Name(String),
    Op(char),
}

impl std::fmt::Display for Tok {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Tok::Num(n) => write!(f, "{n}"),
            Tok::Name(s) => f.write_str(s),
            Tok::Op(c) => write!(f, "{c}"),
        }
    }
}

fn lex(src: &str) -> Result<Vec<Tok>, String> {
    let mut out = Vec::new();
    let b = src.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        if c.is_ascii_whitespace() || c == '_' && i > 0 && b[i - 1].is_ascii_digit() {
            i += 1;
        } else if c.is_ascii_digit() {
            let mut v: i64 = 0;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
                if b[i] != b'_' {
                    v = v
                        .checked_mul(10)
                        .and_then(|v| v.checked_add((b[i] - b'0') as i64))
                        .ok_or_else(|| format!("number too large in `{src}`"))?;
                }
                i += 1;
            }
            out.push(Tok::Num(v));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Name(src[s..i].to_string()));
        } else if "+-*/()".contains(c) {
            out.push(Tok::Op(c));
            i += 1;
        } else {
            return Err(format!("unexpected `{c}` in `{src}` (expressions use integers, variable names, + - * / and parentheses)"));
        }
    }
    if out.is_empty() {
        return Err("empty expression".into());
    }
    Ok(out)
}

struct Parser<'a> {
    toks: &'a [Tok],
    pos: usize,
    vars: &'a BTreeMap<String, i64>,
}

impl Parser<'_> {
    fn peek_op(&self) -> Option<char> {
        match self.toks.get(self.pos) {
            Some(Tok::Op(c)) => Some(*c),
            _ => None,
        }
    }

    fn sum(&mut self) -> Result<i64, String> {
        let mut v = self.product()?;
        while let Some(op @ ('+' | '-')) = self.peek_op() {
            self.pos += 1;
            let r = self.product()?;
            v = if op == '+' {
                v.checked_add(r)
            } else {
                v.checked_sub(r)
            }
            .ok_or("integer overflow")?;
        }
        Ok(v)
    }

    fn product(&mut self) -> Result<i64, String> {
        let mut v = self.atom()?;
        while let Some(op @ ('*' | '/')) = self.peek_op() {
            self.pos += 1;
            let r = self.atom()?;
            v = if op == '*' {
                v.checked_mul(r).ok_or("integer overflow")?
            } else if r == 0 {
                return Err("division by zero".into());
            } else {
                v / r
            };
        }
        Ok(v)
    }

    fn atom(&mut self) -> Result<i64, String> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        match t {
            Some(Tok::Num(n)) => Ok(n),
            Some(Tok::Name(n)) => self.vars.get(&n).copied().ok_or_else(|| {
                format!(
                    "unknown variable `{n}` (variables: {})",
                    if self.vars.is_empty() {
                        "none; declare them under [vars]".to_string()
                    } else {
                        self.vars.keys().cloned().collect::<Vec<_>>().join(", ")
                    }
                )
            }),
            Some(Tok::Op('-')) => Ok(-self.atom()?),
            Some(Tok::Op('(')) => {
                let v = self.sum()?;
                if self.peek_op() != Some(')') {
                    return Err("missing `)`".into());
                }
                self.pos += 1;
                Ok(v)
            }
            Some(t) => Err(format!("unexpected `{t}`")),
            None => Err("the expression ends too early".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_and_vars() {
        let mut v = BTreeMap::new();
        v.insert("scale".to_string(), 3);
        assert_eq!(eval("100000 * scale", &v).unwrap(), 300_000);
        assert_eq!(eval("(scale - 1) * 2 + 1", &v).unwrap(), 5);
        assert_eq!(eval("-5000", &v).unwrap(), -5000);
        assert_eq!(eval("7 / 2", &v).unwrap(), 3);
        assert_eq!(eval("1_000_000", &v).unwrap(), 1_000_000);
        assert!(eval("scal * 2", &v)
            .unwrap_err()
            .contains("unknown variable `scal`"));
        assert!(eval("1 +", &v).is_err());
        assert!(eval("(1", &v).is_err());
        assert!(eval("1 / 0", &v).is_err());
        assert!(eval("2 $ 3", &v).is_err());
    }
}
