//! The child's environment: an allowlist of host variables plus fixed ones.
//!
//! Nothing from the host passes unless allowlisted. `HOME`, `TMPDIR`, `TMP` and `TEMP` point
//! at the run's private temp dir and `PWD` at the root, whatever the host has; explicit `env`
//! entries win over everything.
use std::collections::BTreeMap;
use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Default `PATH` when the host has none (or it is not allowlisted).
pub(crate) const DEFAULT_PATH: &str =
    "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

fn allowed(name: &OsStr, allowlist: &[String]) -> bool {
    let name = name.as_bytes();
    allowlist.iter().any(|pat| match pat.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix.as_bytes()),
        None => name == pat.as_bytes(),
    })
}

/// Build `KEY=VALUE` strings from `host` (usually `std::env::vars_os()`).
pub(crate) fn build_env(
    host: impl IntoIterator<Item = (OsString, OsString)>,
    allowlist: &[String],
    explicit: &BTreeMap<String, String>,
    tmp: &Path,
    root: &Path,
) -> Vec<CString> {
    let mut vars: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    for (k, v) in host {
        if allowed(&k, allowlist) {
            vars.insert(k.as_bytes().to_vec(), v.as_bytes().to_vec());
        }
    }
    vars.entry(b"PATH".to_vec())
        .or_insert_with(|| DEFAULT_PATH.as_bytes().to_vec());
    let tmp = tmp.as_os_str().as_bytes().to_vec();
    for key in ["HOME", "TMPDIR", "TMP", "TEMP"] {
        vars.insert(key.as_bytes().to_vec(), tmp.clone());
    }
    vars.insert(b"PWD".to_vec(), root.as_os_str().as_bytes().to_vec());
    for (k, v) in explicit {
        vars.insert(k.as_bytes().to_vec(), v.as_bytes().to_vec());
    }
    vars.into_iter()
        .filter_map(|(mut k, v)| {
            k.push(b'=');
            k.extend_from_slice(&v);
            CString::new(k).ok()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn os(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    #[test]
    fn only_allowlisted_host_variables_pass_and_fixed_ones_are_set() {
        let host = os(&[
            ("PATH", "/usr/bin"),
            ("LC_ALL", "C"),
            ("AWS_SECRET_ACCESS_KEY", "x"),
            ("HOME", "/root"),
            ("LD_PRELOAD", "/evil.so"),
        ]);
        let mut explicit = BTreeMap::new();
        explicit.insert("FOO".to_string(), "bar".to_string());
        let env = build_env(
            host,
            &["PATH".into(), "LC_*".into(), "HOME".into()],
            &explicit,
            Path::new("/tmp/run"),
            Path::new("/work/root"),
        );
        let env: Vec<String> = env.into_iter().map(|c| c.into_string().unwrap()).collect();
        assert_eq!(
            env,
            vec![
                "FOO=bar",
                "HOME=/tmp/run",
                "LC_ALL=C",
                "PATH=/usr/bin",
                "PWD=/work/root",
                "TEMP=/tmp/run",
                "TMP=/tmp/run",
                "TMPDIR=/tmp/run",
            ]
        );
    }

    #[test]
    fn path_defaults_when_absent() {
        let env = build_env(
            Vec::new(),
            &[],
            &BTreeMap::new(),
            Path::new("/t"),
            Path::new("/r"),
        );
        assert!(env
            .iter()
            .any(|c| c.to_str().unwrap() == format!("PATH={DEFAULT_PATH}")));
    }
}
