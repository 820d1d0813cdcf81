//! The process-wide compiled pattern set: built once, on first use, shared by every
//! [`crate::Redactor`] (a redactor itself only owns its known-value automaton and mask).
use std::sync::LazyLock;

use crate::error::RedactError;
use crate::pem::PemMarkers;
use crate::triggers::Triggers;

#[derive(Debug)]
pub(crate) struct Rules {
    pub(crate) triggers: Triggers,
    pub(crate) pem: PemMarkers,
}

static RULES: LazyLock<Result<Rules, RedactError>> = LazyLock::new(|| {
    let err = |what: &str, e: regex::Error| RedactError::Build(format!("{what}: {e}"));
    Ok(Rules {
        triggers: Triggers::compile()
            .ok_or_else(|| RedactError::Build("trigger literals: no searcher".to_string()))?,
        pem: PemMarkers::compile().map_err(|e| err("PEM markers", e))?,
    })
});

/// The shared rules, compiling them on first call.
pub(crate) fn rules() -> Result<&'static Rules, RedactError> {
    RULES.as_ref().map_err(Clone::clone)
}
