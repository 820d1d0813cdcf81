//! Compact-JSON lengths without writing the JSON: the length Python's
//! `json.dumps(value, separators=(",", ":"), ensure_ascii=False)` (serde_json's compact form,
//! for these values) would give.
//!
//! Strings count their scalar values plus escapes (`"`, `\` and the short-escape controls one
//! extra each, other controls five) plus the quotes; integers their digits and sign; floats
//! the length of their shortest round-trip `repr` (`NaN` 3, `Infinity` 8, `-Infinity` 9);
//! arrays and objects their elements plus brackets, commas and colons. A host hands over what
//! it cannot measure exactly (a big integer, a custom object, nesting past
//! [`MAX_JSON_DEPTH`]) as [`JsonView::Measured`] or through [`JsonNode::fallback_len`].

/// Deepest nesting measured here; deeper values are measured by [`JsonNode::fallback_len`].
pub const MAX_JSON_DEPTH: usize = 128;

/// One JSON value as the length rule reads it.
pub enum JsonView<N> {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// An integer that fits in `i64`.
    Int(i64),
    /// A float.
    Float(f64),
    /// A string's literal length, from [`string_len`].
    Str(usize),
    /// An array's elements.
    Array(Vec<N>),
    /// An object's members (string keys, as nodes viewing [`JsonView::Str`]).
    Object(Vec<(N, N)>),
    /// A length the host measured itself.
    Measured(usize),
}

/// A value whose compact-JSON length is wanted.
pub trait JsonNode: Sized {
    /// The host's error.
    type Error;

    /// How the rule should read this value.
    ///
    /// # Errors
    /// The host could not read the value.
    fn view(&self) -> Result<JsonView<Self>, Self::Error>;

    /// The length measured by the host's own serializer (for nesting past
    /// [`MAX_JSON_DEPTH`] and floats with no shortest form here).
    ///
    /// # Errors
    /// The host's serializer rejected the value.
    fn fallback_len(&self) -> Result<usize, Self::Error>;
}

/// The compact-JSON length of `value`, `depth` levels deep.
///
/// # Errors
/// The host's errors reading or measuring the value.
pub fn json_len<N: JsonNode>(value: &N, depth: usize) -> Result<usize, N::Error> {
    if depth > MAX_JSON_DEPTH {
        return value.fallback_len();
    }
    Ok(match value.view()? {
        JsonView::Null => 4,
        JsonView::Bool(flag) => {
            if flag {
                4
            } else {
                5
            }
        }
        JsonView::Int(n) => int_len(n),
        JsonView::Float(x) => match float_len(x) {
            Some(len) => len,
            None => value.fallback_len()?,
        },
        JsonView::Str(len) | JsonView::Measured(len) => len,
        JsonView::Array(elements) => {
            let mut total = 2 + elements.len().saturating_sub(1);
            for element in &elements {
                total = total.saturating_add(json_len(element, depth + 1)?);
            }
            total
        }
        JsonView::Object(members) => {
            // '{' '}', one ':' per member, ',' between members
            let mut total = 2 + members.len() + members.len().saturating_sub(1);
            for (key, element) in &members {
                total = total.saturating_add(json_len(key, depth + 1)?);
                total = total.saturating_add(json_len(element, depth + 1)?);
            }
            total
        }
    })
}

/// Extra characters `json` writes for each byte of a UTF-8 string: 1 for `"`, `\` and the
/// controls with a short escape (`\b \t \n \f \r`), 5 for the other controls (`\u00XX`).
/// Bytes of multi-byte sequences are all >= 0x80, so they never match.
const ESCAPE_EXTRA: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = 5;
        b += 1;
    }
    table[0x08] = 1;
    table[0x09] = 1;
    table[0x0a] = 1;
    table[0x0c] = 1;
    table[0x0d] = 1;
    table[b'"' as usize] = 1;
    table[b'\\' as usize] = 1;
    table
};

/// The length of a string literal: `scalar_values` (the string's length in Unicode scalar
/// values) plus the escapes of its UTF-8 bytes `utf8`, plus the two quotes.
///
/// ```
/// assert_eq!(helikon_tokens::json::string_len(2, "é\n".as_bytes()), 5); // "é\n"
/// ```
#[must_use]
pub fn string_len(scalar_values: usize, utf8: &[u8]) -> usize {
    let extra: usize = utf8
        .iter()
        .map(|&b| usize::from(ESCAPE_EXTRA[usize::from(b)]))
        .sum();
    scalar_values.saturating_add(extra).saturating_add(2)
}

/// Decimal digits of `n`, with its sign.
///
/// ```
/// assert_eq!(helikon_tokens::json::int_len(-120), 4);
/// ```
#[must_use]
pub fn int_len(n: i64) -> usize {
    let digits = n
        .unsigned_abs()
        .checked_ilog10()
        .map_or(1, |d| d as usize + 1);
    digits + usize::from(n < 0)
}

/// The length `json` writes for a float: `NaN` 3, `Infinity` 8, `-Infinity` 9, else the
/// length of Python's `repr` ([`float_repr_len`]).
#[must_use]
pub fn float_len(x: f64) -> Option<usize> {
    if x.is_nan() {
        Some(3)
    } else if x.is_infinite() {
        Some(if x > 0.0 { 8 } else { 9 })
    } else {
        float_repr_len(x)
    }
}

/// Length of Python's `repr(x)` for a finite float, from Rust's shortest round-trip digits
/// (the same digits as Python's repr): fixed notation when the decimal point falls within
/// -3..=16 digits of the first digit (with ".0" when integral), else `d.ddde+XX` with at least
/// two exponent digits.
///
/// ```
/// use helikon_tokens::json::float_repr_len;
/// assert_eq!(float_repr_len(1.5), Some(3));
/// assert_eq!(float_repr_len(1e16), Some(5)); // 1e+16
/// assert_eq!(float_repr_len(-0.0001), Some(7)); // -0.0001
/// ```
#[must_use]
pub fn float_repr_len(x: f64) -> Option<usize> {
    use std::io::Write;
    let mut buf = [0u8; 48];
    let mut cursor = std::io::Cursor::new(&mut buf[..]);
    write!(cursor, "{:e}", x.abs()).ok()?;
    let written = usize::try_from(cursor.position()).ok()?;
    let text = buf.get(..written)?;
    let e_at = text.iter().position(|&b| b == b'e')?;
    let digits = text
        .get(..e_at)?
        .iter()
        .filter(|b| b.is_ascii_digit())
        .count();
    let exp: i32 = std::str::from_utf8(text.get(e_at + 1..)?)
        .ok()?
        .parse()
        .ok()?;
    let point = exp + 1; // digits before the decimal point
    let body = if !(-3..=16).contains(&point) {
        let exp_digits = if exp.unsigned_abs() >= 100 { 3 } else { 2 };
        digits + usize::from(digits > 1) + 2 + exp_digits // "d.ddd" "e" sign digits
    } else if point <= 0 {
        2 + usize::try_from(-point).ok()? + digits // "0." zeros digits
    } else {
        let point = usize::try_from(point).ok()?;
        if point < digits {
            digits + 1
        } else {
            point + 2 // digits, zeros, ".0"
        }
    };
    Some(body + usize::from(x.is_sign_negative()))
}
