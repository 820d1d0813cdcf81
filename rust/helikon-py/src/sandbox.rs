//! Binding of `helikon-sandbox`: the compile-once `SandboxPolicy` and `ConfinedDir`
//! pyclasses, and a kernel probe.
//!
//! Configuration arrives as JSON; results leave as JSON text or bytes. Building a policy
//! (kernel probe + self-test), running a command and every file operation release the GIL.
//! Errors map to `helikon.errors`: `Denied` -> `ToolDenied`, `Config` -> `ConfigError`,
//! `Unsupported` / `SelfTest` -> `SandboxUnavailable`, anything else -> `ToolOther`.
use std::collections::BTreeMap;
use std::time::Duration;

use std::sync::{Arc, Mutex};

use helikon_sandbox::{probe, ConfinedDir, PendingRun, SandboxPolicy as Core};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors::{from_sandbox, raise, Class};

/// Default cap for `ConfinedDir.read_*` (10 MiB).
const DEFAULT_READ_CAP: u64 = 10 * 1024 * 1024;

fn to_json<T: serde::Serialize>(py: Python<'_>, value: &T) -> PyResult<String> {
    serde_json::to_string(value).map_err(|e| raise(py, Class::Helikon, format!("serialize: {e}")))
}

/// A built execution sandbox (see `helikon._native.pyi` for the documented API).
#[pyclass(frozen, name = "SandboxPolicy", module = "helikon._native")]
pub struct PySandboxPolicy {
    inner: Arc<Core>,
}

fn timeout_of(py: Python<'_>, timeout_s: f64) -> PyResult<Duration> {
    if !timeout_s.is_finite() || timeout_s <= 0.0 {
        return Err(raise(
            py,
            Class::Config,
            "timeout_s must be a positive number of seconds".to_string(),
        ));
    }
    Duration::try_from_secs_f64(timeout_s)
        .map_err(|_| raise(py, Class::Config, "timeout_s is out of range".to_string()))
}

/// A command started by `SandboxPolicy.start` (see `helikon._native.pyi`).
#[pyclass(frozen, name = "RunningCommand", module = "helikon._native")]
pub struct PyRunningCommand {
    inner: Mutex<PendingRun>,
    pidfd: Option<i32>,
    supervisor: Option<i32>,
}

#[pymethods]
impl PyRunningCommand {
    /// A descriptor that turns readable when the command is done (valid until `finish`),
    /// or `None` on kernels without pidfds.
    #[getter]
    fn pidfd(&self) -> Option<i32> {
        self.pidfd
    }

    /// The supervisor's pid: its children are the command's processes.
    #[getter]
    fn supervisor_pid(&self) -> Option<i32> {
        self.supervisor
    }

    /// The outcome JSON, as `SandboxPolicy.run` returns it (waits if not done yet).
    fn finish(&self, py: Python<'_>) -> PyResult<String> {
        let out = py.detach(|| match self.inner.lock() {
            Ok(mut run) => run.finish(),
            Err(poisoned) => poisoned.into_inner().finish(),
        });
        let out = out.map_err(|e| from_sandbox(py, e))?;
        to_json(py, &out)
    }
}

#[pymethods]
impl PySandboxPolicy {
    /// Parse `config_json`, probe the kernel, prepare the rules and run the self-test.
    #[new]
    fn new(py: Python<'_>, config_json: &str) -> PyResult<Self> {
        let text = config_json.to_string();
        py.detach(move || Core::from_json(&text))
            .map(|inner| Self {
                inner: Arc::new(inner),
            })
            .map_err(|e| from_sandbox(py, e))
    }

