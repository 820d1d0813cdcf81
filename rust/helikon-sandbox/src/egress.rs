//! Egress through helikon's proxy: the command can reach one TCP port, where the host's
//! egress proxy (Python, `helikon.tools.egress`) checks every destination against the
//! network policy, resolves names itself and connects on the command's behalf.
//!
//! Two mechanisms, chosen at build ([`EgressMechanism::Auto`] takes the first that works):
//!
//! * [`EgressMechanism::Namespace`]: each command runs in a private network namespace of its
//!   own whose only interface is loopback and whose only socket is a listener on
//!   `127.0.0.1:`[`NAMESPACE_PORT`]. The child makes the namespace (as root directly; a host
//!   that is not root from an unprivileged user namespace the child enters first, where the
//!   kernel allows them) and passes the listener to its supervisor, which accepts the
//!   command's connections and hands each one, with the command's tag, to the proxy over a
//!   unix socket pair (the bridge, [`crate::SandboxPolicy::egress_bridge`]). Nothing else is
//!   reachable: no other address exists, so direct connects, UDP (also refused by seccomp)
//!   and DNS queries have nowhere to go, and abstract unix sockets are per namespace too.
//! * [`EgressMechanism::LandlockPort`]: where user namespaces are refused to a host that is
//!   not root (or when asked for), the command stays in the host's network namespace;
//!   Landlock (ABI 4) allows TCP `connect` to the proxy's port only and no `bind`, and
//!   seccomp allows TCP sockets only (no UDP, raw, packet or netlink sockets). The
//!   difference: Landlock matches ports, not addresses, so a listener on that same port
//!   at another address (another host, or another loopback address) is reachable too.
//!
//! In both, seccomp refuses `socket(AF_UNIX)` (only stream/seqpacket `socketpair` remain),
//! so no pathname unix socket of the host can be connected, and TCP Fast Open sends. The
//! proxy variables (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`, lowercase too) point at the
//! port, so pip, git, curl and npm use it without change.
use serde::Deserialize;

use crate::config::{Mode, SandboxConfig, UnixSockets};
use crate::error::{Result, SandboxError};

/// How the command is kept to the proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EgressMechanism {
    /// The namespace where it can be made, else Landlock port rules (needs `host_port`).
    #[default]
    Auto,
    /// A private network namespace (root only); refuse otherwise.
    Namespace,
    /// Landlock TCP connect rules for `host_port` only (Landlock ABI 4).
    LandlockPort,
}

impl EgressMechanism {
    /// The config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Namespace => "namespace",
            Self::LandlockPort => "landlock_port",
        }
    }
}

/// The `egress` table of a [`SandboxConfig`].
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EgressConfig {
    /// Which mechanism (default `auto`).
    #[serde(default)]
    pub mechanism: EgressMechanism,
    /// The loopback port where the host's proxy listens (needed by `landlock_port`, and by
    /// `auto` when the namespace cannot be made).
    #[serde(default)]
    pub host_port: Option<u16>,
}

impl EgressConfig {
    /// Check the combination with the rest of the configuration.
    ///
    /// # Errors
    /// [`SandboxError::Config`] naming the conflicting field.
    pub fn check(&self, cfg: &SandboxConfig) -> Result<()> {
        if cfg.mode != Mode::OsSandbox {
            return Err(SandboxError::Config(
                "egress needs mode os_sandbox (host mode contains nothing)".into(),
            ));
        }
        if cfg.allow_network {
            return Err(SandboxError::Config(
                "egress and allow_network exclude each other: allow_network opens every \
                 address, egress only the proxy"
                    .into(),
            ));
        }
        if cfg.unix_sockets == UnixSockets::Connect {
            return Err(SandboxError::Config(
                "egress cannot be combined with unix_sockets=\"connect\" (a unix socket \
                 connect could bypass the proxy); list sockets in the network policy"
                    .into(),
            ));
        }
        if self.host_port == Some(0) {
            return Err(SandboxError::Config(
                "egress.host_port must be 1-65535".into(),
            ));
        }
        if self.mechanism == EgressMechanism::LandlockPort && self.host_port.is_none() {
            return Err(SandboxError::Config(
                "egress.mechanism \"landlock_port\" needs egress.host_port (the proxy's port)"
                    .into(),
            ));
        }
        Ok(())
    }
}

/// The port of the listener inside each command's network namespace (any port works there:
/// the namespace is the command's own).
pub const NAMESPACE_PORT: u16 = 3128;

/// The proxy variables for a proxy at `127.0.0.1:port`.
pub(crate) fn proxy_env(port: u16) -> Vec<(String, String)> {
    let http = format!("http://127.0.0.1:{port}");
    let socks = format!("socks5h://127.0.0.1:{port}");
    let mut vars = Vec::new();
    for (name, value) in [
        ("HTTP_PROXY", &http),
        ("HTTPS_PROXY", &http),
        ("ALL_PROXY", &socks),
    ] {
        vars.push((name.to_string(), value.clone()));
        vars.push((name.to_ascii_lowercase(), value.clone()));
    }
    vars.push(("NO_PROXY".to_string(), String::new()));
    vars.push(("no_proxy".to_string(), String::new()));
    vars
}

