"""Type stubs for ``helikon._native`` (the Rust core). One section per native area."""

__version__: str

# --- loop ---

from typing import Any, final

@final
class LoopConfig:
    """A parsed, checked loop configuration (compile once, use for every transition).

    ``config_json``: ``{"max_turns": 16, "tools": [{"name", "description"}],
    "handoffs": [{"tool_name", "target", "description"}],
    "output_type": null | {"name", "schema", "mode"?, "retries"?, "tool_name"?}}``, where
    ``mode`` is ``"finalize"`` (default), ``"native"`` or ``"tool"``, ``retries`` the repair
    turns (default 1) and ``tool_name`` the output tool (default ``"final_result"``; it must
    not clash with a tool). Unknown fields are rejected.

    Raises:
        helikon.errors.ConfigError: bad JSON or an invalid field (the message names it).
    """

    def __new__(cls, config_json: str) -> LoopConfig: ...
    @property
    def max_turns(self) -> int: ...
    def to_json(self) -> str: ...

def transition(
    state_json: str | None,
    input_json: str,
    config: LoopConfig,
    conversation_json: str = "[]",
) -> str:
    """Advance the loop state machine by one input; returns the outcome JSON.

    ``state_json=None`` is the initial state (CallingModel, turn 0, zero usage). The
    conversation is read only when the transition takes a handoff (for the transcript);
    pass ``"[]"`` whenever no handoff is possible.

    Raises:
        helikon.errors.ConfigError: state, input or conversation JSON does not parse
            (the message starts with ``state:``, ``input:`` or ``conversation:``).
    """

def initial_state() -> str:
    """The initial state JSON: ``{"state": "CallingModel", "turn": 0, "usage": {...}}``."""

_NativeUsage = tuple[int, int, int, int, int, int]
"""``(input, output, cached_input, reasoning, total, cache_write)`` tokens."""

_LoopStep = tuple[str, list[tuple[str, Any]], Any, str | None]
"""``(action, events, payload, appends_json)``: one transition's outcome.

``action`` is ``CallModel`` (``payload``: the request plan JSON), ``ExecuteTools``
(``payload``: per call, its position in the model response's items, or its JSON when it is
not there verbatim), ``Handoff`` (``payload``: the target's name), ``AwaitApproval``
(``payload``: the JSON of each call waiting for a decision), ``Compact`` (``payload``:
``None``) or ``Terminate``.
``events`` in order, each ``(tag, value)``: ``("turn_started", turn)``,
``("message_output" | "tool_call_item", position in the model response's items)``,
``("tool_output_item", position in the tool results)``, ``("run_completed", _NativeUsage)``,
or ``("event", event JSON)`` for anything else. ``appends_json``: items to append to the
conversation (a JSON array), or ``None``.
"""

@final
class LoopRun:
    """One run's loop state machine; the state stays native between transitions.

    ``state_json`` resumes from a state :meth:`state_json` wrote (default: the initial state).
    The typed inputs raise ``TypeError`` for a value without an exact JSON form (an int
    beyond 64 bits, a non-finite float, a non-str key, another type); :meth:`step_json`
    then takes the same input as JSON text and behaves exactly as :func:`transition`.

    Raises:
        helikon.errors.ConfigError: ``state_json`` or an input does not parse (the message
            starts with ``state:``, ``input:`` or ``conversation:``).
    """

    def __new__(cls, config: LoopConfig, state_json: str | None = None) -> LoopRun: ...
    def start(self) -> _LoopStep:
        """The ``start`` input."""
    def model_response(
        self,
        items: list[dict[str, Any]],
        usage: _NativeUsage | None,
        finish_reason: str,
        validation: list[str] | None = None,
        conversation_json: str = "[]",
    ) -> _LoopStep:
        """One model response: items in their JSON shape, the call's usage, the driver's
        validation verdict; the conversation JSON is read only when a handoff is taken."""
    def tool_results(
        self, results: list[tuple[str, bool, str | list[dict[str, Any]]]]
    ) -> _LoopStep:
        """``(call_id, is_error, payload)`` per call: the error text, or the content (one text
        part's text, or the part dicts)."""
    def step_json(self, input_json: str, conversation_json: str = "[]") -> _LoopStep:
        """Any input as JSON text, as :func:`transition` takes it (also the ``defer``,
        ``decisions``, ``compaction_started`` and ``compaction_completed`` inputs)."""
    @property
    def state(self) -> str:
        """The state's variant name."""
    @property
    def usage(self) -> _NativeUsage | None:
        """The running usage (``None`` in ``Failed``)."""
    @property
    def output_text(self) -> str | None:
        """The answer's text in ``Done``."""
    def transcript_json(self) -> str | None:
        """The handoff transcript (JSON array of items) in ``ApplyingHandoff``."""
    def state_json(self) -> str:
        """The state as JSON."""

