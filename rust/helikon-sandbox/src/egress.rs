//! Egress through helikon's proxy: the command can reach one TCP port, where the host's
//! egress proxy (Python, `helikon.tools.egress`) checks every destination against the
//! network policy, resolves names itself and connects on the command's behalf.
//!
//! Two mechanisms, chosen at build ([`EgressMechanism::Auto`] takes the first that works):
//!
//! * [`EgressMechanism::Namespace`]: the command runs in a private network namespace whose
//!   only interface is loopback; the one listener there is the proxy's (its descriptor goes
//!   to the host, see [`crate::SandboxPolicy::egress_listener`]). Nothing else is reachable:
//!   no other address exists, so direct connects, UDP (also refused by seccomp) and DNS
//!   queries have nowhere to go, and abstract unix sockets are per namespace too. Needs
//!   root (`CAP_SYS_ADMIN`) in the host process, as the OS sandbox's `run_as` setup has.
//! * [`EgressMechanism::LandlockPort`]: the command stays in the host's network namespace;
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

    use super::{EgressConfig, EgressMechanism};
    use crate::error::{Result, SandboxError};
    use crate::sys::netns::{self, NetNamespace};

    /// The mechanism in force for one policy.
    #[derive(Debug)]
    pub(crate) enum Egress {
        /// A private network namespace with the proxy's listener inside.
        Namespace(NetNamespace),
        /// Landlock allows TCP connect to this host loopback port only.
        LandlockPort(u16),
    }

    impl Egress {
        /// Set up the mechanism `cfg` asks for on this kernel and process.
        ///
        /// # Errors
        /// [`SandboxError::Unsupported`] when neither mechanism can be enforced (fail
        /// closed), naming what is missing.
        pub(crate) fn establish(cfg: &EgressConfig, abi: i32, euid: u32) -> Result<Self> {
            let namespace = || -> std::result::Result<NetNamespace, String> {
                if euid != 0 {
                    return Err(
                        "the host process is not root (entering a network namespace \
                                needs CAP_SYS_ADMIN; the launcher's child shares the host's \
                                memory, so it cannot enter a user namespace)"
                            .into(),
                    );
                }
                netns::create_as_root().map_err(|e| format!("unshare(CLONE_NEWNET): {e}"))
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
                    Ok(ns) => Ok(Self::Namespace(ns)),
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
                Self::Namespace(ns) => ns.port,
                Self::LandlockPort(port) => *port,
            }
        }

        /// The namespace the child enters, if any.
        pub(crate) fn netns(&self) -> Option<BorrowedFd<'_>> {
            match self {
                Self::Namespace(ns) => Some(ns.net.as_fd()),
                Self::LandlockPort(_) => None,
            }
        }

        /// A new descriptor for the namespace's listener (the proxy serves it).
        pub(crate) fn listener(&self) -> Option<std::io::Result<OwnedFd>> {
            match self {
                Self::Namespace(ns) => Some(ns.listener.try_clone()),
                Self::LandlockPort(_) => None,
            }
        }

        /// What is enforced, for the guarantees' notes.
        pub(crate) fn note(&self) -> String {
            match self {
                Self::Namespace(ns) => format!(
                    "network: only helikon's egress proxy (127.0.0.1:{} in a private network \
                     namespace with loopback only); names resolve through the proxy",
                    ns.port
                ),
                Self::LandlockPort(port) => format!(
                    "network: TCP connect to port {port} only (Landlock) and TCP sockets only \
                     (seccomp); Landlock matches ports, not addresses, so port {port} at other \
                     addresses is reachable too (no network namespace: the host is not root)"
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
    fn without_root_or_landlock_4_egress_fails_closed() {
        let establish = |mechanism, host_port, abi| {
            Egress::establish(
                &EgressConfig {
                    mechanism,
                    host_port,
                },
                abi,
                1000,
            )
        };
        let err = |r: Result<Egress>| r.unwrap_err().to_string();
        let e = err(establish(EgressMechanism::Namespace, Some(8080), 7));
        assert!(
            e.contains("\"namespace\" cannot be enforced: the host process is not root"),
            "{e}"
        );
        let e = err(establish(EgressMechanism::Auto, None, 7));
        assert!(
            e.contains("no egress.host_port for Landlock port rules"),
            "{e}"
        );
        let e = err(establish(EgressMechanism::Auto, Some(8080), 3));
        assert!(
            e.contains("no network namespace (the host process is not root"),
            "{e}"
        );
        assert!(
            e.contains("Landlock TCP port rules need ABI 4 (Linux 6.7); this kernel has ABI 3"),
            "{e}"
        );
        let e = err(establish(EgressMechanism::LandlockPort, Some(8080), 3));
        assert!(
            e.starts_with("unsupported") || e.contains("need ABI 4"),
            "{e}"
        );
        let ok = establish(EgressMechanism::Auto, Some(8080), 4).unwrap();
        assert_eq!(
            (ok.mechanism(), ok.port()),
            (EgressMechanism::LandlockPort, 8080)
        );
        assert!(ok.netns().is_none() && ok.listener().is_none());
        assert!(ok.note().contains("Landlock matches ports, not addresses"));
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