#[cfg(target_os = "linux")]
pub(crate) use linux::Egress;

#[cfg(target_os = "linux")]
mod linux {
    use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

    use rustix::net::{socketpair, AddressFamily, SocketFlags, SocketType};

    use super::{EgressConfig, EgressMechanism, NAMESPACE_PORT};
    use crate::error::{Result, SandboxError};

    /// The host's end of the bridge from the commands' network namespaces to the proxy: a
    /// `SOCK_SEQPACKET` socket pair. Each command's supervisor accepts the connections made
    /// to the listener inside that command's namespace and passes each one, with the
    /// command's tag, over `send`; the proxy receives them on `recv`.
    #[derive(Debug)]
    pub(crate) struct Bridge {
        pub send: OwnedFd,
        pub recv: OwnedFd,
        /// The child enters a user namespace of its own first (the host is not root).
        pub userns: bool,
    }

    /// The mechanism in force for one policy.
    #[derive(Debug)]
    pub(crate) enum Egress {
        /// Each command in a private network namespace, bridged to the proxy.
        Namespace(Bridge),
        /// Landlock allows TCP connect to this host loopback port only.
        LandlockPort(u16),
    }

    impl Egress {
        /// Set up the mechanism `cfg` asks for on this kernel and process.
        ///
        /// `userns_allowed`: whether this process may create user namespaces (checked only
        /// when it is not root).
        ///
        /// # Errors
        /// [`SandboxError::Unsupported`] when neither mechanism can be enforced (fail
        /// closed), naming what is missing.
        pub(crate) fn establish(
            cfg: &EgressConfig,
            abi: i32,
            euid: u32,
            userns_allowed: bool,
        ) -> Result<Self> {
            let namespace = || -> std::result::Result<Bridge, String> {
                if euid != 0 && !userns_allowed {
                    return Err(
                        "the host process is not root and the kernel refuses unprivileged user \
                         namespaces (user.max_user_namespaces, \
                         kernel.unprivileged_userns_clone or \
                         kernel.apparmor_restrict_unprivileged_userns)"
                            .into(),
                    );
                }
                let (send, recv) = socketpair(
                    AddressFamily::UNIX,
                    SocketType::SEQPACKET,
                    SocketFlags::CLOEXEC,
                    None,
                )
                .map_err(|e| format!("socketpair for the bridge: {e}"))?;
                Ok(Bridge {
                    send,
                    recv,
                    userns: euid != 0,
                })
            };
            let landlock = |why: Option<String>| -> Result<Self> {
                let Some(port) = cfg.host_port else {
                    return Err(SandboxError::Unsupported(format!(
                        "egress through the proxy cannot be enforced: no network namespace \
                         ({}) and no egress.host_port for Landlock port rules",
                        why.unwrap_or_default()
                    )));
                };
                if abi < 4 {
                    return Err(SandboxError::Unsupported(format!(
                        "egress through the proxy cannot be enforced: {}Landlock TCP port \
                         rules need ABI 4 (Linux 6.7); this kernel has ABI {abi}",
                        why.map(|w| format!("no network namespace ({w}); "))
                            .unwrap_or_default()
                    )));
                }
                Ok(Self::LandlockPort(port))
            };
            match cfg.mechanism {
                EgressMechanism::Namespace => namespace().map(Self::Namespace).map_err(|why| {
                    SandboxError::Unsupported(format!(
                        "egress.mechanism \"namespace\" cannot be enforced: {why}"
                    ))
                }),
                EgressMechanism::LandlockPort => landlock(None),
                EgressMechanism::Auto => match namespace() {
                    Ok(b) => Ok(Self::Namespace(b)),
                    Err(why) => landlock(Some(why)),
                },
            }
        }

        /// The mechanism's config spelling.
        pub(crate) fn mechanism(&self) -> EgressMechanism {
            match self {
                Self::Namespace(_) => EgressMechanism::Namespace,
                Self::LandlockPort(_) => EgressMechanism::LandlockPort,
            }
        }

        /// The port the command connects to (inside the namespace, or on the host).
        pub(crate) fn port(&self) -> u16 {
            match self {
                Self::Namespace(_) => NAMESPACE_PORT,
                Self::LandlockPort(port) => *port,
            }
        }

        /// The bridge, when the mechanism is the namespace.
        pub(crate) fn bridge(&self) -> Option<&Bridge> {
            match self {
                Self::Namespace(b) => Some(b),
                Self::LandlockPort(_) => None,
            }
        }

        /// The supervisor's end of the bridge.
        pub(crate) fn bridge_send(&self) -> Option<BorrowedFd<'_>> {
            self.bridge().map(|b| b.send.as_fd())
        }

        /// A new descriptor for the proxy's end of the bridge.
        pub(crate) fn bridge_recv(&self) -> Option<std::io::Result<OwnedFd>> {
            self.bridge().map(|b| b.recv.try_clone())
        }