# --- end loop ---

# --- redact ---

@final
class Redactor:
    """A compiled secret redactor (wrapped by ``helikon.redaction.Redactor``).

    ``extra_secrets_json``: JSON array of strings; ``env_json``: JSON object of string
    values (only secret-named keys become known secrets); ``mask``: replacement text.

    Raises:
        helikon.errors.ConfigError: bad JSON, a non-string item, or a mask over 256 bytes
            (the message names the field, never a value).
    """

    def __new__(cls, extra_secrets_json: str, env_json: str, mask: str) -> Redactor: ...
    @property
    def mask(self) -> str: ...
    @property
    def known_secret_count(self) -> int: ...
    def redact(self, text: str) -> str:
        """``text`` with every secret replaced by the mask; ``text`` itself (the same object)
        when nothing is found. Texts of 16 KiB and more are scanned with the GIL released."""
    def findings(self, text: str) -> str:
        """JSON ``[{"kind", "start", "end"}]``: sorted, disjoint, char (code point) offsets."""
    def redact_json(self, json_text: str) -> str:
        """Redact a JSON document; returns JSON. Raises ConfigError when it does not parse."""
    def redact_head(self, text: str, keep: int) -> str:
        """``text`` redacted, then cut to at most ``keep`` chars at a safe boundary."""
    def redact_tail(self, text: str, keep: int) -> str:
        """``text`` redacted, then cut to its last ``keep`` chars at most, from a safe boundary."""

#: Context (bytes) a capture keeps beyond each cut for the redaction of the cut.
REDACT_CUT_GUARD: int

def unusable_secret_reason(value: str) -> str | None:
    """Why the scanner ignores ``value`` as a known secret (``"shorter than 8 bytes"``,
    ``"all digits"``, ``"blank"``, ``"a common word"``), or ``None`` when it keeps it.
    The reason never quotes the value."""

# --- end redact ---

# --- schema ---

def schema_strict_dict(schema: object) -> dict[str, object] | None:
    """OpenAI strict-mode normalization of a dict, returning a new dict (the input is never
    modified). The Python objects are walked directly, without JSON text.

    Returns ``None`` when ``schema`` is not a plain JSON tree (only exact ``dict``, ``list``,
    ``str``, ``int`` within 64 bits, finite ``float``, ``bool`` and ``None``, nested at most
    100 levels): pass its JSON text to :func:`schema_strict` then.

    Raises:
        helikon.errors.SchemaError: a construct cannot be strict (the message names the field
            and the JSON pointer), or the node/depth budget is exceeded.
    """

def schema_strict_report_dict(
    schema: object,
) -> tuple[object, list[tuple[str, str, str, str]], list[tuple[str, str, str, str]]] | None:
    """:func:`schema_strict_dict` plus its report: ``(schema, lossy, non_strict)``.

    ``schema`` is a copy of the input when that is not an object (reported as non-strict).
    ``lossy`` entries are ``(path, field, kind, what)``, ``non_strict`` entries
    ``(path, field, kind, reason)``. ``None`` as for :func:`schema_strict_dict`.

    Raises:
        helikon.errors.SchemaError: the node/depth budget is exceeded.
    """

