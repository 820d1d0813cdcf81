//! `helikon._native` shell area: Bash command analysis, command policies, path rules.
//!
//! Conversions, GIL release and error mapping only; the logic is in `helikon-shell`.
//!
//! `shell_analyze` returns the public result types of `helikon.shell` directly (frozen
//! classes, re-exported there as `Analysis`, `Command`, `Redirection`, `Unanalysable`,
//! `Assignment`). No JSON: the analyser's packed result (`PackedAnalysis`, its strings in one
//! buffer) is built with the GIL released and kept as is; Python objects for a field are
//! created when it is first read, and an `Analysis` builds each of its tuples once. Equality,
//! hashing, repr and pickling follow the frozen dataclasses these classes replace.
use std::borrow::Cow;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyString, PyTuple, PyType};

use helikon_shell::{CommandPolicy as Policy, CommandRef, PackedAnalysis, PathRule as Rule, Via};

use crate::errors::{from_shell, raise, Class};

/// `Name(field=repr, …)` from already-built Python values (the dataclass repr format).
fn repr_of(name: &str, fields: &[(&str, Bound<'_, PyAny>)]) -> PyResult<String> {
    let mut out = format!("{name}(");
    for (i, (field, value)) in fields.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(field);
        out.push('=');
        out.push_str(value.repr()?.to_str()?);
    }
    out.push(')');
    Ok(out)
}

fn hash_of<T: Hash>(value: &T) -> u64 {
    let mut h = DefaultHasher::new();
    value.hash(&mut h);
    h.finish()
}

fn str_tuple<'py>(py: Python<'py>, items: &[String]) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(py, items)
}

/// One redirection.
///
/// Attributes:
///     op: ``out`` (``>``, ``>|``, ``&>``), ``append`` (``>>``, ``&>>``), ``in`` (``<``),
///         ``read_write`` (``<>``), ``fd_dup`` (``2>&1``), ``heredoc`` or ``herestring``.
///     target: The target after quote removal (the delimiter for a here-document).
///     fd: The file descriptor written before the operator, if any (``"2"`` in ``2>f``).
///     line: For a redirection that belongs to no command, its 1-based line.
#[pyclass(
    frozen,
    eq,
    hash,
    from_py_object,
    module = "helikon.shell",
    name = "Redirection"
)]
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ShellRedirection {
    op: Cow<'static, str>,
    target: String,
    fd: Option<String>,
    line: Option<u32>,
}

#[pymethods]
impl ShellRedirection {
    #[new]
    #[pyo3(signature = (op, target, fd = None, line = None))]
    fn new(op: String, target: String, fd: Option<String>, line: Option<u32>) -> Self {
        ShellRedirection {
            op: op.into(),
            target,
            fd,
            line,
        }
    }

    #[classattr]
    fn __match_args__() -> (&'static str, &'static str, &'static str, &'static str) {
        ("op", "target", "fd", "line")
    }

    #[getter]
    fn op(&self) -> &str {
        &self.op
    }

    #[getter]
    fn target(&self) -> &str {
        &self.target
    }

    #[getter]
    fn fd(&self) -> Option<&str> {
        self.fd.as_deref()
    }

    #[getter]
    fn line(&self) -> Option<u32> {
        self.line
    }

    /// True when the redirection writes to its target file.
    #[getter]
    fn writes(&self) -> bool {
        matches!(&*self.op, "out" | "append" | "read_write")
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let py = slf.py();
        let s = slf.get();
        repr_of(
            "Redirection",
            &[
                ("op", PyString::new(py, &s.op).into_any()),
                ("target", PyString::new(py, &s.target).into_any()),
                ("fd", s.fd.as_deref().into_pyobject(py)?.into_any()),
                ("line", s.line.into_pyobject(py)?.into_any()),
            ],
        )
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let s = slf.get();
        let args = (&*s.op, &s.target, s.fd.as_deref(), s.line).into_pyobject(slf.py())?;
        (slf.get_type(), args).into_pyobject(slf.py())
    }
}

impl ShellRedirection {
    fn of_command(r: &helikon_shell::Redirection) -> Self {
        ShellRedirection {
            op: r.op.into(),
            target: r.target.clone(),
            fd: r.fd.clone(),
            line: None,
        }
    }

    fn bare(r: &helikon_shell::BareRedirection) -> Self {
        ShellRedirection {
            op: r.op.into(),
            target: r.target.clone(),
            fd: None,
            line: Some(r.line),
        }
    }
}

