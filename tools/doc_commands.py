#!/usr/bin/env python3
"""Check that every command a user can copy from the docs works as written.

Extracts the command lines of README.md and docs/*.md: fenced code blocks marked
sh / bash / console / shell or unmarked whose program is servesim, build/servesim,
./build/servesim, servesim-kernels, build*/..., tools/..., kernels/scripts/..., .ci/...,
ctest or cmake (`\\` continuations joined, trailing `# comments` stripped), plus inline
`servesim ...` commands in backticks in prose (and in YAML comments) when they are
complete (a program, its subcommand and an argument; no `...`). Prints `file:line: command`.

With --run, runs each command in doc order (README.md first, then docs/ by name) from a
scratch mirror of the repository root (symlinks to every top-level entry, a real runs/
and build/ folder, ../shared linked), so that nothing is written into the repository:
HOME is a scratch folder (the README's `cmake --install ... ~/.local` lands there and its
bin/ is on PATH) and `/tmp/...` paths in commands are moved under the scratch folder.
Each command gets a timeout and is classified OK (ran as written) / CHECKED (ran with
a stated substitution: `--help` or `--plan` for a GPU command, a placeholder filled with a
shipped file, a synopsis without its [optional] parts, a configure into a scratch folder) /
SKIPPED with the reason (needs a GPU, a build, the network, a user's own files, or is an
expected-error example) / FAILED (exit code and last stderr lines, or the timeout). Bare
`servesim-kernels` is build/kernels/servesim-kernels when the install did not provide it.
Commands that failed (not by timeout) are retried once at the end, after every later
command ran (a doc may use the output of a command documented in another file).

  python3 tools/doc_commands.py                  # list the commands
  python3 tools/doc_commands.py --run            # run them (tens of minutes: sweeps, 1M-request benches)
  python3 tools/doc_commands.py --run --only README.md,docs/sweeps.md --timeout 300
  python3 tools/doc_commands.py --run --quick    # skip the commands marked heavy
  python3 tools/doc_commands.py --run --build /tmp/b   # the commands' build/ is another build folder
  python3 tools/doc_commands.py --yaml --run     # also run the YAML blocks: scenarios as written,
                                                 # sweeps at --repeat 1 and 200 requests, fragments
                                                 # merged over configs/scenarios/default.yaml

Maintainer tool, stdlib only; not a CI job (CI time is tight).
"""
import argparse
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHELL_LANGS = {"", "sh", "bash", "console", "shell"}
PROG_RE = re.compile(
    r"^(\./)?(build[\w.-]*/([\w.-]+/)*[\w.-]+"   # build/servesim, build-asan/fuzz/x, build/costmodel/y
    r"|servesim(-kernels)?"
    r"|tools/\S+|kernels/scripts/\S+|\.ci/\S+|ctest|cmake)$")
WRAPPERS = {"bash", "sh", "python3", "nice", "time"}
HELPERS = {"mkdir", "cp"}           # set-up lines of a block, run but not counted
SERVESIM_SUBS = {
    "run", "sweep", "plot", "compare", "report", "merge", "trace", "calibrate", "ltr",
    "stats", "gen", "fit", "validate", "fit-roofline", "list", "import", "crossval",
    "fidelity", "synth", "train"}
NO_ARG_OK = {"list"}                # subcommands complete without arguments
FLAGS = {"--runs", "--quick", "--quiet", "--explain", "--sessions", "--sort", "--skip-bad-rows",
         "--allow-missing", "--help", "--plan", "--preflight"}   # options without a value
GPU_SUBS = {"bench", "replay", "check"}
HEAVY_MARKERS = ("servesim_engine_bench --requests 1000000", "servesim_engine_bench --scale",
                 "scenario_hashes.sh --compare", "--repeat 5", "seven_policy_study", "ab_engine_bench.sh")