def schema_strict(schema_json: str) -> str:
    """OpenAI strict-mode normalization of a JSON Schema (text in, text out).

    Raises:
        helikon.errors.SchemaError: a construct cannot be strict (the message names the field
            and the JSON pointer), the text is not JSON, or the node/depth budget is exceeded.
    """

def schema_strict_report(schema_json: str) -> str:
    """Strict normalization plus report: ``{"schema", "lossy", "non_strict"}``.

    ``lossy`` entries are ``{"path", "field", "kind", "what"}``, ``non_strict`` entries
    ``{"path", "field", "kind", "reason"}``.

    Raises:
        helikon.errors.SchemaError: the text is not JSON or the node/depth budget is exceeded.
    """

def schema_bedrock(schema_json: str) -> str:
    """Bedrock Converse tool-input schema rewrite.

    Raises:
        helikon.errors.SchemaError: the text is not JSON or the node budget is exceeded.
    """

def schema_gemini(schema_json: str, *, for_function: bool = False) -> str:
    """Gemini schema sanitizing (``for_function=True`` for function declarations).

    Raises:
        helikon.errors.SchemaError: the text is not JSON or the node budget is exceeded.
    """

# --- end schema ---

# --- sandbox ---

@final
class RunningCommand:
    """A command started by :meth:`SandboxPolicy.start`.

    Dropped without :meth:`finish`, it kills the supervisor (the shell dies with it) and
    waits for it.
    """

    @property
    def pidfd(self) -> int | None:
        """A descriptor that turns readable when the command and every process it started
        are gone (valid until :meth:`finish`; ``None`` on kernels before 5.3)."""
    @property
    def supervisor_pid(self) -> int | None:
        """The supervisor's pid: its children are the command's processes (a cancel kills
        them and their process groups)."""
    def finish(self) -> str:
        """The outcome JSON, as :meth:`SandboxPolicy.run` returns it (waits if the command is
        not done yet). Releases the GIL.

        Raises:
            helikon.errors.ToolOther: called a second time, or the child could not be
                confined (the message names the setup step).
        """