/// A part of the command that could not be resolved statically.
///
/// Attributes:
///     reason: Why, e.g. ``"program given by an expansion"``.
///     snippet: The offending text (shortened).
///     line: Its 1-based line.
#[pyclass(
    frozen,
    eq,
    hash,
    from_py_object,
    module = "helikon.shell",
    name = "Unanalysable"
)]
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ShellUnanalysable {
    #[pyo3(get)]
    reason: String,
    #[pyo3(get)]
    snippet: String,
    #[pyo3(get)]
    line: u32,
}

#[pymethods]
impl ShellUnanalysable {
    #[new]
    fn new(reason: String, snippet: String, line: u32) -> Self {
        ShellUnanalysable {
            reason,
            snippet,
            line,
        }
    }

    #[classattr]
    fn __match_args__() -> (&'static str, &'static str, &'static str) {
        ("reason", "snippet", "line")
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        repr_of(
            "Unanalysable",
            &[
                ("reason", PyString::new(py, &self.reason).into_any()),
                ("snippet", PyString::new(py, &self.snippet).into_any()),
                ("line", self.line.into_pyobject(py)?.into_any()),
            ],
        )
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let s = slf.get();
        (slf.get_type(), (&s.reason, &s.snippet, s.line)).into_pyobject(slf.py())
    }
}

/// A variable assignment that is not a command prefix (``X=1; …``, ``export X=1``).
#[pyclass(
    frozen,
    eq,
    hash,
    from_py_object,
    module = "helikon.shell",
    name = "Assignment"
)]
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ShellAssignment {
    #[pyo3(get)]
    name: String,
    #[pyo3(get)]
    value: String,
    #[pyo3(get)]
    line: u32,
}

#[pymethods]
impl ShellAssignment {
    #[new]
    fn new(name: String, value: String, line: u32) -> Self {
        ShellAssignment { name, value, line }
    }

    #[classattr]
    fn __match_args__() -> (&'static str, &'static str, &'static str) {
        ("name", "value", "line")
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        repr_of(
            "Assignment",
            &[
                ("name", PyString::new(py, &self.name).into_any()),
                ("value", PyString::new(py, &self.value).into_any()),
                ("line", self.line.into_pyobject(py)?.into_any()),
            ],
        )
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let s = slf.get();
        (slf.get_type(), (&s.name, &s.value, s.line)).into_pyobject(slf.py())
    }
}

/// One resolved command.
///
/// Attributes:
///     program: The program name: quotes removed, basename of a path.
///     argv: The arguments after quote removal; ``argv[0]`` is the program word as written.
///         Expansions appear as their source text (``$HOME``).
///     redirections: The command's redirections (including those of an enclosing group).
///     line: Its 1-based line in the analysed text.
///     via: The wrappers and nesting constructs it was reached through, outermost first
///         (``"sudo"``, ``"$(...)"``, ``"bash -c"``, ``"find -exec"``, ``"function f"``).
///     text: The source text of the sub-command.
///     env: ``NAME=value`` assignments applying to the command.
///     cwd: The directory the command acts in when an earlier ``cd``/``pushd`` in the same
///         command (or its own ``git -C``/``make -C``/``tar -C``) moved it: an absolute path,
///         a ``~`` path, or ``"?"`` when unknown (``cd "$X"``); ``None`` for the directory the
///         command starts in.
#[pyclass(
    frozen,
    eq,
    hash,
    from_py_object,
    module = "helikon.shell",
    name = "Command"
)]
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct ShellCommand {
    program: String,
    argv: Vec<String>,
    redirections: Vec<ShellRedirection>,
    line: u32,
    via: Vec<Cow<'static, str>>,
    text: String,
    env: Vec<(String, String)>,
    cwd: Option<String>,
}

impl ShellCommand {
    fn from_rust(c: CommandRef<'_>) -> Self {
        ShellCommand {
            program: c.program().to_string(),
            argv: c.argv().map(String::from).collect(),
            redirections: c
                .redirections()
                .iter()
                .map(ShellRedirection::of_command)
                .collect(),
            line: c.line(),
            via: c.via().iter().cloned().map(Via::into_label).collect(),
            text: c.text().to_string(),
            env: c.env().to_vec(),
            cwd: c.cwd().map(String::from),
        }
    }
}

fn unanalysable_from_rust(u: &helikon_shell::Unanalysable) -> ShellUnanalysable {
    ShellUnanalysable {
        reason: u.reason.clone(),
        snippet: u.snippet.clone(),
        line: u.line,
    }
}

fn assignment_from_rust(x: &helikon_shell::Assignment) -> ShellAssignment {
    ShellAssignment {
        name: x.name.clone(),
        value: x.value.clone(),
        line: x.line,
    }
}

