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
/// "description"}], "output_type": null | {"name", "schema", "mode"?, "retries"?,
/// "tool_name"?}}`.
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
    /// How the answer is asked for on the turns that may offer tools.
    pub mode: OutputMode,
    /// How many repair turns an invalid answer gets before the run fails (default 1).
    pub retries: u32,
    /// The output tool's name in [`OutputMode::Tool`] (default `final_result`).
    pub tool_name: String,
}

/// How a run with tools gets its structured answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputMode {
    /// Tool turns ask for nothing; an answer without calls is followed by a constrained
    /// finalizing turn (no tools, the schema as response format). One extra call.
    #[default]
    Finalize,
    /// Every turn sends the schema as the response format alongside the tools; an answer
    /// without calls is the output (validated; invalid goes to a repair turn).
    Native,
    /// Every turn offers an output tool whose parameters are the schema; calling it ends the
    /// run with its arguments as the output. A text answer that validates ends the run too;
    /// any other text falls back to the finalizing turn.
    Tool,
}

/// The default output tool name.
pub const DEFAULT_OUTPUT_TOOL: &str = "final_result";

fn default_retries() -> u32 {
    1
}

fn default_tool_name() -> String {
    DEFAULT_OUTPUT_TOOL.to_owned()
}

#[allow(clippy::trivially_copy_pass_by_ref)] // serde's skip_serializing_if passes a reference
fn is_default_mode(m: &OutputMode) -> bool {
    *m == OutputMode::Finalize
}

#[allow(clippy::trivially_copy_pass_by_ref)]
fn is_one(n: &u32) -> bool {
    *n == 1
}

fn is_default_tool(name: &str) -> bool {
    name == DEFAULT_OUTPUT_TOOL
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawOutputType {
    name: String,
    schema: Value,
    #[serde(default, skip_serializing_if = "is_default_mode")]
    mode: OutputMode,
    #[serde(default = "default_retries", skip_serializing_if = "is_one")]
    retries: u32,
    #[serde(default = "default_tool_name", skip_serializing_if = "is_default_tool")]
    tool_name: String,
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
                    mode: raw.mode,
                    retries: raw.retries,
                    tool_name: raw.tool_name,
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
            if out.mode == OutputMode::Tool {
                if out.tool_name.is_empty() {
                    return Err(err("output_type.tool_name", "must not be empty"));
                }
                if seen.contains(out.tool_name.as_str()) {
                    return Err(err(
                        "output_type.tool_name",
                        format!("tool name collision: `{}` is already used", out.tool_name),
                    ));
                }
            }
        }
        Ok(())
    }

    /// The config as JSON (the same shape [`LoopConfig::from_json`] reads).
    pub fn to_value(&self) -> Value {
        let output_type = self.output_type.as_ref().map(|o| RawOutputType {
            name: o.name.clone(),
            schema: o.schema.as_value().clone(),
            mode: o.mode,
            retries: o.retries,
            tool_name: o.tool_name.clone(),
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

    /// A regular turn: real tools then transfer tools (then the output tool, in
    /// [`OutputMode::Tool`]), the caller's response format (the output schema, in
    /// [`OutputMode::Native`]).
    pub(crate) fn plain_request(&self) -> RequestPlan {
        let tools = self.tools.iter().map(|t| t.name.clone());
        let transfers = self.handoffs.iter().map(|h| h.tool_name.clone());
        let mut names: Vec<String> = tools.chain(transfers).collect();
        let mut response_format = ResponseFormat::Unchanged;
        match &self.output_type {
            Some(out) if out.mode == OutputMode::Tool => names.push(out.tool_name.clone()),
            Some(out) if out.mode == OutputMode::Native => {
                response_format = out.json_schema_format();
            }
            _ => {}
        }
        RequestPlan {
            tools: names,
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
            response_format,
            clear_tool_choice: false,
            repair_message: None,
        }
    }
}

impl OutputType {
    /// This type's JSON schema as a (strict) response format.
    pub(crate) fn json_schema_format(&self) -> ResponseFormat {
        ResponseFormat::JsonSchema {
            name: self.name.clone(),
            schema: self.schema.as_value().clone(),
            strict: true,
        }
    }

    /// A constrained turn: no tools, this type's JSON schema (strict), tool choice cleared.
    pub(crate) fn constrained_request(&self, repair_message: Option<crate::Item>) -> RequestPlan {
        RequestPlan {
            tools: Vec::new(),
            transfer_tool_defs: Vec::new(),
            response_format: self.json_schema_format(),
            clear_tool_choice: true,
            repair_message,
        }
    }
}