@final
class SandboxPolicy:
    """A built execution sandbox for the Bash tool (compile once, run many).

    ``config_json`` keys (unknown keys are rejected):

    * ``root`` (str, required): absolute path of the workspace; the cwd of every command.
    * ``mode``: ``"os_sandbox"`` (default: Landlock + seccomp + rlimits, fail-closed) or
      ``"host"`` (no containment: cwd pin, env scrub, rlimits, timeout, process-tree kill,
      output cap).
    * ``allow_network`` (bool, default false): opt out of the network axis only.
    * ``unix_sockets``: ``"pairs"`` (default: socketpair only), ``"none"``, ``"connect"``.
    * ``run_as`` ([uid, gid]): required when the process runs as root in ``os_sandbox`` mode;
      capabilities and supplementary groups are dropped. The uid must be able to write
      ``root``.
    * ``env_allowlist`` (list[str], default PATH, LANG, LANGUAGE, LC_*, TERM, TZ) and ``env``
      (dict[str, str]); HOME/TMPDIR/TMP/TEMP point at a private per-call temp dir.
    * ``read_paths`` (list[str]): extra read+execute paths; ``allow_proc`` (bool).
    * ``allow_weaker`` (list of ``"signal_scope"``, ``"abstract_unix_scope"``): run on
      kernels without Landlock ABI 6, recorded in the guarantees.
    * ``limits``: ``{"cpu_seconds", "file_size_bytes", "address_space_bytes",
      "max_processes", "open_files"}`` (``null`` disables one).
    * ``output_cap_bytes`` (per stream, default 65536), ``kill_grace_ms`` (default 200),
      ``shell`` (default ``/bin/sh``).
    * ``egress`` (``{"mechanism": "auto" | "namespace" | "landlock_port", "host_port": int}``):
      the network only through helikon's egress proxy: a private network namespace per
      command whose connections reach the host's proxy over a unix socket bridge
      (:meth:`egress_bridge_fd`; from an unprivileged user namespace when this process is
      not root), or Landlock TCP connect to ``host_port`` only; TCP sockets only; the proxy
      variables are set. Excludes ``allow_network`` and ``unix_sockets="connect"``.

    Building probes the kernel and runs a self-test (``true`` must work; reading ``/``,
    an AF_INET socket and a user namespace must be refused). Releases the GIL.

    Raises:
        helikon.errors.ConfigError: invalid JSON or field.
        helikon.errors.SandboxUnavailable: the kernel lacks a required feature (the message
            names it and the Linux release that adds it), root without ``run_as``, or a
            failed self-test.
        helikon.errors.ToolOther: the root does not exist or cannot be opened.
    """

    def __new__(cls, config_json: str) -> SandboxPolicy: ...
    @property
    def root(self) -> str: ...
    @property
    def label(self) -> str:
        """``"os-sandbox (landlock+seccomp)"`` or ``"host (no containment)"``."""
    def start(
        self,
        command: str,
        timeout_s: float,
        env: dict[str, str] | None = None,
        egress_tag: int = 0,
    ) -> RunningCommand:
        """Start ``command`` as :meth:`run` does and return at once: the command runs under
        its supervisor while the caller goes on; :attr:`RunningCommand.pidfd` turns readable
        when it is done and :meth:`RunningCommand.finish` then returns the outcome JSON.
        Releases the GIL.

        Raises:
            helikon.errors.ConfigError: a bad timeout, environment variable or a NUL in the
                command.
            helikon.errors.ToolOther: the supervisor could not be started.
        """
    def run(
        self,
        command: str,
        timeout_s: float,
        env: dict[str, str] | None = None,
        egress_tag: int = 0,
    ) -> str:
        """Run ``<shell> -c command`` in the root; returns the outcome JSON.

        ``env`` sets variables for this command only, over the configured ones (a name
        that is empty or holds ``=`` or NUL, or a value holding NUL, is a ``ConfigError``).
        ``egress_tag`` (0 to 2**64-1) is sent with each connection the command makes over
        the egress bridge (see :meth:`egress_bridge_fd`).

        ``{"exit_code": int | None, "signal": int | None, "stdout": str, "stderr": str,
        "truncated": bool, "timed_out": bool, "duration_ms": int,
        "killed_reason": "timeout" | "memory" | None}``. Over the cap, each
        stream keeps its head and tail and states the cut. On timeout the process group gets
        SIGTERM, then SIGKILL; every process the command started is killed before this
        returns. Releases the GIL.

        Raises:
            helikon.errors.ConfigError: a non-positive timeout or a NUL in the command.
            helikon.errors.ToolOther: the child could not be confined (it did not run).
        """
    def guarantees(self) -> str:
        """JSON ``{"filesystem", "network", "syscalls", "label", "landlock_abi", "waived",
        "notes"}``; each axis is ``"none"``, ``"os_kernel"``, ``"virtualized"`` or
        ``"proxied"``."""
    def kernel_features(self) -> str:
        """JSON of the probed kernel features (``null`` in host mode)."""
    def egress_mechanism(self) -> str | None:
        """``"namespace"`` or ``"landlock_port"`` with ``egress``, else ``None``."""
    def egress_port(self) -> int | None:
        """The port the command reaches the egress proxy at, else ``None``."""
    def egress_bridge_fd(self) -> int | None:
        """A new descriptor, owned by the caller, for the proxy's end of the egress bridge
        (``None`` unless the mechanism is ``"namespace"``): a ``SOCK_SEQPACKET`` unix socket
        on which each connection a command makes to the listener in its network namespace
        arrives as one message: the connection's descriptor (``SCM_RIGHTS``) and the
        command's ``egress_tag`` as 8 little-endian bytes.

        Raises:
            helikon.errors.ToolOther: the descriptor could not be duplicated.
        """

