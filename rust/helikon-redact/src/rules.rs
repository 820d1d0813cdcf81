//! The process-wide compiled pattern set: built once, on first use, shared by every
//! [`crate::Redactor`] (a redactor itself only owns its known-value automaton and mask).
use std::sync::LazyLock;

use regex::Regex;

use crate::error::RedactError;
use crate::pem::PemMarkers;
use crate::tokens::TokenFormats;
use crate::{keyvalue, url};

#[derive(Debug)]
pub(crate) struct Rules {
    pub(crate) key: Regex,
    pub(crate) url: Regex,
    pub(crate) tokens: TokenFormats,
    pub(crate) pem: PemMarkers,
}

static RULES: LazyLock<Result<Rules, RedactError>> = LazyLock::new(|| {
    let err = |what: &str, e: regex::Error| RedactError::Build(format!("{what}: {e}"));
    Ok(Rules {
        key: keyvalue::key_regex().map_err(|e| err("key-name pattern", e))?,
        url: url::url_regex().map_err(|e| err("URL pattern", e))?,
        tokens: TokenFormats::compile().map_err(|e| err("token formats", e))?,
        pem: PemMarkers::compile().map_err(|e| err("PEM markers", e))?,
    })
});

/// The shared rules, compiling them on first call.
pub(crate) fn rules() -> Result<&'static Rules, RedactError> {
    RULES.as_ref().map_err(Clone::clone)
}
