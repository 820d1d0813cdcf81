//! Everyday commands must work inside the OS sandbox (and in host mode).
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::fixture;
use helikon_sandbox::Mode;

fn works(mode: Mode, cmd: &str, expect: &str) {
    let f = fixture(mode);
    let out = f.run(cmd);
    assert_eq!(out.exit_code, Some(0), "{mode:?} `{cmd}`:\n{out:#?}");
    assert!(
        out.stdout.contains(expect),
        "{mode:?} `{cmd}`: expected {expect:?}\n{out:#?}"
    );
    assert!(!out.timed_out && !out.truncated);
}

macro_rules! benign {
    ($($name:ident: $cmd:expr => $expect:expr;)*) => {
        mod os_sandbox {
            $( #[test] fn $name() { super::works(helikon_sandbox::Mode::OsSandbox, $cmd, $expect) } )*
        }
        mod host_mode {
            $( #[test] fn $name() { super::works(helikon_sandbox::Mode::Host, $cmd, $expect) } )*
        }
    };
}

benign! {
    ls_long: "ls -la" => "notes.txt";
    cat_file: "cat notes.txt" => "beta";
    grep_file: "grep -n gam notes.txt" => "3:gamma";
    pipes: "cat notes.txt | sort -r | head -1 | tr a-z A-Z" => "GAMMA";
    write_and_read_back: "mkdir -p a/b && echo hi > a/b/c.txt && cat a/b/c.txt" => "hi";
    redirect_to_dev_null: "echo hidden > /dev/null && echo shown" => "shown";
    read_dev_urandom: "head -c 8 /dev/urandom | wc -c" => "8";
    pwd_is_the_root: "pwd" => "/root";
    tmpdir_is_writable: "mktemp -p \"$TMPDIR\" >/dev/null && echo tmp-ok" => "tmp-ok";
    here_doc: "cat <<EOF\nline one\nEOF" => "line one";
    bash_process_substitution: "bash -c 'wc -l < <(cat notes.txt)'" => "3";
    subshell_and_braces: "(cd a 2>/dev/null || true; { echo grouped; })" => "grouped";
    python_inline: "python3 -c 'print(6 * 7)'" => "42";
    python_threads_and_subprocess: "python3 -c 'import threading, subprocess\nt = threading.Thread(target=lambda: None); t.start(); t.join()\nprint(subprocess.run([\"echo\", \"sub\"], capture_output=True, text=True).stdout.strip())'" => "sub";
    python_socketpair: "python3 -c 'import socket\na, b = socket.socketpair(); a.send(b\"pair\"); print(b.recv(4).decode())'" => "pair";
    git_init_status_commit: "git init -q . && git add notes.txt && git -c user.name=t -c user.email=t@e commit -qm init && git status --short && git log --oneline | wc -l" => "1";
    sed_in_place: "sed -i s/beta/BETA/ notes.txt && grep BETA notes.txt" => "BETA";
    tar_roundtrip: "tar cf t.tar notes.txt && mkdir x && tar xf t.tar -C x && cat x/notes.txt" => "alpha";
    find_and_xargs: "find . -name '*.txt' | xargs wc -l" => "notes.txt";
    id_and_date: "id -u && date +%Y >/dev/null && nproc >/dev/null && echo fine" => "fine";
}
