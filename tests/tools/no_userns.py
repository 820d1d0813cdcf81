"""Run a command where creating a user namespace fails (run as root; for the fail-closed test).

``python no_userns.py CMD...``: a child enters a new user namespace (ids 0-65535 mapped to
themselves by this parent, which as root may write such maps), sets that namespace's
``user.max_user_namespaces`` to 0, so nothing inside can create another, and runs CMD. The
host's own limit is untouched. Exit status: CMD's.
"""

from __future__ import annotations

import ctypes
import os
import sys

CLONE_NEWUSER = 0x10000000


def main(argv: list[str]) -> int:
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(ready_r)
        os.close(go_w)
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.unshare(CLONE_NEWUSER) != 0:
            os._exit(97)
        os.write(ready_w, b"x")
        os.read(go_r, 1)  # the parent has written the maps
        os.setresgid(0, 0, 0)
        os.setresuid(0, 0, 0)
        with open("/proc/sys/user/max_user_namespaces", "w") as f:
            f.write("0")
        os.execvp(argv[0], argv)
    os.close(ready_w)
    os.close(go_r)
    os.read(ready_r, 1)
    for name in ("uid_map", "gid_map"):
        with open(f"/proc/{pid}/{name}", "w") as f:
            f.write("0 0 65536\n")
    os.write(go_w, b"x")
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