@final
class ConfinedDir:
    """A directory opened as a capability for the Read/Write/Edit tools.

    Paths are relative to the root. ``..``, absolute paths, symlinks that lead outside (also
    one swapped in between a check and the use) and regular files with more than one hard
    link are refused with ``ToolDenied`` naming the path and the reason.

    Raises:
        helikon.errors.ToolOther: ``root`` does not exist or cannot be opened.
    """

    def __new__(cls, root: str) -> ConfinedDir: ...
    @property
    def root(self) -> str: ...
    def read_bytes(self, path: str, max_bytes: int = 10485760) -> bytes:
        """The bytes of a regular file.

        Raises:
            helikon.errors.ToolDenied: the path escapes the root or is hard-linked.
            helikon.errors.ToolOther: missing, not a regular file, or over ``max_bytes``.
        """
    def read_text(self, path: str, max_bytes: int = 10485760) -> str:
        """The UTF-8 text of a regular file (``ToolOther`` when it is not valid UTF-8)."""
    def write_atomic(self, path: str, data: bytes) -> None:
        """Replace or create ``path`` atomically (temp file + rename in its directory);
        missing parent directories are created inside the root; an existing file keeps its
        mode. A symlink or hard-linked target raises ``ToolDenied``."""
    def write_text(self, path: str, text: str) -> None:
        """``write_atomic`` of ``text`` encoded as UTF-8."""
    def stat(self, path: str) -> str:
        """JSON ``{"kind": "file" | "dir" | "symlink" | "other", "size", "mode", "nlink",
        "modified_ms"}``; ``""`` is the root; symlinks inside the root are followed."""
    def exists(self, path: str) -> bool:
        """Whether ``path`` exists inside the root (an escaping path raises ``ToolDenied``)."""
    def list(self, path: str = "") -> str:
        """JSON ``[{"name", "kind", "size"}]`` of a directory, sorted by name (symlinks are
        not followed)."""

def sandbox_probe() -> str:
    """JSON of the running kernel's sandbox features: ``{"landlock_abi",
    "landlock_missing", "landlock_errata", "seccomp", "arch_supported", "kernel_release"}``."""

def sandbox_capabilities() -> str:
    """JSON of what the OS sandbox can enforce here: ``{"kernel": <sandbox_probe()>,
    "os_sandbox", "os_sandbox_missing", "landlock_tcp", "landlock_truncate",
    "landlock_scoping", "user_namespaces", "cgroup_v2", "cgroup_delegated", "memory",
    "metadata"}``."""

# --- end sandbox ---

# --- shell ---

@final
class ShellRedirection:
    """One redirection (public name: :class:`helikon.shell.Redirection`).

    Attributes:
        op: ``out`` (``>``, ``>|``, ``&>``), ``append`` (``>>``, ``&>>``), ``in`` (``<``),
            ``read_write`` (``<>``), ``fd_dup`` (``2>&1``), ``heredoc`` or ``herestring``.
        target: The target after quote removal (the delimiter for a here-document).
        fd: The file descriptor written before the operator, if any (``"2"`` in ``2>f``).
        line: For a redirection that belongs to no command, its 1-based line.
    """

    __match_args__ = ("op", "target", "fd", "line")
    def __new__(
        cls, op: str, target: str, fd: str | None = None, line: int | None = None
    ) -> ShellRedirection: ...
    @property
    def op(self) -> str: ...
    @property
    def target(self) -> str: ...
    @property
    def fd(self) -> str | None: ...
    @property
    def line(self) -> int | None: ...
    @property
    def writes(self) -> bool:
        """True when the redirection writes to its target file."""
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __reduce__(
        self,
    ) -> tuple[type[ShellRedirection], tuple[str, str, str | None, int | None]]: ...

