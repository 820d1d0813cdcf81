"""Bash analysis throughput: ``helikon.shell.analyze`` against bashlex, in one run.

Run ``python benches/bench_shell.py`` (``--commands N``, default 2000; ``--rounds R``,
default 5; ``--seed S``). The corpus is generated deterministically from the seed: realistic
agent commands built from about forty templates (pipelines, redirections, ``&&``/``||``
chains, subshells and ``{ ...; }`` groups, command and process substitution, here-documents,
``for``/``while``/``until`` loops, C-style ``for ((...))``, ``[[ ]]``, ``$(( ))``, ``case``,
``time``, arrays, functions, wrappers, quoting, line continuations) with randomised
programs, paths and words. Every command is first checked with ``bash -n`` (when ``bash``
is installed): only syntactically valid Bash is timed.

Reported, per analyser:

* throughput: median over rounds of the wall time to analyse the whole corpus, as
  commands/s and MB/s; the rounds interleave the analysers so background load hits both.
  A fast analyser goes over the corpus several times per round (at least ~0.2 s of work,
  calibrated once), so one scheduler preemption does not dominate a few-millisecond timing;
* **rejects**: valid commands the analyser does not handle: bashlex raises ``ParsingError``
  or ``NotImplementedError``; helikon returns an analysis with ``unanalysable`` entries;
* **crashes**: any other exception.

helikon is timed through its public ``analyze``, which returns the native ``Analysis``; its
fields become Python objects when first read. Two diagnostics: the bare native call
(``_native.shell_analyze``, without the Python wrapper) and ``analyze`` followed by reading
every field of the result (every command's program, argv, redirections, via, text, env, and
the unanalysable parts, assignments and bare redirections), i.e. what building the full
result eagerly would cost. bashlex is timed through ``bashlex.parse``, which builds its AST
and nothing more: it resolves no wrappers, nested shells or ``find -exec``, so the
comparison favours bashlex.

Target: helikon >= 100x bashlex with no valid command rejected. Not a timed test: nothing
fails on a number (``--check`` exits 1 when a target is missed).

``--scaling`` measures hostile input instead: for each construct in :data:`HOSTILE` (find
actions, substitutions, pipelines, brace groups, here-documents, quotes, eval/xargs chains,
wrapper chains, compound nesting) the construct repeated to 1 KB, 10 KB, 100 KB, 500 KB and
1 MB, and the analysis time per KB at each size (best of ``--rounds``). Each row also says
whether the result was analysable or which limit it hit. Target: no super-linear construct,
i.e. the time per KB at 1 MB at most :data:`DOUBLING_RATIO` times the time per KB at 500 KB
(a quadratic construct doubles it). The column "max/min" shows how much the per-KB time
varies from 10 KB, and the doubling column that it stops growing.
Wall time on a loaded machine favours small inputs (a 1 ms run fits in a time slice, a 1 s
run is preempted many times), so these figures are indicative only.

``--instructions`` counts instead of timing: for each construct and size it runs the Rust
example ``rust/helikon-shell/examples/scale.rs`` under ``valgrind --tool=callgrind`` and
prints the instructions executed per KB of input (the example's text-building cost, measured
by its ``baseline`` mode, subtracted) and the peak resident memory per KB (``/usr/bin/time``).
Instruction counts are reproducible under any load. Target: per construct, instructions per
KB at every size up to 1 MB at most :data:`FLAT_RATIO` times the count at 10 KB (flat; it may
fall where a limit stops the analysis early); the 1 KB point carries fixed start-up costs and
is shown but not compared. Needs ``cargo`` and ``valgrind``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from helikon import _native
from helikon.shell import analyze

TARGET_RATIO = 100.0
DOUBLING_RATIO = 1.5
FLAT_RATIO = 1.5

HOSTILE = [
    "find . -exec ",
    "find . -execdir ",
    "find . -ok ",
    "find . -exec a ; ",
    "find . -delete ",
    "echo $(",
    "echo `",
    'echo "$(',
    "cat <(",
    "a | ",
    "a && ",
    "{ a; ",
    "( a; ",
    "if true; then ",
    "f() { a; ",
    "cat <<E\nx\nE\n",
    "bash <<E\n",
    'echo "',
    "echo '",
    "eval ",
    "eval 'eval ",
    "bash -c 'bash -c ",
    "xargs ",
    "ls | xargs ",
    "sudo env timeout 1 ",
    "watch ",
    "echo $((",
    "echo ${",
]
SIZES = [1_000, 10_000, 100_000, 500_000, 1_000_000]

PROGRAMS = ["git", "grep", "rg", "ls", "cat", "python3", "pytest", "cargo", "npm", "make"]
FILES = [
    "src/main.py",
    "README.md",
    "tests/test_api.py",
    "Cargo.toml",
    "package.json",
    "docs/My Notes.md",
    "/tmp/out.log",
    "build/app",
]
WORDS = ["TODO", "fixme", "error", "deprecated", "import os", "fn main", "async def"]
DIRS = ["src", "tests", "docs", "build", "frontend", "crates/core", "."]
BRANCHES = ["main", "feature/login", "fix-123", "release/v2"]


def _q(word: str) -> str:
    """Quote a word the way an agent would (single quotes when it has a space)."""
    return f"'{word}'" if " " in word or "$" in word else word


# Each template takes the seeded RNG and returns one command.
TEMPLATES: list[Callable[[random.Random], str]] = [
    lambda r: f"git status --short && git diff --stat {r.choice(BRANCHES)}",
    lambda r: (
        f"git log --oneline -n {r.randint(5, 50)} | grep -i {r.choice(['fix', 'feat'])} | head -5"
    ),
    lambda r: f'grep -rn "{r.choice(WORDS)}" {r.choice(DIRS)} --include="*.py" | wc -l',
    lambda r: f"ls -la {_q(r.choice(DIRS))} 2>/dev/null || true",
    lambda r: (
        f"pytest -q {r.choice(['tests/', 'tests/test_api.py'])} -x > /tmp/pytest.log 2>&1;"
        " tail -n 20 /tmp/pytest.log"
    ),
    lambda r: f"cat < {_q(r.choice(FILES))} >> /tmp/all.txt",
    lambda r: "make -j2 build &> build.log || { echo 'build failed'; tail -50 build.log; }",
    lambda r: f"cd {r.choice(DIRS)} && cargo build --release && cargo test -q",
    lambda r: f"(cd {r.choice(['frontend', 'web'])} && npm ci && npm run build)",
    lambda r: (
        f"{{ echo start; make test; echo done; }} > {r.choice(['log.txt', '/tmp/t.log'])} 2>&1"
    ),
    lambda r: 'echo "branch: $(git rev-parse --abbrev-ref HEAD)" and `date +%s`',
    lambda r: (
        f"cat <<'EOF' > config.yaml\nname: {r.choice(['demo', 'api'])}\n"
        f"replicas: {r.randint(1, 5)}\nimage: app:$TAG\nEOF"
    ),
    lambda r: f"python3 - <<EOF\nimport sys\nprint(sys.version, {r.randint(1, 99)})\nEOF",
    lambda r: "cat <<-END | sort -u\n\tb\n\ta\n\tEND",
    lambda r: f'for f in {r.choice(DIRS)}/*.py; do wc -l "$f"; done',
    lambda r: 'while IFS= read -r line; do echo "got: $line"; done < files.txt',
    lambda r: f"until curl -sf http://localhost:{r.randint(3000, 9000)}/health; do sleep 1; done",
    lambda r: f'for ((i=0; i<{r.randint(2, 9)}; i++)); do echo "run $i"; done',
    lambda r: "if [[ -f package.json && -d node_modules ]]; then npm test; else npm ci; fi",
    lambda r: f'[[ "$(uname -s)" == Linux ]] && echo linux || echo {r.choice(["mac", "other"])}',
    lambda r: f"echo $(( {r.randint(1, 9)} + {r.randint(1, 9)} * {r.randint(1, 9)} ))",
    lambda r: 'n=0; n=$((n + 1)); echo "count=$n"',
    lambda r: 'case "$1" in start) echo starting;; stop|halt) echo stopping;; *) echo usage;; esac',
    lambda r: f"time make -j{r.randint(1, 4)} all",
    lambda r: "time (sleep 0.1; echo done)",
    lambda r: (
        f'files=(a.txt b.txt "c d.txt"); for f in "${{files[@]}}"; do cat "$f"; done;'
        f" echo {r.randint(1, 9)}"
    ),
    lambda r: 'arr+=(x y); echo "${#arr[@]}" "${arr[0]}"',
    lambda r: "build() { cargo build --release; }; build && ls target/release",
    lambda r: f"find {r.choice(DIRS)} -name '*.pyc' -exec rm -f {{}} +",
    lambda r: "git ls-files '*.py' | xargs wc -l | sort -n | tail -3",
    lambda r: f"RUST_LOG=debug cargo test -p {r.choice(['core', 'cli'])} -- --nocapture",
    lambda r: "diff <(sort a.txt) <(sort b.txt) | head",
    lambda r: f"timeout {r.randint(10, 120)} pytest -x tests/ && echo ok",
    lambda r: "echo 'single $HOME' \"double $HOME\" $'tab\\there'",
    lambda r: (
        'docker run --rm \\\n  -v "$PWD:/src" \\\n  -w /src python:3.11 \\\n  python -m pytest -q'
    ),
    lambda r: 'if [ -z "$VIRTUAL_ENV" ]; then echo none; elif test -d .venv; then echo local; fi',
    lambda r: "npm run dev & sleep 2; curl -s localhost:3000 | head -c 200; kill %1",
    lambda r: "set -euo pipefail; mkdir -p build && cp -r src/* build/",
    lambda r: 'export PATH="$HOME/.local/bin:$PATH" && pip install -q -e ".[dev]"',
    lambda r: f"# check the tree\ntree -L 2 {r.choice(DIRS)} | head -40",
    lambda r: f"jq -r '.dependencies | keys[]' package.json | sort > /tmp/deps-{r.randint(1, 9)}",
    lambda r: f"tar -czf /tmp/src.tgz {r.choice(DIRS)} && ls -l /tmp/src.tgz",
    lambda r: f"sed -n '{r.randint(1, 50)},{r.randint(51, 99)}p' {_q(r.choice(FILES))}",
    lambda r: "awk -F: '{print $1}' /etc/passwd | sort | uniq -c | sort -rn | head",
    lambda r: f"{r.choice(PROGRAMS)} --version 2>&1 | head -1",
]


def corpus(seed: int, n: int) -> list[str]:
    """``n`` commands from ``seed`` (same arguments, same corpus)."""
    rng = random.Random(seed)
    return [rng.choice(TEMPLATES)(rng) for _ in range(n)]


def bash_invalid(commands: list[str]) -> list[str]:
    """Commands that ``bash -n`` rejects (each unique command is checked once)."""
    bash = shutil.which("bash")
    if bash is None:
        print("bash not found: corpus validity not checked")
        return []
    bad = []
    for cmd in sorted(set(commands)):
        proc = subprocess.run([bash, "-n", "-c", cmd], capture_output=True, check=False)
        if proc.returncode != 0:
            bad.append(cmd)
    return bad


class Outcome:
    """Rejections and crashes of one analyser over the corpus."""

    def __init__(self) -> None:
        self.rejects: list[tuple[str, str]] = []
        self.crashes: list[tuple[str, str]] = []


def _bashlex_parse() -> Callable[[str], object] | None:
    try:
        import bashlex
    except ImportError:
        print("bashlex not installed (pip install bashlex): skipped")
        return None
    parse: Callable[[str], object] = bashlex.parse
    return parse


def classify_bashlex(parse: Callable[[str], object], commands: list[str]) -> Outcome:
    import bashlex.errors

    out = Outcome()
    for cmd in commands:
        try:
            parse(cmd)
        except (bashlex.errors.ParsingError, NotImplementedError) as e:
            out.rejects.append((cmd, f"{type(e).__name__}: {e}"))
        except Exception as e:
            out.crashes.append((cmd, f"{type(e).__name__}: {e}"))
    return out


def classify_helikon(commands: list[str]) -> Outcome:
    out = Outcome()
    for cmd in commands:
        try:
            a = analyze(cmd)
        except Exception as e:
            out.crashes.append((cmd, f"{type(e).__name__}: {e}"))
            continue
        if a.unanalysable:
            out.rejects.append((cmd, "; ".join(u.reason for u in a.unanalysable)))
    return out


def analyze_every_field(cmd: str) -> object:
    """``analyze`` and read every field of the result (the cost of a full, eager result)."""
    a = analyze(cmd)
    for c in a.commands:
        _ = (c.program, c.argv, c.line, c.via, c.text, c.env)
        for r in c.redirections:
            _ = (r.op, r.target, r.fd, r.line)
    for u in a.unanalysable:
        _ = (u.reason, u.snippet, u.line)
    for x in a.assignments:
        _ = (x.name, x.value, x.line)
    for r in a.redirections:
        _ = (r.op, r.target, r.fd, r.line)
    return a


def _time_all(fn: Callable[[str], object], commands: list[str], repeat: int = 1) -> float:
    """Seconds for one pass over ``commands`` (the mean of ``repeat`` passes)."""
    start = time.perf_counter()
    for _ in range(repeat):
        for cmd in commands:
            try:
                fn(cmd)
            except Exception:
                continue
    return (time.perf_counter() - start) / repeat


def _repeats(fn: Callable[[str], object], commands: list[str], target_s: float = 0.2) -> int:
    """Passes per timing so that one timing lasts about ``target_s``."""
    one = max(_time_all(fn, commands), 1e-9)
    return max(1, min(1000, round(target_s / one)))


def scaling(rounds: int) -> bool:
    """Print time per KB of each hostile construct at each size; True when none is
    super-linear (see the module docs)."""
    print(
        "| construct | "
        + " | ".join(f"us/KB at {n // 1000} KB" for n in SIZES)
        + " | max/min from 10 KB | 1 MB / 500 KB | result at 1 MB |"
    )
    print("| --- | " + " | ".join("---:" for _ in SIZES) + " | ---: | ---: | --- |")
    linear = True
    for unit in HOSTILE:
        per_kb: list[float] = []
        outcome = ""
        for n in SIZES:
            text = (unit * (n // len(unit) + 1))[:n]
            best = float("inf")
            for _ in range(rounds if n < 500_000 else max(2, rounds // 2)):
                t = time.perf_counter()
                a = analyze(text)
                best = min(best, time.perf_counter() - t)
            per_kb.append(best * 1e6 / (n / 1000))
            outcome = "analysable" if a.analysable else a.unanalysable[0].reason[:60]
        tail = per_kb[1:]
        spread = max(tail) / max(min(tail), 1e-9)
        doubling = per_kb[-1] / max(per_kb[-2], 1e-9)
        linear &= doubling <= DOUBLING_RATIO
        cells = " | ".join(f"{v:,.1f}" for v in per_kb)
        print(f"| {unit!r} | {cells} | {spread:.1f} | {doubling:.2f} | {outcome} |")
    print(
        f"\ntarget no super-linear construct (time per KB at 1 MB <= {DOUBLING_RATIO} x at "
        f"500 KB): {'met' if linear else 'MISSED'}"
    )
    return linear


def _scale_binary() -> str | None:
    """Build the ``scale`` example (release) and return its path, or None without cargo."""
    if shutil.which("cargo") is None:
        return None
    repo = Path(__file__).resolve().parent.parent
    build = subprocess.run(
        [
            "cargo",
            "build",
            "--release",
            "-q",
            "-p",
            "helikon-shell",
            "--example",
            "scale",
            "--message-format=json",
        ],
        cwd=repo,
        capture_output=True,
        text=True,
        env=os.environ,
        check=False,
    )
    for line in build.stdout.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if (
            msg.get("reason") == "compiler-artifact"
            and msg.get("target", {}).get("name") == "scale"
        ):
            exe = msg.get("executable")
            if exe:
                return str(exe)
    print(build.stderr[-2000:])
    return None


def _callgrind_ir(binary: str, unit: str, n: int, *extra: str) -> int:
    """Instructions executed by one run of the example, counted by callgrind."""
    out = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            binary,
            unit.replace("\n", "\\n"),
            str(n),
            *extra,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    m = re.search(r"refs:\s+([\d,]+)", out.stderr)
    return int(m.group(1).replace(",", "")) if m else -1


def _peak_rss_kb(binary: str, unit: str, n: int) -> int:
    """Peak resident memory of one run, in KB (-1 without ``/usr/bin/time``)."""
    if not os.path.exists("/usr/bin/time"):
        return -1
    out = subprocess.run(
        ["/usr/bin/time", "-f", "%M", binary, unit.replace("\n", "\\n"), str(n)],
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        return int(out.stderr.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return -1


def instructions() -> bool:
    """Print instructions and peak memory per KB of each hostile construct at each size;
    True when every construct is flat from 10 KB (see the module docs)."""
    if shutil.which("valgrind") is None:
        print("--instructions needs valgrind")
        return False
    binary = _scale_binary()
    if binary is None:
        print("--instructions needs cargo (the scale example did not build)")
        return False
    print(
        "| construct | "
        + " | ".join(f"instr/KB at {n // 1000} KB" for n in SIZES)
        + " | max / at 10 KB | peak KB per input KB at 1 MB | result at 1 MB |"
    )
    print("| --- | " + " | ".join("---:" for _ in SIZES) + " | ---: | ---: | --- |")
    flat = True
    for unit in HOSTILE:
        per_kb: list[float] = []
        for n in SIZES:
            ir = _callgrind_ir(binary, unit, n) - _callgrind_ir(binary, unit, n, "baseline")
            per_kb.append(ir / (n / 1000))
        rss = _peak_rss_kb(binary, unit, SIZES[-1])
        tail = per_kb[1:]
        spread = max(tail) / max(tail[0], 1e-9)
        flat &= spread <= FLAT_RATIO
        a = analyze((unit * (SIZES[-1] // len(unit) + 1))[: SIZES[-1]])
        outcome = "analysable" if a.analysable else a.unanalysable[0].reason[:60]
        cells = " | ".join(f"{v:,.0f}" for v in per_kb)
        mem = f"{rss / (SIZES[-1] / 1000):,.0f}" if rss > 0 else "n/a"
        print(f"| {unit!r} | {cells} | {spread:.2f} | {mem} | {outcome} |")
    print(
        f"\ntarget instructions per KB flat from 10 KB to 1 MB (max <= {FLAT_RATIO} x at 10 KB): "
        f"{'met' if flat else 'MISSED'}"
    )
    return flat


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--scaling", action="store_true", help="hostile input scaling only")
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="hostile input scaling in instructions per KB (callgrind), not seconds",
    )
    parser.add_argument("--commands", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    parser.add_argument("--show", type=int, default=3, help="examples of rejects to print")
    args = parser.parse_args(argv)
    if args.instructions:
        flat = instructions()
        return 1 if (args.check and not flat) else 0
    if args.scaling:
        linear = scaling(args.rounds)
        return 1 if (args.check and not linear) else 0

    commands = corpus(args.seed, args.commands)
    total_bytes = sum(len(c.encode()) for c in commands)
    invalid = bash_invalid(commands)
    if invalid:
        print(f"{len(invalid)} generated commands are not valid Bash; fix the templates:")
        for cmd in invalid[:5]:
            print(f"  {cmd!r}")
        return 1
    distinct = len(set(commands))
    print(
        f"corpus: {len(commands)} commands ({distinct} distinct, {len(TEMPLATES)} templates), "
        f"{total_bytes / 1e3:.1f} kB, seed {args.seed}; all pass bash -n"
    )

    parse = _bashlex_parse()
    analysers: dict[str, Callable[[str], object]] = {
        "helikon analyze": analyze,
        "helikon native": _native.shell_analyze,
        "helikon analyze, every field read": analyze_every_field,
    }
    if parse is not None:
        analysers["bashlex parse"] = parse
    outcomes = {"helikon analyze": classify_helikon(commands)}
    outcomes["helikon native"] = outcomes["helikon analyze"]
    outcomes["helikon analyze, every field read"] = outcomes["helikon analyze"]
    if parse is not None:
        outcomes["bashlex parse"] = classify_bashlex(parse, commands)

    # The subset bashlex accepts: a rejected command fails early and costs bashlex less, so
    # the full-corpus ratio flatters bashlex; this one compares equal work.
    accepted = commands
    if parse is not None:
        bad = {c for c, _ in outcomes["bashlex parse"].rejects + outcomes["bashlex parse"].crashes}
        accepted = [c for c in commands if c not in bad]
    sets = {"all": commands, "bashlex-accepted": accepted}

    for fn in analysers.values():  # warm-up
        _time_all(fn, commands[:200])
    repeats = {
        (name, set_name): _repeats(fn, cmds)
        for name, fn in analysers.items()
        for set_name, cmds in sets.items()
    }
    times: dict[tuple[str, str], list[float]] = {(name, s): [] for name in analysers for s in sets}
    for _ in range(args.rounds):
        for set_name, cmds in sets.items():
            for name, fn in analysers.items():
                times[(name, set_name)].append(_time_all(fn, cmds, repeats[(name, set_name)]))
    med = {key: statistics.median(ts) for key, ts in times.items()}

    print()
    print(
        "| analyser | commands/s | MB/s | rejects | crashes | speed vs bashlex "
        "| same, on the commands bashlex accepts |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    acc_bytes = sum(len(c.encode()) for c in accepted)
    for name in analysers:
        o = outcomes[name]
        t_all, t_acc = med[(name, "all")], med[(name, "bashlex-accepted")]
        ratio = ratio_acc = "-"
        if parse is not None:
            ratio = f"{med[('bashlex parse', 'all')] / t_all:,.0f}x"
            ratio_acc = f"{med[('bashlex parse', 'bashlex-accepted')] / t_acc:,.0f}x"
        print(
            f"| {name} | {len(commands) / t_all:,.0f} | {total_bytes / t_all / 1e6:.2f} | "
            f"{len(o.rejects)} | {len(o.crashes)} | {ratio} | {ratio_acc} |"
        )
    print(
        f"\nmedian of {args.rounds} interleaved rounds; 'all' = {len(commands)} commands, "
        f"bashlex-accepted = {len(accepted)} commands ({acc_bytes / 1e3:.1f} kB)"
    )

    missed = False
    if parse is not None:
        speedup = med[("bashlex parse", "all")] / med[("helikon analyze", "all")]
        met = speedup >= TARGET_RATIO
        missed |= not met
        print(
            f"target helikon analyze >= {TARGET_RATIO:.0f}x bashlex (all commands): "
            f"{speedup:,.0f}x {'met' if met else 'MISSED'}"
        )
    h = outcomes["helikon analyze"]
    clean = not h.rejects and not h.crashes
    missed |= not clean
    print(
        f"target no valid command rejected by helikon: {len(h.rejects)} rejected, "
        f"{len(h.crashes)} crashed {'met' if clean else 'MISSED'}"
    )

    for name in ("helikon analyze", "bashlex parse"):
        found = outcomes.get(name)
        if found is None or not (found.rejects or found.crashes):
            continue
        reasons: dict[str, int] = {}
        for _, why in found.rejects + found.crashes:
            key = why.split("(position")[0].strip()[:70]
            reasons[key] = reasons.get(key, 0) + 1
        print(f"\n{name}: why commands were rejected (count, reason)")
        for why, n in sorted(reasons.items(), key=lambda kv: -kv[1])[: args.show + 5]:
            print(f"  {n:5d}  {why}")
    return 1 if (args.check and missed) else 0


if __name__ == "__main__":
    sys.exit(main())