        /// What is enforced, for the guarantees' notes.
        pub(crate) fn note(&self) -> String {
            match self {
                Self::Namespace(b) => format!(
                    "network: only helikon's egress proxy (127.0.0.1:{NAMESPACE_PORT} in a \
                     private network namespace per command, loopback only, bridged to the \
                     proxy through a unix socket{}); names resolve through the proxy",
                    if b.userns {
                        "; the namespace is made from an unprivileged user namespace"
                    } else {
                        ""
                    }
                ),
                Self::LandlockPort(port) => format!(
                    "network: TCP connect to port {port} only (Landlock) and TCP sockets only \
                     (seccomp); Landlock matches ports, not addresses, so port {port} at other \
                     addresses is reachable too (no network namespace: user namespaces are \
                     refused to this non-root process, or landlock_port was asked for)"
                ),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn cfg(extra: &str) -> Result<SandboxConfig> {
        SandboxConfig::from_json(&format!(r#"{{"root": "/tmp", {extra}}}"#))
    }

    #[test]
    fn conflicting_settings_are_refused_naming_the_field() {
        for (extra, msg) in [
            (
                r#""egress": {}, "allow_network": true"#,
                "egress and allow_network exclude each other",
            ),
            (
                r#""egress": {}, "mode": "host""#,
                "egress needs mode os_sandbox",
            ),
            (
                r#""egress": {}, "unix_sockets": "connect""#,
                "unix_sockets=\"connect\"",
            ),
            (
                r#""egress": {"mechanism": "landlock_port"}"#,
                "needs egress.host_port",
            ),
            (
                r#""egress": {"host_port": 0}"#,
                "egress.host_port must be 1-65535",
            ),
            (
                r#""egress": {"mechanism": "bridge"}"#,
                "unknown variant `bridge`",
            ),
            (r#""egress": {"port": 3}"#, "unknown field `port`"),
        ] {
            let err = cfg(extra).unwrap_err().to_string();
            assert!(err.contains(msg), "{extra}: {err}");
        }
        let ok = cfg(r#""egress": {"mechanism": "landlock_port", "host_port": 8080}"#).unwrap();
        assert_eq!(
            ok.egress,
            Some(EgressConfig {
                mechanism: EgressMechanism::LandlockPort,
                host_port: Some(8080)
            })
        );
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn without_user_namespaces_or_landlock_4_egress_fails_closed() {
        let establish = |mechanism, host_port, abi, userns| {
            Egress::establish(
                &EgressConfig {
                    mechanism,
                    host_port,
                },
                abi,
                1000,
                userns,
            )
        };
        let err = |r: Result<Egress>| r.unwrap_err().to_string();
        let e = err(establish(EgressMechanism::Namespace, Some(8080), 7, false));
        assert!(
            e.contains(
                "\"namespace\" cannot be enforced: the host process is not root and the \
                 kernel refuses unprivileged user namespaces"
            ),
            "{e}"
        );
        let e = err(establish(EgressMechanism::Auto, None, 7, false));
        assert!(
            e.contains("no egress.host_port for Landlock port rules"),
            "{e}"
        );
        let e = err(establish(EgressMechanism::Auto, Some(8080), 3, false));
        assert!(
            e.contains("no network namespace (the host process is not root"),
            "{e}"
        );
        assert!(
            e.contains("Landlock TCP port rules need ABI 4 (Linux 6.7); this kernel has ABI 3"),
            "{e}"
        );
        let e = err(establish(
            EgressMechanism::LandlockPort,
            Some(8080),
            3,
            true,
        ));
        assert!(e.contains("need ABI 4"), "{e}");
        let ok = establish(EgressMechanism::Auto, Some(8080), 4, false).unwrap();
        assert_eq!(
            (ok.mechanism(), ok.port()),
            (EgressMechanism::LandlockPort, 8080)
        );
        assert!(ok.bridge().is_none() && ok.bridge_recv().is_none());
        assert!(ok.note().contains("Landlock matches ports, not addresses"));
        // Not root, user namespaces allowed: the per-command namespace, from a user
        // namespace; the host port is not used.
        let ns = establish(EgressMechanism::Auto, Some(8080), 4, true).unwrap();
        assert_eq!(
            (ns.mechanism(), ns.port()),
            (EgressMechanism::Namespace, NAMESPACE_PORT)
        );
        assert!(ns.bridge().is_some_and(|b| b.userns));
        assert!(ns.bridge_recv().is_some_and(|fd| fd.is_ok()));
        assert!(ns
            .note()
            .contains("made from an unprivileged user namespace"));
        let ns = establish(EgressMechanism::Namespace, None, 2, true).unwrap();
        assert_eq!(ns.mechanism(), EgressMechanism::Namespace);
    }

    #[test]
    fn proxy_variables_cover_both_spellings() {
        let env = proxy_env(4711);
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("HTTP_PROXY"), Some("http://127.0.0.1:4711"));
        assert_eq!(get("https_proxy"), Some("http://127.0.0.1:4711"));
        assert_eq!(get("ALL_PROXY"), Some("socks5h://127.0.0.1:4711"));
        assert_eq!(get("all_proxy"), Some("socks5h://127.0.0.1:4711"));
        assert_eq!(get("NO_PROXY"), Some(""));
        assert_eq!(env.len(), 8);
    }
}
