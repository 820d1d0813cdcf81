//! Why a run failed: the error carried by `Failed` and `RunFailed`.
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

/// A run failure, serialized as `{"kind", "message", ...variant fields}`.
///
/// `message` is derived from the variant (it is the `Display` text) and ignored when
/// deserializing, except for [`AgentError::Other`], whose message is its only content.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, thiserror::Error)]
#[serde(tag = "kind")]
pub enum AgentError {
    /// The run reached `max_turns` without finishing.
    #[error("max turns ({max_turns}) exceeded")]
    MaxTurnsExceeded { max_turns: u32 },
    /// The final answer did not validate after the one repair turn.
    #[error("invalid structured output after one repair attempt")]
    InvalidStructuredOutput {
        schema_errors: Vec<String>,
        final_text: String,
    },
    /// `start` fed to a pause (`Compacting`, `NeedsApproval`), which only its own input leaves.
    #[error("not yet implemented: {feature}")]
    NotImplemented { feature: String },
    /// Anything else: invalid transitions and internal inconsistencies.
    #[error("{message}")]
    Other { message: String },
}

impl AgentError {
    /// The spec's variant name, as written in `kind`.
    pub fn kind(&self) -> &'static str {
        match self {
            AgentError::MaxTurnsExceeded { .. } => "MaxTurnsExceeded",
            AgentError::InvalidStructuredOutput { .. } => "InvalidStructuredOutput",
            AgentError::NotImplemented { .. } => "NotImplemented",
            AgentError::Other { .. } => "Other",
        }
    }

    pub(crate) fn other(message: impl Into<String>) -> Self {
        AgentError::Other {
            message: message.into(),
        }
    }

    /// An `Other` error whose message starts `invalid transition:`.
    pub(crate) fn invalid_transition(state: &str, input: &str) -> Self {
        Self::other(format!("invalid transition: {input} in state {state}"))
    }
}

impl Serialize for AgentError {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut m = serializer.serialize_map(None)?;
        m.serialize_entry("kind", self.kind())?;
        m.serialize_entry("message", &self.to_string())?;
        match self {
            AgentError::MaxTurnsExceeded { max_turns } => {
                m.serialize_entry("max_turns", max_turns)?;
            }
            AgentError::InvalidStructuredOutput {
                schema_errors,
                final_text,
            } => {
                m.serialize_entry("schema_errors", schema_errors)?;
                m.serialize_entry("final_text", final_text)?;
            }
            AgentError::NotImplemented { feature } => m.serialize_entry("feature", feature)?,
            AgentError::Other { .. } => {}
        }
        m.end()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn every_variant_round_trips_with_its_message() {
        let cases = [
            json!({"kind": "MaxTurnsExceeded", "message": "max turns (4) exceeded",
                   "max_turns": 4}),
            json!({"kind": "InvalidStructuredOutput",
                   "message": "invalid structured output after one repair attempt",
                   "schema_errors": ["e"], "final_text": "t"}),
            json!({"kind": "NotImplemented", "message": "not yet implemented: compaction",
                   "feature": "compaction"}),
            json!({"kind": "Other", "message": "invalid transition: x"}),
        ];
        for v in cases {
            let e: AgentError = serde_json::from_value(v.clone()).unwrap();
            assert_eq!(serde_json::to_value(&e).unwrap(), v);
        }
    }

    #[test]
    fn message_is_recomputed_for_derived_variants() {
        let e: AgentError =
            serde_json::from_value(json!({"kind": "MaxTurnsExceeded", "max_turns": 2})).unwrap();
        assert_eq!(e.to_string(), "max turns (2) exceeded");
    }

    #[test]
    fn unknown_kind_is_rejected() {
        assert!(serde_json::from_value::<AgentError>(json!({"kind": "Nope"})).is_err());
    }
}