#[pymethods]
impl ShellCommand {
    #[new]
    #[pyo3(signature = (program, argv, redirections, line, via, text, env, cwd=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        program: String,
        argv: Vec<String>,
        redirections: Vec<ShellRedirection>,
        line: u32,
        via: Vec<String>,
        text: String,
        env: Vec<(String, String)>,
        cwd: Option<String>,
    ) -> Self {
        ShellCommand {
            program,
            argv,
            redirections,
            line,
            via: via.into_iter().map(Cow::Owned).collect(),
            text,
            env,
            cwd,
        }
    }

    #[classattr]
    #[allow(clippy::type_complexity)]
    fn __match_args__() -> (
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
    ) {
        (
            "program",
            "argv",
            "redirections",
            "line",
            "via",
            "text",
            "env",
            "cwd",
        )
    }

    #[getter]
    fn program(&self) -> &str {
        &self.program
    }

    #[getter]
    fn argv<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        str_tuple(py, &self.argv)
    }

    /// The arguments after the program word.
    #[getter]
    fn args<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        str_tuple(py, self.argv.get(1..).unwrap_or(&[]))
    }

    #[getter]
    fn redirections<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.redirections.iter().cloned())
    }

    #[getter]
    fn line(&self) -> u32 {
        self.line
    }

    #[getter]
    fn via<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.via.iter().map(|v| v.as_ref()))
    }

    #[getter]
    fn text(&self) -> &str {
        &self.text
    }

    #[getter]
    fn env<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.env)
    }

    #[getter]
    fn cwd(&self) -> Option<&str> {
        self.cwd.as_deref()
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let py = slf.py();
        let s = slf.get();
        repr_of(
            "Command",
            &[
                ("program", PyString::new(py, &s.program).into_any()),
                ("argv", s.argv(py)?.into_any()),
                ("redirections", s.redirections(py)?.into_any()),
                ("line", s.line.into_pyobject(py)?.into_any()),
                ("via", s.via(py)?.into_any()),
                ("text", PyString::new(py, &s.text).into_any()),
                ("env", s.env(py)?.into_any()),
                ("cwd", s.cwd.as_deref().into_pyobject(py)?.into_any()),
            ],
        )
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let s = slf.get();
        let args = (
            &s.program,
            s.argv(py)?,
            s.redirections(py)?,
            s.line,
            s.via(py)?,
            &s.text,
            s.env(py)?,
            s.cwd.as_deref(),
        );
        (slf.get_type(), args.into_pyobject(py)?).into_pyobject(py)
    }
}

/// The fields of an analysis, compared and hashed by value.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
struct AnalysisData {
    commands: Vec<ShellCommand>,
    unanalysable: Vec<ShellUnanalysable>,
    assignments: Vec<ShellAssignment>,
    redirections: Vec<ShellRedirection>,
}

impl AnalysisData {
    fn from_rust(a: &PackedAnalysis) -> Self {
        AnalysisData {
            commands: a.commands().map(ShellCommand::from_rust).collect(),
            unanalysable: a.unanalysable.iter().map(unanalysable_from_rust).collect(),
            assignments: a.assignments.iter().map(assignment_from_rust).collect(),
            redirections: a.redirections.iter().map(ShellRedirection::bare).collect(),
        }
    }
}

/// Where an `Analysis` object's fields come from.
enum Fields {
    /// The analyser's result, kept as is: fields are converted when read.
    Native(PackedAnalysis),
    /// Built from Python (the constructor).
    Built(AnalysisData),
}

/// The analysis of one command string.
///
/// Attributes:
///     commands: Every resolved command, in resolution order (a command before the
///         commands nested in it).
///     unanalysable: What could not be resolved statically; empty when fully analysed.
///     assignments: Standalone variable assignments.
///     redirections: Redirections that belong to no command (``> f`` alone, ``exec > f``).
#[pyclass(frozen, module = "helikon.shell", name = "Analysis")]
struct ShellAnalysis {
    fields: Fields,
    /// The four tuples, built on first read.
    cache: [PyOnceLock<Py<PyTuple>>; 4],
}

impl ShellAnalysis {
    fn new_from(fields: Fields) -> Self {
        ShellAnalysis {
            fields,
            cache: std::array::from_fn(|_| PyOnceLock::new()),
        }
    }