# Placeholders a user fills with their own files: (regex, shipped replacement or None).
PLACEHOLDERS = [
    (r"--record-batches FILE\b", "--record-batches /tmp/batches.csv"),    # an output, not the trace
    (r"-o DIR\b", "-o /tmp/dir"),
    (r"/some/dir/", None),
    (r"\bruns/a runs/b\b", "runs/default /tmp/r"),
    (r"\bruns/x/", "runs/default/"),
    (r"\bPROFILE\.csv\b", "costmodel/profiles/h100-sxm/profile.csv"),
    (r"\bSCENARIO(\.yaml)?(?=\s|$)", "configs/scenarios/default.yaml"),
    (r"\bA\.csv --against B\.csv\b",
     "costmodel/profiles/a100-80gb/vllm-0.14/profile.csv --against costmodel/profiles/a100-80gb/vidur-2024/profile.csv"),
    (r"(?<=ltr train )(TRACE|FILE)\b", "../shared/traces/azure_llm_2023/AzureLLMInferenceTrace_conv.csv"),
    (r"\bSWEEP\.yaml\b", "configs/sweeps/load_policy_comparison.yaml"),
    (r"\bbig\.yaml\b", "configs/sweeps/load_policy_comparison.yaml"),
    (r"/shared/big/", "runs/big/"),
    (r"(?<![\w/.])FILE\b", "../shared/traces/mooncake/conversation_trace.jsonl"),
    (r"rate_scale=K\b", "rate_scale=4"),
    (r"\bOLD/servesim_engine_bench\b", "build/servesim_engine_bench"),
    (r"\bOLD/servesim\b", "build/servesim"),
    (r"\bNEW/servesim\b", "build/servesim"),
    (r"costmodel/profiles/<hardware name>/vidur-mine/profile\.csv",
     "costmodel/profiles/a100-80gb/vidur-2024/profile.csv"),
    (r"<SHA>|<sha>", "$(git rev-parse HEAD)"),
    (r"path/to/", None),
    (r"\bcall\d/profile\.csv|part1\.csv|profile\.csv elementwise\.csv|\bOUT/profile\.csv", None),  # GPU calls' outputs
    (r"--phase P\b", "--phase all"),
    (r"fidelity replay\.csv", "fidelity costmodel/profiles/h100-sxm/fidelity/replay.csv"),  # the GPU line's output
]


def shown(pat):
    """A placeholder regex as a reader would write it."""
    pat = re.sub(r"\(\?<?[=!][^)]*\)", "", pat)          # lookarounds
    return pat.replace("\\b", "").replace("\\d", "N").replace("\\s", " ").replace("\\", "")


class Cmd:
    def __init__(self, path, line, text, source, helper=False):
        self.path, self.line, self.text, self.source, self.helper = path, line, text, source, helper
        self.status = self.note = self.ran = ""
        self.secs = 0.0

    def where(self):
        return f"{self.path}:{self.line}"


def strip_comment(s):
    """Drop an unquoted `# comment` (a # at the start or after whitespace)."""
    q = None
    for i, c in enumerate(s):
        if q:
            if c == q:
                q = None
        elif c in "'\"":
            q = c
        elif c == "#" and (i == 0 or s[i - 1] in " \t") and not s[i:].startswith("#!"):
            return s[:i].rstrip()
    return s.rstrip()


def program(text):
    """The program a command line runs, past env assignments and wrappers."""
    try:
        toks = shlex.split(text, comments=False)
    except ValueError:
        toks = text.split()
    i = 0
    while i < len(toks) and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", toks[i]):
        i += 1
    while i < len(toks) and toks[i] in WRAPPERS:
        i += 1
        while i < len(toks) and toks[i].startswith("-"):
            i += 1
    if i < len(toks) and toks[i] == "perf":
        rest = [t for t in toks[i + 1:] if not t.startswith("-") and t != "record"]
        return rest[0] if rest else "perf"
    return toks[i] if i < len(toks) else ""


def is_target(text):
    return bool(PROG_RE.match(program(text)))


def doc_files():
    return [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))


