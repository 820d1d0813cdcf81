//! Content parts of conversation items.
//!
//! The loop reads only text (to build the final output and validate structured answers).
//! Every other part, and any text or reasoning part carrying fields the loop does not model,
//! is kept as the raw JSON value so it round-trips untouched: Python owns message bodies.
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// One part of an item's `content` list, tagged by `type`.
#[derive(Debug, Clone, PartialEq)]
pub enum ContentPart {
    /// `{"type": "text", "text": ...}` and nothing else.
    Text { text: String },
    /// `{"type": "reasoning", "text": ..., "signature"?: ...}` and nothing else.
    Reasoning {
        text: String,
        signature: Option<String>,
    },
    /// Any other part (image, audio, tool_use, or a text part with extra fields), verbatim.
    Other(Value),
}

impl ContentPart {
    /// A plain text part.
    pub fn text(text: impl Into<String>) -> Self {
        ContentPart::Text { text: text.into() }
    }

    /// The text this part contributes to a message's text, if it is a text part.
    ///
    /// A text part kept as [`ContentPart::Other`] (because it carries extra fields) still
    /// counts as text.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentPart::Text { text } => Some(text),
            ContentPart::Reasoning { .. } => None,
            ContentPart::Other(v) => match v.get("type").and_then(Value::as_str) {
                Some("text") => v.get("text").and_then(Value::as_str),
                _ => None,
            },
        }
    }

    fn from_object(obj: Map<String, Value>) -> Self {
        let kind = obj.get("type").and_then(Value::as_str);
        let text = obj.get("text").and_then(Value::as_str);
        match (kind, text) {
            (Some("text"), Some(text)) if obj.len() == 2 => ContentPart::Text {
                text: text.to_owned(),
            },
            (Some("reasoning"), Some(text)) => {
                let signature = obj.get("signature");
                let expected_len = if signature.is_some() { 3 } else { 2 };
                match signature {
                    None if obj.len() == expected_len => ContentPart::Reasoning {
                        text: text.to_owned(),
                        signature: None,
                    },
                    Some(Value::String(s)) if obj.len() == expected_len => ContentPart::Reasoning {
                        text: text.to_owned(),
                        signature: Some(s.clone()),
                    },
                    _ => ContentPart::Other(Value::Object(obj)),
                }
            }
            _ => ContentPart::Other(Value::Object(obj)),
        }
    }
}

impl Serialize for ContentPart {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            ContentPart::Text { text } => {
                let mut m = serializer.serialize_map(Some(2))?;
                m.serialize_entry("type", "text")?;
                m.serialize_entry("text", text)?;
                m.end()
            }
            ContentPart::Reasoning { text, signature } => {
                let mut m = serializer.serialize_map(None)?;
                m.serialize_entry("type", "reasoning")?;
                m.serialize_entry("text", text)?;
                if let Some(sig) = signature {
                    m.serialize_entry("signature", sig)?;
                }
                m.end()
            }
            ContentPart::Other(v) => v.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for ContentPart {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match Value::deserialize(deserializer)? {
            Value::Object(obj) if obj.get("type").is_some_and(Value::is_string) => {
                Ok(ContentPart::from_object(obj))
            }
            _ => Err(D::Error::custom(
                "a content part must be an object with a string `type`",
            )),
        }
    }
}

/// Concatenated text of `parts` (text parts only, in order).
pub fn text_of(parts: &[ContentPart]) -> String {
    parts.iter().filter_map(ContentPart::as_text).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn round_trip(v: Value) -> (ContentPart, Value) {
        let part: ContentPart = serde_json::from_value(v).unwrap();
        let back = serde_json::to_value(&part).unwrap();
        (part, back)
    }

    #[test]
    fn plain_text_is_typed() {
        let v = json!({"type": "text", "text": "hi"});
        let (part, back) = round_trip(v.clone());
        assert_eq!(part, ContentPart::text("hi"));
        assert_eq!(back, v);
    }

    #[test]
    fn reasoning_with_and_without_signature_is_typed() {
        let v = json!({"type": "reasoning", "text": "t", "signature": "s"});
        let (part, back) = round_trip(v.clone());
        assert!(matches!(
            part,
            ContentPart::Reasoning {
                signature: Some(_),
                ..
            }
        ));
        assert_eq!(back, v);
        let v = json!({"type": "reasoning", "text": "t"});
        let (part, back) = round_trip(v.clone());
        assert!(matches!(
            part,
            ContentPart::Reasoning {
                signature: None,
                ..
            }
        ));
        assert_eq!(back, v);
    }

    #[test]
    fn extra_fields_and_unknown_parts_are_kept_verbatim() {
        for v in [
            json!({"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}),
            json!({"type": "reasoning", "text": "", "signature": null, "redacted": "xx"}),
            json!({"type": "image", "source": {"type": "url", "url": "https://x"}}),
            json!({"type": "tool_use", "call_id": "1", "name": "n", "args": {"a": [1, 2]}}),
        ] {
            let (part, back) = round_trip(v.clone());
            assert!(matches!(part, ContentPart::Other(_)));
            assert_eq!(back, v);
        }
    }

    #[test]
    fn text_with_extra_fields_still_counts_as_text() {
        let parts: Vec<ContentPart> = serde_json::from_value(json!([
            {"type": "text", "text": "a"},
            {"type": "reasoning", "text": "skip"},
            {"type": "text", "text": "b", "x": 1},
        ]))
        .unwrap();
        assert_eq!(text_of(&parts), "ab");
    }

    #[test]
    fn parts_without_a_type_are_rejected() {
        for v in [json!("text"), json!({"text": "x"}), json!({"type": 3})] {
            assert!(serde_json::from_value::<ContentPart>(v).is_err());
        }
    }
}
