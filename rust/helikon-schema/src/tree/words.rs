//! The words the normalizers compare strings against (keywords, type names, formats).
//!
//! A binding whose strings are costly to read (a Python `str` behind a C call) maps each input
//! string to one of these once, and then compares a `&'static str`.

/// `s` as a static word of the schema vocabulary, if it is one.
pub fn known_word(s: &str) -> Option<&'static str> {
    let words: &[&'static str] = match s.len() {
        3 => &["$id", "uri"],
        4 => &[
            "type", "null", "enum", "$ref", "date", "time", "uuid", "ipv4", "ipv6",
        ],
        5 => &[
            "title", "items", "anyOf", "array", "$defs", "allOf", "const", "email", "oneOf",
        ],
        6 => &["string", "object", "number", "format", "binary"],
        7 => &[
            "default", "integer", "boolean", "maximum", "minimum", "pattern", "$anchor", "$schema",
            "example", "mapping",
        ],
        8 => &[
            "required", "nullable", "maxItems", "minItems", "$comment", "duration", "examples",
            "hostname", "readOnly",
        ],
        9 => &["date-time", "maxLength", "minLength", "writeOnly"],
        10 => &["properties", "multipleOf", "deprecated"],
        11 => &["description", "definitions", "prefixItems", "uniqueItems"],
        12 => &["propertyName"],
        13 => &["discriminator", "maxProperties", "minProperties"],
        15 => &["contentEncoding"],
        16 => &["exclusiveMaximum", "exclusiveMinimum", "contentMediaType"],
        17 => &["patternProperties"],
        20 => &["additionalProperties"],
        _ => return None,
    };
    // first and last byte before the full comparison: one call at most for a non-word
    let (first, last) = (s.as_bytes().first(), s.as_bytes().last());
    words
        .iter()
        .copied()
        .find(|w| w.as_bytes().first() == first && w.as_bytes().last() == last && *w == s)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::known_word;

    #[test]
    fn words_are_found_by_content_and_others_are_not() {
        for w in ["type", "additionalProperties", "$ref", "date-time", "uri"] {
            let owned = w.to_owned();
            assert_eq!(known_word(&owned), Some(w));
        }
        for w in ["", "Type", "types", "street", "additionalPropertie"] {
            assert_eq!(known_word(w), None);
        }
    }
}