def extract(files):
    cmds = []
    for f in files:
        rel = os.path.relpath(f, ROOT)
        lines = open(f, encoding="utf-8").read().split("\n")
        in_block, lang, buf, buf_line = False, "", "", 0
        for n, raw in enumerate(lines, 1):
            m = re.match(r"^\s*```\s*([\w-]*)", raw)
            if m:
                if not in_block:
                    in_block, lang = True, m.group(1).lower()
                else:
                    in_block = False
                continue
            if not in_block:
                cmds.extend(inline_commands(rel, n, raw))
                continue
            if lang not in SHELL_LANGS:
                # a command in a YAML comment ("write it first: servesim ltr train ...")
                m = re.search(r"#.*?\b((?:\./)?(?:build/)?servesim \S.*)$", raw)
                if lang in ("yaml", "yml") and m:
                    cmds.extend(inline_commands(rel, n, "`" + m.group(1).strip() + "`"))
                continue
            s = raw.strip()
            if lang == "console" and s.startswith("$ "):
                s = s[2:]
            s = re.sub(r"^(call \d+|here):\s+", "", s)       # kernels.md's labelled lines
            if s.startswith("servesim: "):                    # an example error message
                cmds.append(Cmd(rel, n, s, "block"))
                continue
            s = strip_comment(s)
            if not buf and not s:
                continue
            if not buf:
                buf_line = n
            if s.endswith("\\"):
                buf += s[:-1].rstrip() + " "
                continue
            buf += s
            text, buf = buf.strip(), ""
            if not text:
                continue
            if is_target(text):
                cmds.append(Cmd(rel, buf_line, text, "block"))
            elif program(text) in HELPERS:
                cmds.append(Cmd(rel, buf_line, text, "block", helper=True))
    return cmds


def inline_commands(rel, n, raw):
    """Complete `servesim ...` / `build/...` commands in backticks in prose."""
    out = []
    for span in re.findall(r"`([^`]+)`", raw):
        s = span.strip()
        if "..." in s or s.startswith("servesim:") or not is_target(s):
            continue
        try:
            toks = shlex.split(s)
        except ValueError:
            continue
        prog = program(s)
        k = toks.index(prog) if prog in toks else 0
        rest = toks[k + 1:]
        name = os.path.basename(prog)
        if name in ("servesim", "servesim-kernels"):
            subs = []
            while rest and rest[0] in SERVESIM_SUBS | GPU_SUBS:
                subs.append(rest.pop(0))
            if not subs:
                continue
            positional, i = [], 0
            while i < len(rest):
                if rest[i].startswith("-"):
                    i += 1 if "=" in rest[i] or rest[i] in FLAGS else 2
                else:
                    positional.append(rest[i])
                    i += 1
            has_out = any(t in ("-o", "--out") and k + 1 < len(rest) for k, t in enumerate(rest))
            if not positional and subs[-1] not in NO_ARG_OK and not has_out:
                continue                 # a fragment: `servesim run --explain`
        elif name in ("cmake", "ctest"):
            if not (("-S" in rest and "-B" in rest) or "--build" in rest or "--test-dir" in rest):
                continue
        elif not rest and not re.search(r"tools/check_\w+\.sh$", prog):
            continue                     # `build/servesim`, `build-gpu/servesim-kernels`: names
        out.append(Cmd(rel, n, s, "inline"))
    return out


# ---------------------------------------------------------------- classification