    /// The tuple in cache `slot`, built from `items` on first read.
    fn cached<'py, T, I>(
        &self,
        py: Python<'py>,
        slot: usize,
        items: impl FnOnce() -> I,
    ) -> PyResult<Bound<'py, PyTuple>>
    where
        T: for<'a> IntoPyObject<'a>,
        I: IntoIterator<Item = T>,
        I::IntoIter: ExactSizeIterator,
    {
        let Some(cell) = self.cache.get(slot) else {
            return PyTuple::new(py, items());
        };
        let t = cell.get_or_try_init(py, || PyTuple::new(py, items()).map(Bound::unbind))?;
        Ok(t.bind(py).clone())
    }

    /// The fields as comparable values (converted for a native analysis).
    fn data(&self) -> Cow<'_, AnalysisData> {
        match &self.fields {
            Fields::Native(a) => Cow::Owned(AnalysisData::from_rust(a)),
            Fields::Built(d) => Cow::Borrowed(d),
        }
    }
}

#[pymethods]
impl ShellAnalysis {
    #[new]
    #[pyo3(signature = (commands, unanalysable, assignments = Vec::new(), redirections = Vec::new()))]
    fn new(
        commands: Vec<ShellCommand>,
        unanalysable: Vec<ShellUnanalysable>,
        assignments: Vec<ShellAssignment>,
        redirections: Vec<ShellRedirection>,
    ) -> Self {
        ShellAnalysis::new_from(Fields::Built(AnalysisData {
            commands,
            unanalysable,
            assignments,
            redirections,
        }))
    }

    #[classattr]
    fn __match_args__() -> (&'static str, &'static str, &'static str, &'static str) {
        ("commands", "unanalysable", "assignments", "redirections")
    }

    #[getter]
    fn commands<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        match &self.fields {
            Fields::Native(a) => self.cached(py, 0, || a.commands().map(ShellCommand::from_rust)),
            Fields::Built(d) => self.cached(py, 0, || d.commands.iter().cloned()),
        }
    }

    #[getter]
    fn unanalysable<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        match &self.fields {
            Fields::Native(a) => {
                self.cached(py, 1, || a.unanalysable.iter().map(unanalysable_from_rust))
            }
            Fields::Built(d) => self.cached(py, 1, || d.unanalysable.iter().cloned()),
        }
    }

    #[getter]
    fn assignments<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        match &self.fields {
            Fields::Native(a) => {
                self.cached(py, 2, || a.assignments.iter().map(assignment_from_rust))
            }
            Fields::Built(d) => self.cached(py, 2, || d.assignments.iter().cloned()),
        }
    }

    #[getter]
    fn redirections<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        match &self.fields {
            Fields::Native(a) => {
                self.cached(py, 3, || a.redirections.iter().map(ShellRedirection::bare))
            }
            Fields::Built(d) => self.cached(py, 3, || d.redirections.iter().cloned()),
        }
    }

    /// The resolved program names, in resolution order.
    #[getter]
    fn programs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        match &self.fields {
            Fields::Native(a) => PyTuple::new(py, a.commands().map(|c| c.program())),
            Fields::Built(d) => PyTuple::new(py, d.commands.iter().map(|c| c.program.as_str())),
        }
    }

    /// True when everything was resolved statically.
    #[getter]
    fn analysable(&self) -> bool {
        match &self.fields {
            Fields::Native(a) => a.unanalysable.is_empty(),
            Fields::Built(d) => d.unanalysable.is_empty(),
        }
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> Py<PyAny> {
        let py = other.py();
        match other.cast::<ShellAnalysis>() {
            Ok(o) => PyBool::new(py, self.data() == o.get().data())
                .to_owned()
                .into_any()
                .unbind(),
            Err(_) => py.NotImplemented(),
        }
    }

    fn __hash__(&self) -> u64 {
        hash_of(&*self.data())
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let py = slf.py();
        let s = slf.get();
        repr_of(
            "Analysis",
            &[
                ("commands", s.commands(py)?.into_any()),
                ("unanalysable", s.unanalysable(py)?.into_any()),
                ("assignments", s.assignments(py)?.into_any()),
                ("redirections", s.redirections(py)?.into_any()),
            ],
        )
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let s = slf.get();
        let args = (
            s.commands(py)?,
            s.unanalysable(py)?,
            s.assignments(py)?,
            s.redirections(py)?,
        );
        (slf.get_type(), args.into_pyobject(py)?).into_pyobject(py)
    }
}

