//! The one place Rust errors become Python exceptions.
//!
//! The exception classes live in the `helikon.errors` package (the Python tree is the single
//! source of truth); [`Class`] names the ones the native module raises, each looked up once and
//! cached.
//! Every crate's error type is mapped here ([`from_schema`], [`from_redact`],
//! [`from_sandbox`], [`from_shell`], [`from_script_compile`], [`from_script_call`],
//! [`from_loop`]); the area files only convert values and
//! call these. Should `helikon.errors` be unimportable (a broken install), the message is
//! raised as `RuntimeError` rather than lost.
use helikon_loop::ConfigError as LoopConfigError;
use helikon_redact::RedactError;
use helikon_sandbox::SandboxError;
use helikon_schema::SchemaError;
use helikon_script::ScriptError;
use helikon_shell::ShellError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyAnyMethods;

/// The `helikon.errors` classes the native module raises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// `HelikonError`: an internal failure (serialization of a native value).
    Helikon,
    /// `ConfigError`: bad input (a configuration, JSON text, an argument out of range).
    Config,
    /// `SchemaError`: a JSON Schema the normalizers refuse.
    Schema,
    /// `ToolError`: a tool call failed (a script tool's run).
    Tool,
    /// `ToolDenied`: the sandbox refused a path (a safety boundary).
    ToolDenied,
    /// `ToolOther`: a sandboxed operation failed otherwise.
    ToolOther,
    /// `SandboxUnavailable`: the OS cannot enforce the sandbox asked for.
    SandboxUnavailable,
}

impl Class {
    const ALL: usize = 7;

    /// The class's name in `helikon.errors`.
    pub const fn name(self) -> &'static str {
        match self {
            Class::Helikon => "HelikonError",
            Class::Config => "ConfigError",
            Class::Schema => "SchemaError",
            Class::Tool => "ToolError",
            Class::ToolDenied => "ToolDenied",
            Class::ToolOther => "ToolOther",
            Class::SandboxUnavailable => "SandboxUnavailable",
        }
    }

    const fn slot(self) -> usize {
        self as usize
    }
}

static CLASSES: [PyOnceLock<Py<PyAny>>; Class::ALL] = [const { PyOnceLock::new() }; Class::ALL];

/// `helikon.errors.<class>(message)` as a `PyErr`.
pub fn raise(py: Python<'_>, class: Class, message: impl Into<String>) -> PyErr {
    let message = message.into();
    let cls = CLASSES[class.slot()].get_or_try_init(py, || {
        py.import("helikon.errors")
            .and_then(|m| m.getattr(class.name()))
            .map(Bound::unbind)
    });
    match cls {
        Ok(cls) => match cls.bind(py).call1((message,)) {
            Ok(inst) => PyErr::from_value(inst),
            Err(e) => e,
        },
        Err(_) => pyo3::exceptions::PyRuntimeError::new_err(message),
    }
}

/// A refused or unusable schema: `SchemaError`.
pub fn from_schema(py: Python<'_>, e: &SchemaError) -> PyErr {
    raise(py, Class::Schema, e.to_string())
}

/// A redactor that cannot be built: `ConfigError` for bad input, else `HelikonError`.
pub fn from_redact(py: Python<'_>, e: RedactError) -> PyErr {
    match e {
        RedactError::Config(_) => raise(py, Class::Config, e.to_string()),
        RedactError::Build(_) => raise(py, Class::Helikon, e.to_string()),
    }
}

/// A sandbox failure: a refused path is `ToolDenied`, a bad policy `ConfigError`, a kernel
/// that cannot enforce the policy `SandboxUnavailable`, anything else `ToolOther`.
pub fn from_sandbox(py: Python<'_>, e: SandboxError) -> PyErr {
    match e {
        SandboxError::Denied { path, reason } => {
            raise(py, Class::ToolDenied, format!("{path}: {reason}"))
        }
        SandboxError::Config(_) => raise(py, Class::Config, e.to_string()),
        SandboxError::Unsupported(_) | SandboxError::SelfTest(_) => {
            raise(py, Class::SandboxUnavailable, e.to_string())
        }
        _ => raise(py, Class::ToolOther, e.to_string()),
    }
}

/// A shell rule or policy that does not parse: `ConfigError`.
pub fn from_shell(py: Python<'_>, e: ShellError) -> PyErr {
    raise(py, Class::Config, e.to_string())
}

/// A script tool that does not compile (or has no `fn run(args)`): `ConfigError`.
pub fn from_script_compile(py: Python<'_>, e: ScriptError) -> PyErr {
    raise(py, Class::Config, e.to_string())
}

/// A script tool call that failed or was stopped at a limit: `ToolError`.
pub fn from_script_call(py: Python<'_>, e: ScriptError) -> PyErr {
    raise(py, Class::Tool, e.to_string())
}

/// A loop configuration the machine refuses: `ConfigError`.
pub fn from_loop(py: Python<'_>, e: LoopConfigError) -> PyErr {
    raise(py, Class::Config, e.to_string())
}

/// `helikon.errors.<class_name>(message)` for a class named at run time; an unknown name
/// becomes `HelikonError`. Prefer [`raise`] with a [`Class`]: this form stays for code written
/// before it.
#[allow(dead_code)]
pub fn helikon_error(py: Python<'_>, class_name: &str, message: String) -> PyErr {
    let class = [
        Class::Config,
        Class::Schema,
        Class::Tool,
        Class::ToolDenied,
        Class::ToolOther,
        Class::SandboxUnavailable,
    ]
    .into_iter()
    .find(|c| c.name() == class_name)
    .unwrap_or(Class::Helikon);
    raise(py, class, message)
}