@final
class ShellCommand:
    """One resolved command (public name: :class:`helikon.shell.Command`).

    Attributes:
        program: The program name: quotes removed, basename of a path.
        argv: The arguments after quote removal; ``argv[0]`` is the program word as written.
            Expansions appear as their source text (``$HOME``).
        redirections: The command's redirections (including those of an enclosing group).
        line: Its 1-based line in the analysed text.
        via: The wrappers and nesting constructs it was reached through, outermost first
            (``"sudo"``, ``"$(...)"``, ``"bash -c"``, ``"find -exec"``, ``"function f"``).
        text: The source text of the sub-command.
        env: ``NAME=value`` assignments applying to the command.
        cwd: The directory the command acts in when an earlier ``cd``/``pushd`` in the same
            command (or its own ``git -C``/``make -C``/``tar -C``) moved it: an absolute path,
            a ``~`` path, or ``"?"`` when unknown (``cd "$X"``); ``None`` for the directory the
            command starts in.
    """

    __match_args__ = ("program", "argv", "redirections", "line", "via", "text", "env", "cwd")
    def __new__(
        cls,
        program: str,
        argv: tuple[str, ...] | list[str],
        redirections: tuple[ShellRedirection, ...] | list[ShellRedirection],
        line: int,
        via: tuple[str, ...] | list[str],
        text: str,
        env: tuple[tuple[str, str], ...] | list[tuple[str, str]],
        cwd: str | None = None,
    ) -> ShellCommand: ...
    @property
    def program(self) -> str: ...
    @property
    def argv(self) -> tuple[str, ...]: ...
    @property
    def args(self) -> tuple[str, ...]:
        """The arguments after the program word."""
    @property
    def redirections(self) -> tuple[ShellRedirection, ...]: ...
    @property
    def line(self) -> int: ...
    @property
    def via(self) -> tuple[str, ...]: ...
    @property
    def text(self) -> str: ...
    @property
    def env(self) -> tuple[tuple[str, str], ...]: ...
    @property
    def cwd(self) -> str | None: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __reduce__(self) -> tuple[type[ShellCommand], tuple[object, ...]]: ...

@final
class ShellUnanalysable:
    """A part of the command that could not be resolved statically (public name:
    :class:`helikon.shell.Unanalysable`).

    Attributes:
        reason: Why, e.g. ``"program given by an expansion"``.
        snippet: The offending text (shortened).
        line: Its 1-based line.
    """

    __match_args__ = ("reason", "snippet", "line")
    def __new__(cls, reason: str, snippet: str, line: int) -> ShellUnanalysable: ...
    @property
    def reason(self) -> str: ...
    @property
    def snippet(self) -> str: ...
    @property
    def line(self) -> int: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __reduce__(self) -> tuple[type[ShellUnanalysable], tuple[str, str, int]]: ...

@final
class ShellAssignment:
    """A variable assignment that is not a command prefix (``X=1; …``, ``export X=1``)
    (public name: :class:`helikon.shell.Assignment`)."""

    __match_args__ = ("name", "value", "line")
    def __new__(cls, name: str, value: str, line: int) -> ShellAssignment: ...
    @property
    def name(self) -> str: ...
    @property
    def value(self) -> str: ...
    @property
    def line(self) -> int: ...
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __reduce__(self) -> tuple[type[ShellAssignment], tuple[str, str, int]]: ...

@final
class ShellAnalysis:
    """The analysis of one command string (public name: :class:`helikon.shell.Analysis`).

    Built natively with the GIL released; each tuple field is created when first read.

    Attributes:
        commands: Every resolved command, in resolution order (a command before the
            commands nested in it).
        unanalysable: What could not be resolved statically; empty when fully analysed.
        assignments: Standalone variable assignments.
        redirections: Redirections that belong to no command (``> f`` alone, ``exec > f``).
    """

    __match_args__ = ("commands", "unanalysable", "assignments", "redirections")
    def __new__(
        cls,
        commands: tuple[ShellCommand, ...] | list[ShellCommand],
        unanalysable: tuple[ShellUnanalysable, ...] | list[ShellUnanalysable],
        assignments: tuple[ShellAssignment, ...] | list[ShellAssignment] = ...,
        redirections: tuple[ShellRedirection, ...] | list[ShellRedirection] = ...,
    ) -> ShellAnalysis: ...
    @property
    def commands(self) -> tuple[ShellCommand, ...]: ...
    @property
    def unanalysable(self) -> tuple[ShellUnanalysable, ...]: ...
    @property
    def assignments(self) -> tuple[ShellAssignment, ...]: ...
    @property
    def redirections(self) -> tuple[ShellRedirection, ...]: ...
    @property
    def programs(self) -> tuple[str, ...]:
        """The resolved program names, in resolution order."""
    @property
    def analysable(self) -> bool:
        """True when everything was resolved statically."""
    def __eq__(self, other: object, /) -> bool: ...
    def __hash__(self) -> int: ...
    def __reduce__(self) -> tuple[type[ShellAnalysis], tuple[object, ...]]: ...