def classify(c, scratch):
    """-> (command to run or None, note). None with a note = SKIPPED."""
    t = c.text
    if t.startswith("servesim: "):
        return None, "expected-output example (an error message), not a command"
    prog = program(t)
    base = os.path.basename(prog)
    notes = []
    if base == "doc_commands.py":
        return None, "this tool itself (docs/ci.md)"
    if re.search(r"(^|\s)(bash\s+)?\.ci/(test|run-default|run)\b", t):
        return None, "full install + build + test suite (CI's job; builds into ./build, owned elsewhere)"
    if base == "cmake" and re.search(r"--build\b", t):
        return None, "a build (too heavy for this shared 2-core box; CI builds it)"
    if "scenario_hashes.sh --compare build/servesim build-asan/servesim" in t:
        return None, "CI's own step (.ci/test); needs the clang ASan build build-asan/"
    if "build-asan/" in t and base != "cmake":
        alt = t.replace("./build-asan/", "build-fuzz/").replace("build-asan/", "build-fuzz/")
        if os.path.exists(os.path.join(ROOT, program(alt))):
            alt = re.sub(r"-runs=\d+", "-runs=2000", alt)
            return alt, "needs the build-asan build of the line above; checked with build-fuzz/ and -runs=2000"
        return None, "needs the build-asan build of the line above (not built here)"
    if base == "servesim-kernels" or prog == "servesim-kernels":
        sub = t.split(prog, 1)[1].split()
        sub = sub[0] if sub else ""
        kbin = shutil.which("servesim-kernels", path=os.path.join(scratch, "home/.local/bin"))
        if prog == "servesim-kernels" and not kbin:
            kbin = "build/kernels/servesim-kernels"
            notes.append("servesim-kernels not installed here; used build/kernels/servesim-kernels")
        elif prog == "servesim-kernels":
            kbin = "servesim-kernels"
        else:
            kbin = prog
        if sub in GPU_SUBS:
            return f"{kbin} {sub} --help", "needs a GPU; checked with `%s --help`" % sub + \
                ("; " + notes[0] if notes else "")
        t = t.replace(prog, kbin, 1)
    if "gpu_calibrate.sh" in t or "gpu_replay.sh" in t:
        if "gpu_calibrate.sh" in t:
            chk = re.sub(r"\[[^\]]*\]", "", t.replace("--phase P", "--phase all"))
            chk = re.sub(r"<[^>]*>", "$(git rev-parse HEAD)", chk)
            chk = re.sub(r"--phase (all|checks|bench)\|\S+", "--phase all", chk)
            chk = re.sub(r"\s+--plan\b", "", chk) + " --plan"
            return chk, "needs a GPU; checked with --plan (prints the time plan, runs nothing)"
        return None, "needs a GPU (replays batches on the device)"
    if re.search(r"\$SLURM_|\$\{SLURM_|SLURM_ARRAY", t):
        t = ("SLURM_ARRAY_TASK_COUNT=16; SLURM_CPUS_PER_TASK=2; "
             "for SLURM_ARRAY_TASK_ID in $(seq 0 15); do " + t + " || exit 1; done")
        notes.append("run as the Slurm array's 16 tasks, one after another")
    if "--shard 3/16" in t:
        t = "for k in $(seq 1 16); do " + t.replace("3/16", "$k/16").replace("shard-3", "shard-$k") + \
            " || exit 1; done"
        notes.append("run for all 16 shards (the merge below needs them)")
    # Synopsis lines: [--opt] brackets, `a|b` alternatives.
    if re.search(r"\s\[", t) or re.search(r"\s-o\s+\S+\|\S+", t):
        filled = re.sub(r"\s*\[(?:[^\[\]]|\[[^\]]*\])*\]", "", t)
        filled = re.sub(r"-o (\S+)\|\S+", r"-o \1", filled)
        notes.append("synopsis; checked without the [optional] parts")
        t = filled
    for pat, rep in PLACEHOLDERS:
        if re.search(pat, t):
            if rep is None and "call" in pat:
                return None, "merges profiles measured on a GPU (the device calls above); no GPU here"
            if rep is None:
                return None, "needs the user's own files (%s)" % shown(pat)
            t2 = re.sub(pat, rep, t)
            notes.append("placeholder %s filled with %s" % (shown(pat), rep))
            t = t2
    if re.search(r"<[^>]+>|\b(SCENARIO|PROFILE|TRACE|DIR|BATCHES)(\.\w+)?\b|\bA\.csv|\bB\.csv", t):
        return None, "synopsis with placeholders (no shipped file fits)"
    if base == "ctest" and "--test-dir" not in t:
        t += " --test-dir build"
        notes.append("run in build/ (`--test-dir build` added)")
    if base == "ctest":
        return t.replace("ctest", "ctest -N", 1), "runs the test suite (owned by CI); checked with -N (lists the tests)"
    if base == "cmake" and "-S" in t.split():
        t = re.sub(r"-B\s+(\S+)", lambda m: f"-B /tmp/cfg-{m.group(1)}-{c.line}", t)
        notes.append("configure only, into a scratch build folder")
    if "curl " in t:
        return None, "downloads from the network"
    return t, "; ".join(notes)


