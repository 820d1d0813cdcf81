//! helikon-sandbox: containment for helikon's file and shell tools.
//!
//! [`ConfinedDir`] works on every Unix (cap-std). [`SandboxPolicy`] is Linux-only: on other
//! platforms the crate still builds, and [`SandboxPolicy::build`] refuses with
//! [`SandboxError::Unsupported`] naming the platform (fail closed).
//!
//! # Use cases
//!
//! * [`ConfinedDir`]: the Read/Write/Edit tools' view of a workspace. A directory opened once
//!   as a cap-std capability; relative paths only, resolved by the kernel beneath the root.
//!   `..`, absolute paths, symlinks leading out (also one swapped in between a check and the
//!   use) and hard-linked regular files are refused with [`SandboxError::Denied`] naming the
//!   path and the reason. Reads have a size cap; writes are atomic (temp file + rename in the
//!   target's directory, parents created inside the root).
//! * [`SandboxPolicy`]: the Bash tool's execution backend. Built once from a
//!   [`SandboxConfig`]; [`SandboxPolicy::run`] runs `<shell> -c <command>` (bash by default) with the cwd pinned
//!   to the opened root, a scrubbed environment, rlimits, a timeout (SIGTERM, grace, SIGKILL),
//!   an output cap keeping head and tail, and a sweep that kills every process the command
//!   started before the call returns (also after a normal exit). Two modes:
//!   - `os_sandbox` (default): Landlock (every filesystem right of the running ABI; TCP rules
//!     on ABI 4+; signal and abstract-socket scoping on ABI 6+), a seccomp filter (socket
//!     families, namespaces, mounts, tracing, io_uring, bpf, keyrings, module/kexec loading,
//!     personality, TIOCSTI, device nodes, chown, x32 and foreign-arch calls), no_new_privs,
//!     and, when the host runs as root, a mandatory switch to `run_as` with every capability
//!     and supplementary group dropped. Guarantees: `os_kernel` on every axis (network `none`
//!     with `allow_network`), label `"os-sandbox (landlock+seccomp)"`.
//!   - `host`: no containment (label `"host (no containment)"`), same process hygiene.
//!
//!   In both modes the supervisor bounds the command's resident memory
//!   (`limits.memory_bytes`, default 2 GiB) with a watchdog over `/proc` (the private
//!   `sys::memwatch`), and [`RunOutcome::killed_reason`] says `memory` when it fired. In
//!   `os_sandbox` mode, `deny_delete` and `no_exec_in_workspace` take rights away from the
//!   root's Landlock rule (the private `workspace_rules` module). [`capabilities()`](capabilities::capabilities) reports
//!   what this machine can enforce.
//!
//! # Fail-closed
//!
//! [`SandboxPolicy::build`] probes the kernel ([`probe::probe`]), decides what it can enforce
//! ([`probe::plan`]) and refuses with [`SandboxError::Unsupported`] (naming the missing
//! feature and the Linux release that adds it) rather than run weaker; a weaker mode needs an
//! explicit `allow_weaker` entry, recorded in the guarantees. It then runs a self-test: `true`
//! must succeed, and inside a fully confined child listing `/`, creating an `AF_INET` socket
//! (when the network is denied) and `unshare(CLONE_NEWUSER)` must all be refused. A child that
//! cannot complete any confinement step never execs; the error names the step.
//!
//! # Process model and `unsafe`
//!
//! All `unsafe` lives in the private `sys` module. The calling thread creates a supervisor
//! with `clone(CLONE_VM)` and either waits for it ([`SandboxPolicy::run`]) or returns a
//! [`PendingRun`] whose pidfd an event loop watches ([`SandboxPolicy::start_tagged`]); the
//! supervisor (a
//! `PR_SET_CHILD_SUBREAPER` that never execs) creates the child the same way, `posix_spawn`
//! style, so no call copies the host's address space. Everything they use (argv, envp, the
//! Landlock ruleset, the seccomp program, rlimit values, the output buffers) is prepared
//! before `clone` in one block the calling thread keeps alive; after it only raw system calls
//! run (no libc wrapper, no `errno`), nothing allocates, locks or unwinds. The supervisor
//! enforces the deadline, reads both pipes into the bounded captures, kills the process group,
//! sweeps every descendant, drains the pipes and leaves its report in that block. The host
//! process itself is never restricted.
//!
//! # Per-call cost
//!
//! What does not depend on the command is done once: the seccomp program is compiled at
//! build into one short, binary-search-shaped filter (the private `bpf` module explains why:
//! the kernel prepares a filter on every install, at a cost that grows with its paths and its
//! length); each private temp dir
//! comes from a per-policy pool of slots with a prebuilt Landlock ruleset, reused only when it
//! is provably as fresh as a new one; the uid's task count for `RLIMIT_NPROC` is cached while
//! no counted process has exited. `HELIKON_SANDBOX_TIMING` (see [`TIMING_ENV`]) prints each
//! step's time; `benches/spawn.rs` measures a call against a plain spawn.
//!
//! # Limitations
//!
//! * Landlock does not mediate metadata calls (stat, chmod, utimes, setxattr) on outside paths;
//!   `run_as` reduces this to files the sandbox uid owns. `chown` is denied outright.
//!   `private_mounts` (the private `mount_plan` module; host as root only) closes it with a
//!   mount namespace that shows only the granted paths, and carries `read_only_paths`.
//! * The memory watchdog samples every 20 ms, so a command can overshoot the ceiling by
//!   what it touches in that time; a process that leaves the session and is not re-parented
//!   to the supervisor is not counted. No cgroup v2 `memory.max` is used yet.
//! * Files hard-linked into the root before the run are readable through their path in the
//!   root (Landlock is path-based); the child cannot create such links itself. `ConfinedDir`
//!   refuses them.
//! * `RLIMIT_NPROC` is per uid: concurrent runs under one uid share the budget; root ignores it
//!   (host mode as root). Disk fill by many small files is bounded only by time.
//! * Below Landlock ABI 9, allowing AF_UNIX `connect` (`unix_sockets = "connect"` or
//!   `allow_network`) makes pathname sockets outside the root reachable if the uid may open
//!   them. `/proc` is not granted by default (`ps` does not work).
//! * If the host process dies mid-call the supervisor and the shell die with it
//!   (`PR_SET_PDEATHSIG`), but grandchildren may be re-parented to init.
//! * [`SandboxPolicy::run`] blocks the calling thread until the supervisor is done;
//!   cancelling works from outside by killing the supervisor's children (the Python layer
//!   does this, with [`PendingRun::supervisor_pid`]), and the supervisor's own deadline
//!   always ends the wait.
//! * While a call with a uid drop is between `clone` and `execve`, the host's memory is
//!   marked non-dumpable (the kernel does this on the child's uid change, for the shared
//!   address space); the previous flag is restored when no such call is in flight.
//!
//! # Test strategy
//!
//! Tests run for real on the kernel (as root, commands as uid 65534): more than 40 escape
//! attempts (filesystem reads and writes by absolute path, `..`, symlinks, hard links,
//! `/proc/self/root`; TCP/UDP/IPv6/abstract/pathname/datagram sockets against listeners the
//! test runs on 127.0.0.1 and local sockets; ptrace, mount, unshare, clone/clone3 with
//! namespace flags, bpf, perf, keyrings, userfaultfd, io_uring, x32, TIOCSTI, personality;
//! signals to outside processes, fork bombs, detached daemons, disk fill, runaway output and
//! CPU) must fail in `os_sandbox` mode, and the safe ones are shown to succeed in `host` mode
//! so every case can detect an escape. Benign commands (ls, cat, grep, pipes, python, git,
//! `/dev/null`, tar, sed) must work in both modes. Kernel planning is tested with simulated
//! older kernels. The compact seccomp program is checked verdict for verdict against the
//! previous `seccompiler`-generated filters (a test-only oracle) with a BPF interpreter; the
//! temp-dir pool is checked to hand out a fresh directory after every kind of leftover
//! (entries, mode, xattrs, replacement); the task-count cache is checked to expire when a
//! counted process exits.
#[cfg(target_os = "linux")]
mod bpf;
pub mod capabilities;
pub mod config;
pub mod confined;
pub mod egress;
#[cfg(target_os = "linux")]
mod env;
pub mod error;
pub mod guarantees;
#[cfg(target_os = "linux")]
mod landlock_rules;
#[cfg(target_os = "linux")]
mod limits;
#[cfg(target_os = "linux")]
mod mount_plan;
#[cfg(target_os = "linux")]
mod nproc;
mod outcome;
#[cfg(target_os = "linux")]
mod output;
#[cfg(target_os = "linux")]
pub mod policy;
#[cfg(not(target_os = "linux"))]
#[path = "policy_unsupported.rs"]
pub mod policy;
pub mod probe;
#[cfg(all(test, target_os = "linux"))]
mod seccomp_reference;
#[cfg(target_os = "linux")]
mod seccomp_rules;
#[cfg(target_os = "linux")]
mod spawn;
#[cfg(target_os = "linux")]
mod sys;
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
mod timing;
#[cfg(target_os = "linux")]
mod tmpdir;
#[cfg(target_os = "linux")]
mod workspace_rules;

pub use capabilities::{capabilities, MemoryMechanism, MetadataMechanism, SandboxCapabilities};
pub use config::{Limits, Mode, SandboxConfig, UnixSockets, Weakening, DEFAULT_MEMORY_BYTES};
pub use confined::{ConfinedDir, DirEntryInfo, EntryKind, EntryStat};
pub use egress::{EgressConfig, EgressMechanism};
pub use error::{Result, SandboxError};
pub use guarantees::{Isolation, SandboxGuarantees, HOST_LABEL, OS_SANDBOX_LABEL};
pub use outcome::{KilledReason, RunOutcome};
pub use policy::{PendingRun, SandboxPolicy, MAX_TIMEOUT};
pub use probe::{Enforcement, KernelFeatures};
pub use timing::TIMING_ENV;