def shell_analyze(
    command: str,
    *,
    max_bytes: int | None = None,
    max_depth: int | None = None,
    max_words: int | None = None,
    work_factor: int | None = None,
    work_slack: int | None = None,
) -> ShellAnalysis:
    """Analyse a Bash command (releases the GIL). Never raises on any input except
    ``UnicodeEncodeError`` for lone surrogates (``helikon.shell.analyze`` replaces them first).

    The limits (see :class:`helikon.shell.Limits`; ``None`` is the default) bound the work;
    past one, ``unanalysable`` names it. A limit of 0 or ``max_depth`` over 100 raises
    :class:`helikon.errors.ConfigError`.

    ``program`` is the normalised program name (quotes removed, ``/bin/rm`` -> ``rm``),
    ``argv[0]`` the program word as written; ``via`` lists the wrappers and nesting constructs
    the command was reached through (``"sudo"``, ``"$(...)"``, ``"bash -c"``, ``"find -exec"``).
    Redirection ops: ``out``, ``append``, ``in``, ``read_write``, ``fd_dup``, ``heredoc``,
    ``herestring``. Top-level ``redirections`` belong to no command (``exec > f``).
    """

def shell_split(command: str) -> list[str]:
    """The top-level simple commands of ``command`` as source text (releases the GIL)."""

def path_rule_matches(pattern: str, path: str) -> bool:
    """Gitignore-style match of a read/edit path rule (see :class:`PathRule`).

    Raises:
        helikon.errors.ConfigError: the glob does not compile.
    """

def clean_path(path: str) -> str:
    """Lexically clean a path: backslashes to ``/``, ``.`` and empty parts dropped, ``..``
    collapsed (kept when nothing can be popped)."""

@final
class CommandPolicy:
    """A compiled set of Bash deny/allow lists and guard rules (compile once, check many).

    ``rules_json`` is a JSON object; every field is optional::

        {
          "deny": ["rm", "curl"],        # programs (or wrappers such as "sudo") to deny
          "allow": ["ls", "git log *"],  # every sub-command must be covered by some pattern:
                                         #   "git" (any args), "git status" (exactly),
                                         #   "git log *" (then any args), "npm run test:*"
                                         #   (last word a prefix, then any args)
          "allow_exclusive": false,      # true: not covered by "allow" -> "deny"
                                         #   (BashTool.allow_commands); false -> "no_match"
                                         #   (AllowRule.bash_command)
          "allow_empty": false,          # a command with no program counts as allowed
                                         #   (default: same as allow_exclusive)
          "unanalysable": "ask",         # "ask" | "deny": verdict when a deny list exists and
                                         #   part of the command cannot be analysed
          "default_guards": true,        # the built-in destructive guards
          "guard_action": "ask",         # "ask" | "deny" for the built-in guards
          "limits": {"max_bytes": 4194304, "max_depth": 24, "max_words": 1048576,
                     "work_factor": 4, "work_slack": 1048576},
                                         # analysis budget (helikon.shell.Limits); past it
                                         #   the command is unanalysable
          "guards": [                    # user guards, after the built-in ones
            {"name": "no-force-push", "action": "deny", "program": "git",
             "args_contain": ["push", "--force*"], "reason": "force push"},
            {"name": "secrets", "action": "ask", "write_paths": ["secrets/**"]}
          ]
        }

    Built-in guards, in order: ``rm_recursive_root_or_home``, ``protected_path_write``,
    ``protected_dotpath_write``, ``destructive_command``. A deny on ``rm`` also matches
    ``unlink``, ``rmdir``, ``shred -u`` and ``find -delete``. Program names compare ASCII
    case-insensitively.

    Raises:
        helikon.errors.ConfigError: malformed JSON, an unknown field or value, a guard
            without exactly one of ``program`` / ``write_paths``, or a bad glob.
    """

    def __new__(cls, rules_json: str) -> CommandPolicy: ...
    @property
    def rules_json(self) -> str: ...
    def check(self, command: str) -> str:
        """Check a Bash command (releases the GIL); returns verdict JSON::

            {"verdict": "deny" | "ask" | "allow" | "no_match",
             "rule": str | None,       # "deny_list", "unanalysable", a guard name, "allow_list"
             "reason": str | None,     # e.g. "command `rm` is blocked by the deny list"
             "command": str | None,    # the deciding sub-command's source text
             "program": str | None,
             "line": int | None,       # its 1-based line in the command
             "explain": str | None,    # rule, reason, sub-command and line in one sentence
             "matches": [{"stage": "deny" | "guard" | "allow", "rule", "verdict", "reason",
                          "command", "program", "line", "explain"}],
             "allowed_by": [str]}   # allow verdicts only: the patterns that covered

        The verdict is the first ``deny`` match, else the first ``ask``, else ``allow`` when
        the allow list covers the command, else ``no_match`` (``deny`` with
        ``allow_exclusive``). ``matches`` lists every hit in pipeline order (deny list,
        unanalysable, built-in guards, user guards, allow list), so a pipeline can clear one
        approved guard and continue. An ``ask`` must become a denial when no approval
        handler is installed.
        """
    def check_write(self, path: str) -> str:
        """Check a path written by a Write/Edit tool against the write guards (same JSON)."""