    /// Start `command` like `run` and return at once: a `RunningCommand` whose `pidfd` turns
    /// readable when it is done; its `finish()` returns the outcome JSON.
    #[pyo3(signature = (command, timeout_s, env = None, egress_tag = 0))]
    fn start(
        &self,
        py: Python<'_>,
        command: &str,
        timeout_s: f64,
        env: Option<BTreeMap<String, String>>,
        egress_tag: u64,
    ) -> PyResult<PyRunningCommand> {
        use std::os::fd::AsRawFd;
        let timeout = timeout_of(py, timeout_s)?;
        let extra = env.unwrap_or_default();
        let run = py.detach(|| self.inner.start_tagged(command, timeout, &extra, egress_tag));
        let run = run.map_err(|e| from_sandbox(py, e))?;
        Ok(PyRunningCommand {
            pidfd: run.pidfd().map(|fd| fd.as_raw_fd()),
            supervisor: run.supervisor_pid(),
            inner: Mutex::new(run),
        })
    }

    /// Run `command` with `<shell> -c` in the root; returns the outcome JSON. `env` adds
    /// variables for this command only; `egress_tag` goes with each of its connections over
    /// the egress bridge.
    #[pyo3(signature = (command, timeout_s, env = None, egress_tag = 0))]
    fn run(
        &self,
        py: Python<'_>,
        command: &str,
        timeout_s: f64,
        env: Option<BTreeMap<String, String>>,
        egress_tag: u64,
    ) -> PyResult<String> {
        let timeout = timeout_of(py, timeout_s)?;
        let extra = env.unwrap_or_default();
        let out = py.detach(|| self.inner.run_tagged(command, timeout, &extra, egress_tag));
        let out = out.map_err(|e| from_sandbox(py, e))?;
        to_json(py, &out)
    }

    /// The guarantees JSON.
    fn guarantees(&self, py: Python<'_>) -> PyResult<String> {
        to_json(py, self.inner.guarantees())
    }

    /// The probed kernel features as JSON (`null` in host mode).
    fn kernel_features(&self, py: Python<'_>) -> PyResult<String> {
        to_json(py, &self.inner.kernel_features())
    }

    /// The egress mechanism in force (`"namespace"`, `"landlock_port"`) or `None`.
    fn egress_mechanism(&self) -> Option<&'static str> {
        self.inner.egress_mechanism().map(|m| m.as_str())
    }

    /// The port the command reaches the egress proxy at, or `None`.
    fn egress_port(&self) -> Option<u16> {
        self.inner.egress_port()
    }

    /// A new descriptor (owned by the caller) for the proxy's end of the egress bridge,
    /// or `None` unless the mechanism is the namespace.
    fn egress_bridge_fd(&self, py: Python<'_>) -> PyResult<Option<i32>> {
        use std::os::fd::IntoRawFd;
        let fd = self.inner.egress_bridge().map_err(|e| from_sandbox(py, e))?;
        Ok(fd.map(IntoRawFd::into_raw_fd))
    }

    /// The canonical root path.
    #[getter]
    fn root(&self) -> String {
        self.inner.root().root().display().to_string()
    }

    /// The label of the guarantees (`"os-sandbox (landlock+seccomp)"` or
    /// `"host (no containment)"`).
    #[getter]
    fn label(&self) -> String {
        self.inner.guarantees().label.clone()
    }

    fn __repr__(&self) -> String {
        format!(
            "SandboxPolicy(root={:?}, label={:?})",
            self.inner.root().root().display().to_string(),
            self.inner.guarantees().label
        )
    }
}

/// A directory opened as a capability for the file tools.
#[pyclass(frozen, name = "ConfinedDir", module = "helikon._native")]
pub struct PyConfinedDir {
    inner: ConfinedDir,
}

#[pymethods]
impl PyConfinedDir {
    /// Open `root` (an existing directory).
    #[new]
    fn new(py: Python<'_>, root: &str) -> PyResult<Self> {
        let root = root.to_string();
        py.detach(move || ConfinedDir::open(&root))
            .map(|inner| Self { inner })
            .map_err(|e| from_sandbox(py, e))
    }