def scratch_tree(base, build):
    """A mirror of the repository root whose writes stay in `base`."""
    repo = os.path.join(base, "repo")
    os.makedirs(os.path.join(repo, "runs"))
    os.makedirs(os.path.join(repo, "build"))
    os.makedirs(os.path.join(base, "home"))
    os.makedirs(os.path.join(base, "tmp"))
    for e in os.listdir(ROOT):
        if e in ("runs", "build"):
            continue
        os.symlink(os.path.join(ROOT, e), os.path.join(repo, e))
    bdir = os.path.abspath(build)
    for e in os.listdir(bdir):
        os.symlink(os.path.join(bdir, e), os.path.join(repo, "build", e))
    shared = os.path.join(os.path.dirname(ROOT), "shared")
    if os.path.isdir(shared):
        os.symlink(shared, os.path.join(base, "shared"))
    return repo


def run_one(c, cmd, repo, base, timeout):
    env = dict(os.environ)
    env["HOME"] = os.path.join(base, "home")
    env["PATH"] = os.path.join(base, "home/.local/bin") + os.pathsep + env.get("PATH", "")
    env["TMPDIR"] = os.path.join(base, "tmp")
    cmd = re.sub(r"(?<![\w.])/tmp/(?!%s/)" % re.escape(os.path.basename(base)),
                 os.path.join(base, "tmp") + "/", cmd)
    cmd = cmd.replace("~/", os.path.join(base, "home") + "/")
    c.ran = cmd
    t0 = time.time()
    # stdout and stderr go to files, not pipes: `perf record` writes its data to a piped stdout.
    with tempfile.TemporaryFile("w+", dir=env["TMPDIR"], errors="replace") as out, \
         tempfile.TemporaryFile("w+", dir=env["TMPDIR"], errors="replace") as err:
        try:
            p = subprocess.run(["bash", "-c", cmd], cwd=repo, env=env, timeout=timeout,
                               stdin=subprocess.DEVNULL, stdout=out, stderr=err)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            c.secs = time.time() - t0
            return "FAILED", f"timeout after {timeout} s"
        c.secs = time.time() - t0
        if rc == 0:
            return "OK", ""
        out.seek(0)
        err.seek(0)
        text = err.read().strip() or out.read().strip()
        return "FAILED", f"exit {rc}: " + " | ".join(text.splitlines()[-3:])


SCENARIO_KEYS = {"name", "seed", "horizon_s", "model", "hardware", "attention", "cluster",
                 "kv_cache", "batching", "policy", "cost_model", "workload", "report", "slo",
                 "variance"}


def yaml_blocks(files):
    """Fenced yaml blocks: (file, first line, body, kind) with kind scenario (a model or
    cluster and a workload), sweep (base: + grid/points), fragment (scenario keys only,
    checked merged over configs/scenarios/default.yaml) or other (not a servesim file)."""
    out = []
    for f in files:
        rel = os.path.relpath(f, ROOT)
        lines = open(f, encoding="utf-8").read().split("\n")
        i = 0
        while i < len(lines):
            if re.match(r"^\s*```\s*(yaml|yml)\b", lines[i]):
                j = i + 1
                while j < len(lines) and not re.match(r"^\s*```", lines[j]):
                    j += 1
                body = "\n".join(lines[i + 1:j])
                keys = set(re.findall(r"^([a-z_]+):", body, re.M))
                if "base" in keys and keys & {"grid", "points", "zip"}:
                    kind = "sweep"
                elif "workload" in keys and keys & {"model", "cluster"} and keys <= SCENARIO_KEYS:
                    kind = "scenario"
                elif keys and keys <= SCENARIO_KEYS:
                    kind = "fragment"
                else:
                    kind = "other"
                out.append((rel, i + 2, body, kind))
                i = j
            i += 1
    return out