@final
class PathRule:
    """A compiled gitignore-style path rule: without ``/`` it matches at any depth, with
    ``/`` it is anchored; ``*``/``?`` stay within a component, ``**`` spans components;
    case-insensitive; the path is cleaned lexically first.

    Raises:
        helikon.errors.ConfigError: the glob does not compile.
    """

    def __new__(cls, pattern: str) -> PathRule: ...
    @property
    def pattern(self) -> str: ...
    def matches(self, path: str) -> bool: ...

# --- end shell ---

# --- tokens ---

from collections.abc import Sequence  # noqa: E402 (one section per area)

def heuristic_token_chars(items: Sequence[object]) -> int:
    """``total_chars`` of the heuristic token count (``HeuristicTokenCounter`` divides by 4).

    Walks item models (by attribute) and their dict form (by key) in place: code points of
    text and reasoning parts (nested ``tool_result`` parts recursively), plus name and
    compact-JSON length of the arguments of every ``tool_call`` item and ``tool_use`` part.

    Raises:
        TypeError: ``items`` is not a sequence (``str`` and ``bytes`` are refused).
        ValueError: ``tool_result`` parts nested deeper than 256 levels, or arguments
            ``json.dumps`` rejects (a circular reference).
    """

# --- end tokens ---

# --- script ---

@final
class ScriptTool:
    """A compiled, sandboxed Rhai script tool defining ``fn run(args)`` (crate
    ``helikon-script``). Calls release the GIL and run under the limits given here (the
    crate's defaults where ``None``: 1,000,000 operations, call depth 32, 1 MiB strings,
    100,000-item arrays, 5000 ms).

    Raises:
        helikon.errors.ConfigError: the source does not compile or has no ``fn run(args)``.
    """

    def __new__(
        cls,
        source: str,
        *,
        max_operations: int | None = None,
        max_call_depth: int | None = None,
        max_string_bytes: int | None = None,
        max_array_items: int | None = None,
        timeout_ms: int | None = None,
    ) -> ScriptTool: ...
    def call(self, args_json: str) -> str:
        """``run(args)`` with ``args_json`` (JSON text); its result as JSON text.

        Raises:
            helikon.errors.ToolError: the script failed, hit a limit or reached for
                something the sandbox does not provide.
        """
    @property
    def max_operations(self) -> int: ...
    @property
    def timeout_ms(self) -> int: ...

# --- end script ---

# --- buildinfo ---

def build_info() -> str:
    """How this module was built, as JSON: ``{"version", "profile", "target"}``."""
    ...

# --- end buildinfo ---
