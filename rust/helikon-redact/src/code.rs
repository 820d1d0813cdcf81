//! Secret-named keys in minified or compact JavaScript, where the value is code.
//!
//! Bundled JS is ordinary tool output (an agent `cat`s a build artefact or a page), and it
//! is full of secret-named keys whose values are variables: `{token:t,user:n}`,
//! `this.token=s}`, `e.password=n.value;`. A literal secret in code is a quoted string,
//! and the key-name pass masks those as usual (`{apiKey:"..."}`); these shapes are code:
//!
//! - **object literal**: a key (quoted or not) right after `{` or `,`, its `:` followed directly
//!   (no blank, as a minifier writes it; YAML flow mappings put a blank there) by an
//!   identifier, `!`, `(`, `[` or `` ` ``: the value is an expression, up to the `,`, `}`
//!   or `;` that ends it at bracket depth 0;
//! - **member assignment**: a dotted key (`this.token`, `e.password`) standing mid-line,
//!   `=`, then an identifier chain directly followed by `;`, `,`, `)` or `}` (a properties
//!   file's `spring.datasource.password=...` starts its line; a shell word ends at a blank).
//!
//! Each check reads the value once, up to the line end.

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b'$'
}

fn is_ident(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

/// The last non-blank byte before `at` on its line, if any.
fn prev_non_blank(bytes: &[u8], at: usize) -> Option<u8> {
    let mut i = at;
    while i > 0 {
        let b = *bytes.get(i - 1)?;
        if b == b'\n' {
            return None;
        }
        if b != b' ' && b != b'\t' {
            return Some(b);
        }
        i -= 1;
    }
    None
}

/// If the value at `v` (right after the separator at `v - 1`) is code, where it ends (the
/// scan resumes there). `key_start` is where the key (with any dotted prefix) starts;
/// `limit` is the line's content end.
pub(crate) fn code_value_end(
    bytes: &[u8],
    key_start: usize,
    sep: u8,
    v: usize,
    limit: usize,
) -> Option<usize> {
    let first = *bytes.get(v)?;
    match sep {
        b':' => {
            // A quoted key (`{"X-Api-Key":k}`) counts from its opening quote.
            let quote = key_start
                .checked_sub(1)
                .filter(|&q| matches!(bytes.get(q), Some(b'"' | b'\'')));
            let from = quote.unwrap_or(key_start);
            if !matches!(prev_non_blank(bytes, from), Some(b'{' | b',')) {
                return None;
            }
            if !(is_ident_start(first) || matches!(first, b'!' | b'(' | b'[' | b'`')) {
                return None;
            }
            Some(expression_end(bytes, v, limit))
        }
        b'=' => {
            let key = bytes.get(key_start..v.saturating_sub(1))?;
            let mid_line = prev_non_blank(bytes, key_start).is_some();
            if !key.contains(&b'.') || !(is_ident_start(first) || first == b'(') {
                return None;
            }
            let mut i = v;
            while i < limit && bytes.get(i).is_some_and(|&b| is_ident(b) || b == b'.') {
                i += 1;
            }
            let word = bytes.get(v..i).unwrap_or_default();
            match bytes.get(i) {
                // A variable: mid-line, or with more code after its terminator.
                Some(b';' | b',' | b')' | b'}') => {
                    let more = bytes.get(i + 1).is_some_and(|b| !b.is_ascii_whitespace());
                    (mid_line || more).then_some(i)
                }
                // A call, a function or an arrow function: `e.token=f(x)`,
                // `a.setToken=function(t){...}`, `a.onToken=(t)=>...`, `a.f=t=>...`.
                Some(b'(') => Some(expression_end(bytes, i, limit)),
                Some(b' ') if word == b"function" || word == b"async" => {
                    Some(expression_end(bytes, i, limit))
                }
                Some(b'=') if bytes.get(i + 1) == Some(&b'>') => {
                    Some(expression_end(bytes, i, limit))
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// The end of a JS expression starting at `v`: the first `,`, `}`, `;` or `)` at bracket
/// depth 0 (strings skipped), or `limit`.
fn expression_end(bytes: &[u8], v: usize, limit: usize) -> usize {
    let mut depth = 0usize;
    let mut i = v;
    while i < limit {
        let Some(&b) = bytes.get(i) else {
            break;
        };
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' if depth == 0 => return i,
            b')' | b']' | b'}' => depth -= 1,
            b',' | b';' if depth == 0 => return i,
            b'"' | b'\'' | b'`' => {
                if let Some(c) = crate::value::find_close(bytes, i + 1, limit, &[b]) {
                    i = c;
                }
            }
            _ => {}
        }
        i += 1;
    }
    limit
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The code value after the first separator of `t`, as text.
    fn code(t: &str) -> Option<&str> {
        let b = t.as_bytes();
        let sep_at = t.find([':', '='])?;
        let key_end = t[..sep_at].trim_end_matches('"').len();
        let key_start = t[..key_end]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-'))
            .map_or(0, |i| i + 1);
        let end = code_value_end(b, key_start, b[sep_at], sep_at + 1, t.len())?;
        Some(&t[sep_at + 1..end])
    }

    #[test]
    fn shapes() {
        assert_eq!(code("{token:t,user:n}"), Some("t"));
        assert_eq!(code("{\"X-Api-Key\":k,\"n\":1}"), Some("k"));
        assert_eq!(code("{\"password\": hunter2}"), None);
        assert_eq!(
            code("x,password:e.get(\"a,b\"),y:1"),
            Some("e.get(\"a,b\")")
        );
        assert_eq!(code("{secret:!0}"), Some("!0"));
        assert_eq!(code("{token: t}"), None);
        assert_eq!(code("{token:\"abc\"}"), None);
        assert_eq!(code("{pin:1234}"), None);
        assert_eq!(code("token:t"), None);
        assert_eq!(code("{this.token=s}"), Some("s"));
        assert_eq!(code("x;e.password=n.value;y"), Some("n.value"));
        assert_eq!(code("spring.datasource.password=s3cret;"), None);
        assert_eq!(
            code("x;a.setToken=function(t){this.token=t};b()"),
            Some("function(t){this.token=t}")
        );
        assert_eq!(code("x;a.token=f(b,\"c\");y"), Some("f(b,\"c\")"));
        assert_eq!(code("x;a.onToken=t=>g(t),y"), Some("t=>g(t)"));
        assert_eq!(code("a.password=k.value;a.b=c"), Some("k.value"));
        assert_eq!(code("db.password=hunter2;"), None);
        assert_eq!(code("a.setToken=function(t){}"), Some("function(t){}"));
        assert_eq!(code("java -Dapp.password=s3cret -jar x"), None);
        assert_eq!(code("f();A_TOKEN=t;"), None);
    }
}