/// Analyse a Bash command; returns an `Analysis` (built with the GIL released). Limits left
/// out take their defaults; a bad limit raises `ConfigError`.
#[pyfunction]
#[pyo3(signature = (
    command, *, max_bytes=None, max_depth=None, max_words=None, work_factor=None, work_slack=None
))]
#[allow(clippy::too_many_arguments)]
fn shell_analyze(
    py: Python<'_>,
    command: &str,
    max_bytes: Option<usize>,
    max_depth: Option<usize>,
    max_words: Option<usize>,
    work_factor: Option<usize>,
    work_slack: Option<usize>,
) -> PyResult<ShellAnalysis> {
    let d = helikon_shell::Limits::default();
    let limits = helikon_shell::Limits {
        max_bytes: max_bytes.unwrap_or(d.max_bytes),
        max_depth: max_depth.unwrap_or(d.max_depth),
        max_words: max_words.unwrap_or(d.max_words),
        work_factor: work_factor.unwrap_or(d.work_factor),
        work_slack: work_slack.unwrap_or(d.work_slack),
    };
    limits
        .validate()
        .map_err(|m| raise(py, Class::Config, format!("shell_analyze: {m}")))?;
    Ok(ShellAnalysis::new_from(Fields::Native(py.detach(|| {
        helikon_shell::analyze_packed_with(command, &limits)
    }))))
}

/// The top-level simple commands of a Bash command as source text.
#[pyfunction]
fn shell_split(py: Python<'_>, command: &str) -> Vec<String> {
    py.detach(|| helikon_shell::split(command))
}

/// Does a gitignore-style path pattern match a path?
#[pyfunction]
fn path_rule_matches(py: Python<'_>, pattern: &str, path: &str) -> PyResult<bool> {
    helikon_shell::path_rule_matches(pattern, path).map_err(|e| from_shell(py, e))
}

/// Lexically clean a path (`..` collapsed, backslashes to `/`).
#[pyfunction]
fn clean_path(path: &str) -> String {
    helikon_shell::clean_path(path)
}

/// A compiled set of deny/allow lists and guard rules.
#[pyclass(frozen, module = "helikon._native", name = "CommandPolicy")]
struct CommandPolicy {
    inner: Policy,
    rules_json: String,
}

#[pymethods]
impl CommandPolicy {
    #[new]
    fn new(py: Python<'_>, rules_json: &str) -> PyResult<Self> {
        let inner = Policy::from_json(rules_json).map_err(|e| from_shell(py, e))?;
        Ok(CommandPolicy {
            inner,
            rules_json: rules_json.to_string(),
        })
    }

    /// Check a Bash command; returns the verdict as JSON text.
    fn check(&self, py: Python<'_>, command: &str) -> String {
        py.detach(|| self.inner.check(command).to_json())
    }

    /// Check a path written by a Write/Edit tool against the write guards.
    fn check_write(&self, py: Python<'_>, path: &str) -> String {
        py.detach(|| self.inner.check_write(path).to_json())
    }

    #[getter]
    fn rules_json(&self) -> &str {
        &self.rules_json
    }

    fn __repr__(&self) -> String {
        format!("CommandPolicy({:?})", self.rules_json)
    }
}

/// A compiled gitignore-style path rule.
#[pyclass(frozen, module = "helikon._native", name = "PathRule")]
struct PathRule {
    inner: Rule,
}

#[pymethods]
impl PathRule {
    #[new]
    fn new(py: Python<'_>, pattern: &str) -> PyResult<Self> {
        Ok(PathRule {
            inner: Rule::new(pattern).map_err(|e| from_shell(py, e))?,
        })
    }

    fn matches(&self, path: &str) -> bool {
        self.inner.matches(path)
    }

    #[getter]
    fn pattern(&self) -> &str {
        self.inner.pattern()
    }

    fn __repr__(&self) -> String {
        format!("PathRule({:?})", self.inner.pattern())
    }
}

/// Register a result class under a `Shell…` name: its Python name is the public one in
/// `helikon.shell`, but `_native` is shared with other areas.
fn add_result_class<T: pyo3::PyTypeInfo>(m: &Bound<'_, PyModule>, name: &str) -> PyResult<()> {
    let ty: Bound<'_, PyType> = m.py().get_type::<T>();
    m.add(name, ty)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(shell_analyze, m)?)?;
    m.add_function(wrap_pyfunction!(shell_split, m)?)?;
    m.add_function(wrap_pyfunction!(path_rule_matches, m)?)?;
    m.add_function(wrap_pyfunction!(clean_path, m)?)?;
    add_result_class::<ShellAnalysis>(m, "ShellAnalysis")?;
    add_result_class::<ShellCommand>(m, "ShellCommand")?;
    add_result_class::<ShellRedirection>(m, "ShellRedirection")?;
    add_result_class::<ShellUnanalysable>(m, "ShellUnanalysable")?;
    add_result_class::<ShellAssignment>(m, "ShellAssignment")?;
    m.add_class::<CommandPolicy>()?;
    m.add_class::<PathRule>()?;
    Ok(())
}