def alternatives(body):
    """A block listing alternatives as repeated sibling keys (ltr.md's three `local:`
    lines under one `policy:`) -> one body per alternative; else [body]."""
    lines = body.split("\n")
    seen, stack = {}, []            # stack: (indent, line index) of the open parents
    for k, ln in enumerate(lines):
        m = re.match(r"^(\s*)([a-z_]+):", ln)
        if not m:
            continue
        ind = len(m.group(1))
        while stack and stack[-1][0] >= ind:
            stack.pop()
        parent = stack[-1][1] if stack else -1
        seen.setdefault((parent, m.group(2)), []).append(k)
        stack.append((ind, k))
    reps = [ks for ks in seen.values() if len(ks) > 1]
    if not reps:
        return [body]
    ks = reps[0]
    return ["\n".join(ln for n, ln in enumerate(lines) if n not in ks or n == keep) for keep in ks]


def merged_scenario(fragment):
    """configs/scenarios/default.yaml with the fragment's top-level sections replacing its own."""
    keys = set(re.findall(r"^([a-z_]+):", fragment, re.M))
    out, skip = [], False
    for ln in open(os.path.join(ROOT, "configs/scenarios/default.yaml"), encoding="utf-8").read().split("\n"):
        m = re.match(r"^([a-z_]+):", ln)
        if m:
            skip = m.group(1) in keys
        if not skip:
            out.append(ln)
    return "\n".join(out) + "\n" + fragment + "\n"