    /// The canonical root path.
    #[getter]
    fn root(&self) -> String {
        self.inner.root().display().to_string()
    }

    /// The bytes of a regular file of at most `max_bytes` bytes.
    #[pyo3(
        signature = (path, max_bytes = DEFAULT_READ_CAP),
        text_signature = "(self, path, max_bytes=10485760)"
    )]
    fn read_bytes<'py>(
        &self,
        py: Python<'py>,
        path: &str,
        max_bytes: u64,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let data = py.detach(|| self.inner.read(path, max_bytes));
        let data = data.map_err(|e| from_sandbox(py, e))?;
        Ok(PyBytes::new(py, &data))
    }

    /// The UTF-8 text of a regular file of at most `max_bytes` bytes.
    #[pyo3(
        signature = (path, max_bytes = DEFAULT_READ_CAP),
        text_signature = "(self, path, max_bytes=10485760)"
    )]
    fn read_text(&self, py: Python<'_>, path: &str, max_bytes: u64) -> PyResult<String> {
        let data = py.detach(|| self.inner.read(path, max_bytes));
        let data = data.map_err(|e| from_sandbox(py, e))?;
        String::from_utf8(data).map_err(|e| {
            raise(
                py,
                Class::ToolOther,
                format!(
                    "{path}: not valid UTF-8 text (invalid byte at offset {})",
                    e.utf8_error().valid_up_to()
                ),
            )
        })
    }

    /// Atomically replace (or create) `path` with `data`.
    fn write_atomic(&self, py: Python<'_>, path: &str, data: &[u8]) -> PyResult<()> {
        py.detach(|| self.inner.write_atomic(path, data))
            .map_err(|e| from_sandbox(py, e))
    }

    /// Atomically replace (or create) `path` with `text` encoded as UTF-8.
    fn write_text(&self, py: Python<'_>, path: &str, text: &str) -> PyResult<()> {
        py.detach(|| self.inner.write_atomic(path, text.as_bytes()))
            .map_err(|e| from_sandbox(py, e))
    }

    /// Metadata JSON of `path` (`""` is the root).
    fn stat(&self, py: Python<'_>, path: &str) -> PyResult<String> {
        let st = py.detach(|| self.inner.stat(path));
        let st = st.map_err(|e| from_sandbox(py, e))?;
        to_json(py, &st)
    }

    /// Whether `path` exists inside the root (a path that would escape raises ToolDenied).
    fn exists(&self, py: Python<'_>, path: &str) -> PyResult<bool> {
        py.detach(|| self.inner.exists(path))
            .map_err(|e| from_sandbox(py, e))
    }

    /// Entries of the directory `path` as JSON, sorted by name.
    #[pyo3(signature = (path = ""))]
    fn list(&self, py: Python<'_>, path: &str) -> PyResult<String> {
        let entries = py.detach(|| self.inner.list(path));
        let entries = entries.map_err(|e| from_sandbox(py, e))?;
        to_json(py, &entries)
    }

    fn __repr__(&self) -> String {
        format!("ConfinedDir({:?})", self.inner.root().display().to_string())
    }
}

/// Probe the running kernel's sandbox features; returns JSON.
#[pyfunction]
fn sandbox_probe(py: Python<'_>) -> PyResult<String> {
    let features = py.detach(probe::probe);
    to_json(py, &features)
}

/// What the OS sandbox can enforce on this machine; returns JSON.
#[pyfunction]
fn sandbox_capabilities(py: Python<'_>) -> PyResult<String> {
    let caps = py.detach(helikon_sandbox::capabilities);
    to_json(py, &caps)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySandboxPolicy>()?;
    m.add_class::<PyRunningCommand>()?;
    m.add_class::<PyConfinedDir>()?;
    m.add_function(wrap_pyfunction!(sandbox_probe, m)?)?;
    m.add_function(wrap_pyfunction!(sandbox_capabilities, m)?)?;
    Ok(())
}
