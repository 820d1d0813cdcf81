//! `LoopConfig`: the per-agent part of the transition context, parsed and checked once.
use std::collections::HashSet;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::outcome::{RequestPlan, ResponseFormat, TransferToolDef};
use crate::validate::OutputSchema;

/// The reference's default `max_turns`.
pub const DEFAULT_MAX_TURNS: u32 = 16;

/// `{"max_turns", "tools": [{"name", "description"}], "handoffs": [{"tool_name", "target",
/// "description"}], "output_type": null | {"name", "schema"}}`.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopConfig {
    pub max_turns: u32,
    pub tools: Vec<ToolSpec>,
    pub handoffs: Vec<HandoffSpec>,
    pub output_type: Option<OutputType>,
}

/// A real tool the agent offers (its body lives in Python).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolSpec {
    pub name: String,
    #[serde(default)]
    pub description: String,
}

/// A handoff target, advertised as the no-argument tool `tool_name`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HandoffSpec {
    pub tool_name: String,
    pub target: String,
    #[serde(default)]
    pub description: String,
}

/// The structured output the run must end with.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputType {
    pub name: String,
    pub schema: OutputSchema,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOutputType {
    name: String,
    schema: Value,
}

/// A configuration problem; the message names the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct ConfigError {
    /// Where the problem is, e.g. `tools[1].name` or `output_type.schema`.
    pub field: String,
    pub message: String,
}

fn err(field: impl Into<String>, message: impl ToString) -> ConfigError {
    ConfigError {
        field: field.into(),
        message: message.to_string(),
    }
}

fn field<T: DeserializeOwned>(value: Value, name: &str) -> Result<T, ConfigError> {
    serde_json::from_value(value).map_err(|e| err(name, e))
}

fn list<T: DeserializeOwned>(
    obj: &mut Map<String, Value>,
    name: &str,
) -> Result<Vec<T>, ConfigError> {
    match obj.remove(name) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(values)) => values
            .into_iter()
            .enumerate()
            .map(|(i, v)| field(v, &format!("{name}[{i}]")))
            .collect(),
        Some(_) => Err(err(name, "expected an array")),
    }
}

impl LoopConfig {
    /// Parse and check a JSON config. Unknown top-level fields are rejected.
    pub fn from_json(text: &str) -> Result<Self, ConfigError> {
        let value: Value = serde_json::from_str(text).map_err(|e| err("config", e))?;
        Self::from_value(value)
    }

    /// As [`LoopConfig::from_json`], from a parsed value.
    pub fn from_value(value: Value) -> Result<Self, ConfigError> {
        let Value::Object(mut obj) = value else {
            return Err(err("config", "expected a JSON object"));
        };
        let max_turns = match obj.remove("max_turns") {
            None | Some(Value::Null) => DEFAULT_MAX_TURNS,
            Some(v) => field(v, "max_turns")?,
        };
        let tools: Vec<ToolSpec> = list(&mut obj, "tools")?;
        let handoffs: Vec<HandoffSpec> = list(&mut obj, "handoffs")?;
        let output_type = match obj.remove("output_type") {
            None | Some(Value::Null) => None,
            Some(v) => {
                let raw: RawOutputType = field(v, "output_type")?;
                let schema =
                    OutputSchema::compile(raw.schema).map_err(|e| err("output_type.schema", e))?;
                Some(OutputType {
                    name: raw.name,
                    schema,
                })
            }
        };
        if let Some(unknown) = obj.keys().next() {
            return Err(err(unknown.as_str(), "unknown field"));
        }
        let config = LoopConfig {
            max_turns,
            tools,
            handoffs,
            output_type,
        };
        config.check()?;
        Ok(config)
    }

    /// Invariants: `max_turns >= 1`, non-empty names, tool and transfer-tool names unique.
    pub fn check(&self) -> Result<(), ConfigError> {
        if self.max_turns == 0 {
            return Err(err("max_turns", "must be at least 1"));
        }
        let mut seen = HashSet::new();
        let real = self
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| (format!("tools[{i}].name"), &t.name));
        let transfer = self
            .handoffs
            .iter()
            .enumerate()
            .map(|(i, h)| (format!("handoffs[{i}].tool_name"), &h.tool_name));
        for (path, name) in real.chain(transfer) {
            if name.is_empty() {
                return Err(err(path, "must not be empty"));
            }
            if !seen.insert(name.as_str()) {
                return Err(err(
                    path,
                    format!("tool name collision: `{name}` is already used"),
                ));
            }
        }
        if let Some(out) = &self.output_type {
            if out.name.is_empty() {
                return Err(err("output_type.name", "must not be empty"));
            }
        }
        Ok(())
    }

    /// The config as JSON (the same shape [`LoopConfig::from_json`] reads).
    pub fn to_value(&self) -> Value {
        let output_type = self.output_type.as_ref().map(|o| RawOutputType {
            name: o.name.clone(),
            schema: o.schema.as_value().clone(),
        });
        serde_json::json!({
            "max_turns": self.max_turns,
            "tools": self.tools,
            "handoffs": self.handoffs,
            "output_type": output_type,
        })
    }

    /// The handoff whose transfer tool is called `tool_name`.
    pub fn handoff_for(&self, tool_name: &str) -> Option<&HandoffSpec> {
        self.handoffs.iter().find(|h| h.tool_name == tool_name)
    }

    /// A regular turn: real tools then transfer tools, the caller's response format.
    pub(crate) fn plain_request(&self) -> RequestPlan {
        let tools = self.tools.iter().map(|t| t.name.clone());
        let transfers = self.handoffs.iter().map(|h| h.tool_name.clone());
        RequestPlan {
            tools: tools.chain(transfers).collect(),
            transfer_tool_defs: self
                .handoffs
                .iter()
                .map(|h| TransferToolDef {
                    name: h.tool_name.clone(),
                    description: h.description.clone(),
                    schema: serde_json::json!({
                        "type": "object", "properties": {}, "additionalProperties": false
                    }),
                })
                .collect(),
            response_format: ResponseFormat::Unchanged,
            clear_tool_choice: false,
            repair_message: None,
        }
    }
}

impl OutputType {
    /// A constrained turn: no tools, this type's JSON schema (strict), tool choice cleared.
    pub(crate) fn constrained_request(&self, repair_message: Option<crate::Item>) -> RequestPlan {
        RequestPlan {
            tools: Vec::new(),
            transfer_tool_defs: Vec::new(),
            response_format: ResponseFormat::JsonSchema {
                name: self.name.clone(),
                schema: self.schema.as_value().clone(),
                strict: true,
            },
            clear_tool_choice: true,
            repair_message,
        }
    }
}
