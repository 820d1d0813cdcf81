//! Type annotations after a secret-named key: `password: str`, `api_key: Optional[str] =
//! None`, `pub client_secret: Option<String>,`, `password: string;`.
//!
//! Source code is ordinary tool output (an agent reads files), and a field declaration is
//! not a secret. [`type_annotation`] recognises a type that *starts* with a well-known name
//! ([`TYPE_WORDS`]: `str`, `String`, `SecretStr`, `Optional`, `Option`, ...), optionally
//! with `[...]`/`<...>` arguments on the same line, `|` unions and a trailing `?`, and then
//! ends the value (`,`, `;`, `)`, `}`, a comment or the line end). A default after `=` is
//! read as the value (`api_key: str = "sk-..."` masks the literal). Anything else, such as
//! `api_key: str is deprecated` or `password: string123`, is not an annotation.

/// Names that start a type annotation.
const TYPE_WORDS: &[&str] = &[
    "str",
    "string",
    "String",
    "bytes",
    "SecretStr",
    "SecretBytes",
    "SecretString",
    "Secret",
    "Optional",
    "Option",
    "Union",
    "Annotated",
    "Box",
    "Arc",
    "Cow",
    "Zeroizing",
    "int",
    "bool",
    "Any",
    "None",
];

/// If `v` (an unquoted value after `key:`) starts with a type annotation, where the type
/// ends and where a default value after `=` starts (if any).
///
/// `None`: not a type annotation (mask as usual). `Some((end, None))`: a bare annotation;
/// nothing to mask. `Some((end, Some(d)))`: the default value starts at byte `d` of `v`.
pub(crate) fn type_annotation(v: &str) -> Option<(usize, Option<usize>)> {
    let b = v.as_bytes();
    let mut i = type_expr(b, 0, true)?;
    // Unions: `str | None`.
    loop {
        let mut j = skip_hspace(b, i);
        if b.get(j) != Some(&b'|') {
            break;
        }
        j = skip_hspace(b, j + 1);
        i = type_expr(b, j, false)?;
    }
    if b.get(i) == Some(&b'?') {
        i += 1;
    }
    let end = i;
    let j = skip_hspace(b, i);
    match b.get(j) {
        None | Some(b',' | b';' | b')' | b'}') => Some((end, None)),
        Some(b'#') if j > end => Some((end, None)),
        Some(b'/') if j > end && b.get(j + 1) == Some(&b'/') => Some((end, None)),
        Some(b'=') if !matches!(b.get(j + 1), Some(b'=' | b'>')) => {
            let d = skip_hspace(b, j + 1);
            Some((end, (d < b.len()).then_some(d)))
        }
        _ => None,
    }
}

fn skip_hspace(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(|c| *c == b' ' || *c == b'\t') {
        i += 1;
    }
    i
}

/// One type at `i`: `&`, an optional lifetime, a name (from [`TYPE_WORDS`] when `first`,
/// any dotted name otherwise) and balanced `[...]`/`<...>` arguments on the same line.
fn type_expr(b: &[u8], mut i: usize, first: bool) -> Option<usize> {
    if b.get(i) == Some(&b'&') {
        i += 1;
        if b.get(i) == Some(&b'\'') {
            i += 1;
            while b
                .get(i)
                .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
            {
                i += 1;
            }
            i = skip_hspace(b, i);
        }
    }
    let start = i;
    while b
        .get(i)
        .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.'))
    {
        i += 1;
    }
    let name = std::str::from_utf8(b.get(start..i)?).ok()?;
    if name.is_empty() || (first && !TYPE_WORDS.contains(&name)) {
        return None;
    }
    if matches!(b.get(i), Some(b'[' | b'<')) {
        let mut depth = 0usize;
        while let Some(&c) = b.get(i) {
            match c {
                b'[' | b'<' => depth += 1,
                b']' | b'>' => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(i + 1);
                    }
                }
                b'"' | b'\'' | b'=' | b';' => return None,
                _ => {}
            }
            i += 1;
        }
        return None;
    }
    Some(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn annotations() {
        assert_eq!(type_annotation("str"), Some((3, None)));
        assert_eq!(type_annotation("str, n: int)"), Some((3, None)));
        assert_eq!(
            type_annotation("Optional[str] = None"),
            Some((13, Some(16)))
        );
        assert_eq!(type_annotation("Option<String>,"), Some((14, None)));
        assert_eq!(type_annotation("&'static str,"), Some((12, None)));
        assert_eq!(type_annotation("string | undefined;"), Some((18, None)));
        assert_eq!(type_annotation("str = \"abc\""), Some((3, Some(6))));
        assert_eq!(type_annotation("str  # from env"), Some((3, None)));
        assert_eq!(type_annotation("string123"), None);
        assert_eq!(type_annotation("str0ng-pass"), None);
        assert_eq!(type_annotation("Strong"), None);
        assert_eq!(type_annotation("str == x"), None);
        assert_eq!(type_annotation("str ing"), None);
    }
}