def run_yaml(blocks, repo, base, timeout):
    stats = []
    ydir = os.path.join(base, "cfg", "docs")
    os.makedirs(ydir, exist_ok=True)
    os.symlink(os.path.join(ROOT, "configs", "scenarios"), os.path.join(base, "cfg", "scenarios"))
    for rel, ln, body, kind in blocks:
        if kind == "other":
            stats.append((rel, ln, kind, "SKIPPED", "not a servesim file"))
            print(f"{rel}:{ln}: yaml {kind}: SKIPPED (not a servesim file)", flush=True)
            continue
        for n, alt in enumerate(alternatives(body)):
            yf = os.path.join(ydir, f"{os.path.basename(rel)[:-3]}_{ln}_{n}.yaml")
            if kind == "sweep":
                open(yf, "w").write(alt + "\n")
                cmd = f"build/servesim sweep {yf} --out {base}/tmp/ysweep_{ln} --repeat 1 --jobs 2 " \
                      "--set workload.requests=200"
                how = "sweep, --repeat 1 --set workload.requests=200"
            else:
                open(yf, "w").write(alt + "\n" if kind == "scenario" else merged_scenario(alt))
                cmd = f"build/servesim run {yf} --out {base}/tmp/yrun_{ln}_{n} --quiet"
                how = "as written" if kind == "scenario" else "merged over configs/scenarios/default.yaml"
            c = Cmd(rel, ln, cmd, "yaml")
            st, msg = run_one(c, cmd, repo, base, timeout)
            stats.append((rel, ln, kind, st, msg))
            print(f"{rel}:{ln}: yaml {kind} #{n}: {st} ({c.secs:.1f} s, {how}) {msg}", flush=True)
    return stats


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--run", action="store_true", help="run the commands (default: list them)")
    ap.add_argument("--only", default="", help="comma-separated doc files (relative to the repo root)")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per command (default 600)")
    ap.add_argument("--quick", action="store_true", help="skip heavy commands (1M-request benches, 5-seed sweeps)")
    ap.add_argument("--yaml", action="store_true", help="also run the complete scenario YAML blocks")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"),
                    help="build folder the scratch build/ mirrors (default: the repository's build/)")
    a = ap.parse_args()
    files = doc_files()
    if a.only:
        want = {os.path.join(ROOT, p) for p in a.only.split(",")}
        files = [f for f in files if f in want]
    cmds = extract(files)
    counted = [c for c in cmds if not c.helper]
    if not a.run:
        for c in cmds:
            print(f"{c.where()}: {'(set-up) ' if c.helper else ''}{'(inline) ' if c.source == 'inline' else ''}{c.text}")
        print(f"# {len(counted)} commands ({sum(c.source == 'inline' for c in counted)} inline), "
              f"{len(cmds) - len(counted)} set-up lines", file=sys.stderr)
        if a.yaml:
            for rel, ln, body, kind in yaml_blocks(files):
                print(f"{rel}:{ln}: yaml block: {kind}")
        return 0
    base = tempfile.mkdtemp(prefix="doc_commands.")
    repo = scratch_tree(base, a.build)
    print(f"# scratch: {base}", flush=True)
    if not any(c.text.startswith("cmake --install") for c in cmds):
        st, msg = run_one(Cmd("README.md", 0, "", "setup"), "cmake --install build --prefix ~/.local",
                          repo, base, a.timeout)
        print(f"# set-up: README's cmake --install build --prefix ~/.local: {st} {msg}", flush=True)
    done = {}
    skipped_out = [o for c in cmds if any(h in c.text for h in HEAVY_MARKERS)
                   for o in re.findall(r"--out (\S+)", c.text)] if a.quick else []
    for c in cmds:
        cmd, note = classify(c, base)
        if cmd is not None and cmd in done and "cmake" in cmd:
            c.status, c.note = done[cmd].status, f"same as {done[cmd].where()}"
        elif cmd is None:
            c.status, c.note = "SKIPPED", note
        elif a.quick and any(h in c.text for h in HEAVY_MARKERS):
            c.status, c.note = "SKIPPED", "heavy (--quick)"
        elif a.quick and any(re.search(re.escape(o) + r"(\s|$)", cmd) for o in skipped_out):
            c.status, c.note = "SKIPPED", "reads the output of a heavy command skipped by --quick"
        else:
            st, msg = run_one(c, cmd, repo, base, a.timeout)
            c.status = st if st == "OK" else "FAILED"
            c.note = "; ".join(x for x in (note, msg) if x)
            if st == "OK" and note and ("checked" in note or "filled" in note or "synopsis" in note):
                c.status = "CHECKED"
            done[cmd] = c
        print(f"{c.where()}: {c.status} ({c.secs:.1f} s) {'(set-up) ' if c.helper else ''}{c.text}"
              + (f"\n    -> {c.note}" if c.note else ""), flush=True)
    retry = [c for c in cmds if c.status == "FAILED" and "timeout after" not in c.note]
    for c in retry:
        st, msg = run_one(c, c.ran, repo, base, a.timeout)
        if st == "OK":
            c.status, c.note = "OK", "OK on the retry after every command ran (order-dependent)"
        print(f"retry {c.where()}: {st} ({c.secs:.1f} s) {msg}", flush=True)
    ystats = run_yaml(yaml_blocks(files), repo, base, a.timeout) if a.yaml else []
    print("\n# summary")
    for s in ("OK", "CHECKED", "SKIPPED", "FAILED"):
        xs = [c for c in counted if c.status == s]
        print(f"{s:8} {len(xs)}")
        if s == "FAILED":
            for c in xs:
                print(f"  {c.where()}: {c.text}\n    {c.note}")
    print(f"total    {len(counted)} commands ({sum(c.source == 'inline' for c in counted)} inline)")
    if ystats:
        for kind in ("scenario", "sweep", "fragment", "other"):
            xs = [st for _, _, k, st, _ in ystats if k == kind]
            if xs:
                print(f"yaml {kind}: {len(xs)} checked, {xs.count('OK')} OK, {xs.count('FAILED')} failed")
    if not a.keep:
        shutil.rmtree(base, ignore_errors=True)
    return 1 if any(c.status == "FAILED" for c in counted) or \
        any(st == "FAILED" for *_, st, _ in ystats) else 0


if __name__ == "__main__":
    sys.exit(main())
