#!/usr/bin/env python3
"""dralint's benchmark: every command against the parsing floor, in one run, on one corpus.

    python bench/run.py                      # generate the corpus in a temp dir, 5 interleaved reps
    python bench/run.py --corpus /tmp/c --reps 7 --json results.json
    python bench/run.py --install-peers      # yamllint + kubernetes-validate into a side venv first
    python bench/run.py --install-peers --checkov   # checkov too (large; ~10 min per run)

Every row is a whole process (interpreter startup and imports included), run as a child of this
script. Reps are interleaved (rep 1 runs A B C ..., rep 2 B C ... A, ...) so that drift on a noisy
machine hits every command alike; the ``x floor`` column is the median of per-rep ratios to the
one-process floor run in the same rep. Peak RSS is the largest process of the child's tree, from
``wait4``. The peers are slow, so they run ``--peer-reps`` times (default 1), each paired with a
floor run right after it.

Rows:
  floor 1 / floor N    read + parse with positions (bench/floor.py), 1 process / N workers: the floor
                       the performance issue defines (PyYAML's C composer and resolver, line and
                       column marks), which the ``x floor`` columns and the targets use
  stricter floor       bench/floor.py --parser compose: dralint's memoised resolver, offsets
  parse (dralint)      the same files through dralint's own loader, for reference
  check -j1 / -jN      `dralint check CORPUS` with the full default rule set, no cache
  check, warm cache    `dralint check CORPUS` with a cache dir, run twice: the second run is the row
  one file, cold/warm  `dralint check CHANGED --context CORPUS` after an edit of CHANGED, with an
                       empty cache / a cache filled by an earlier run
  migrate --dry-run    `dralint migrate CORPUS --dry-run`, when the command exists
  reference floor      the baseline's floor script (../shared/bench/floor.py), when present: the
                       floor row reimplements it, and this row shows how closely
  peers                yamllint, kubernetes-validate, checkov --framework kubernetes, when installed;
                       kubeconform and kube-linter when on PATH (each skipped row prints why)

Every row has its peak RSS (MiB) in the table and in ``--json``. The kernel counts the memory a
child had when it was forked from this script (~20 MiB) until it execs, so no row reads below that.

The targets (from the performance issue) are checked at the end; the exit code is 0 either way.
No timing assertion lives in the test suite: performance is judged here.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PY = sys.executable
#: the baseline's own floor script, beside a checkout as ../shared (absent in a user's clone)
REFERENCE_FLOOR = HERE.parent.parent / "shared" / "bench" / "floor.py"
PEERS_VENV = Path(os.environ.get("DRALINT_BENCH_PEERS", Path.home() / ".cache" / "dralint-bench" / "peers"))
CHECKOV_VENV = PEERS_VENV.with_name("checkov")


@dataclass
class Sample:
    wall: float
    cpu: float
    rss_mib: float
    code: int
    out: Path | None = None


@dataclass
class Row:
    name: str
    argv: list[str]
    cwd: Path
    setup: Callable[[int], None] | None = None
    target: str = ""
    check: Callable[[Row, float], bool | None] | None = None
    peer: bool = False
    keep_output: bool = False
    samples: list[Sample] = field(default_factory=list)
    ratios: list[float] = field(default_factory=list)

    def median(self, attr: str) -> float:
        return statistics.median(getattr(s, attr) for s in self.samples)


def run_child(argv: list[str], cwd: Path, out: Path | None, timeout: float) -> Sample:
    """Run one whole process; wall from fork to reap, CPU and peak RSS of the tree from wait4."""
    sink = open(out, "wb") if out else subprocess.DEVNULL  # noqa: SIM115 - closed below
    env = dict(os.environ, PYTHONHASHSEED="0", NO_COLOR="1")
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=sink, stderr=subprocess.DEVNULL, env=env)
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        timer.cancel()
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if out:
        sink.close()  # type: ignore[union-attr]
    return Sample(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, proc.returncode, out)


def dralint(*args: str) -> list[str]:
    return [PY, "-m", "dralint", *args]


def compile_package() -> None:
    """Byte-compile the dralint that the rows run, as pip does when it installs a wheel.

    An editable install run with PYTHONDONTWRITEBYTECODE set (as on some CI machines) would otherwise
    compile its ~100 modules from source in every row: about 0.25 s of each one-file run, which is
    not what an installed dralint costs."""
    code = "import compileall, dralint, os; compileall.compile_dir(os.path.dirname(dralint.__file__), quiet=1)"
    subprocess.run([PY, "-c", code], cwd=REPO, check=True, stdout=subprocess.DEVNULL)


def has_command(name: str) -> bool:
    r = subprocess.run(dralint(name, "--help"), capture_output=True, cwd=REPO)
    return r.returncode == 0


def findings_of(sample: Sample) -> list[tuple[str, int, int, str, str]] | None:
    if sample.out is None or not sample.out.exists():
        return None
    try:
        data = json.loads(sample.out.read_text())
    except ValueError:
        return None
    return [(f["path"], f["line"], f["column"], f["rule"], f["message"]) for f in data.get("findings", [])]


def find_peer(name: str, venvs: list[Path]) -> str | None:
    for v in venvs:
        p = v / "bin" / name
        if p.exists():
            return str(p)
    return shutil.which(name)


def install_peers(checkov: bool) -> None:
    for venv, pkgs in [(PEERS_VENV, ["yamllint", "kubernetes-validate"]), *([(CHECKOV_VENV, ["checkov"])]
                                                                          if checkov else [])]:
        if not (venv / "bin" / "python").exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", *pkgs], check=True)


def corpus_files(corpus: Path) -> list[str]:
    out = []
    for dirpath, dirnames, filenames in os.walk(corpus):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        out += [os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith((".yaml", ".yml"))]
    return out


def pick_changed_file(corpus: Path) -> Path:
    """A typical edited file: a small multi-document app bundle whose pods use DRA claims."""
    best: tuple[int, str] | None = None
    for p in corpus_files(corpus):
        text = Path(p).read_text(encoding="utf-8-sig", errors="replace")
        if "resourceClaimTemplateName" in text and "kind: Deployment" in text and 3000 < len(text) < 12000:
            cand = (abs(len(text) - 6000), p)
            best = cand if best is None or cand < best else best
    if best is None:
        return Path(corpus_files(corpus)[0])
    return Path(best[1])


def path_peers(corpus: Path, jobs: int) -> list[tuple[str, Row | None]]:
    """kubeconform and kube-linter, each as a row when its binary is on PATH (None otherwise).

    Both are Go binaries (no Python package brings them). kubeconform fetches its schemas over the
    network unless ``DRALINT_BENCH_KUBECONFORM_SCHEMAS`` names a local schema location (its
    ``-schema-location`` syntax); missing schemas are ignored, so offline it measures its parsing.
    """
    out: list[tuple[str, Row | None]] = []
    kc = shutil.which("kubeconform")
    kc_args = ["-summary", "-ignore-missing-schemas", "-kubernetes-version", "1.35.0", "-n", str(jobs)]
    if loc := os.environ.get("DRALINT_BENCH_KUBECONFORM_SCHEMAS"):
        kc_args += ["-schema-location", loc]
    out.append(("kubeconform", Row("kubeconform (schema only)", [kc, *kc_args, str(corpus)], corpus, peer=True)
                if kc else None))
    kl = shutil.which("kube-linter")
    out.append(("kube-linter", Row("kube-linter lint (default checks)", [kl, "lint", str(corpus)], corpus, peer=True)
                if kl else None))
    return out


def fmt_s(x: float) -> str:
    return f"{x:.2f}" if x < 100 else f"{x:.0f}"


def named(rows: list[Row], prefix: str) -> Row:
    return next(r for r in rows if r.name.startswith(prefix))


def print_other_floors(rows: list[Row], check1: Row, floor: Row) -> None:
    """Print ``check -j1`` against the stricter floor and the baseline's own script (when they ran),
    and how the floor row compares with that script."""
    for prefix, what in (("stricter floor", "the stricter floor (memoised resolver, offsets)"),
                         ("reference floor", "the reference floor (the baseline's own floor.py)")):
        other = next((r for r in rows if r.name.startswith(prefix) and r.samples), None)
        if other is not None:
            print(f"check -j1 against {what}: {check1.median('cpu') / other.median('cpu'):.2f}x CPU; "
                  f"the floor row took {floor.median('cpu') / other.median('cpu'):.2f}x its CPU")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", type=Path, help="corpus directory (generated there when missing)")
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--docs", type=int, default=20000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="workers for the parallel rows")
    ap.add_argument("--peer-reps", type=int, default=1)
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--checkov", action="store_true", help="include checkov (install it with --install-peers)")
    ap.add_argument("--install-peers", action="store_true", help=f"pip install the peers into {PEERS_VENV}")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--json", type=Path, help="write all samples here")
    a = ap.parse_args(argv)
    if a.install_peers:
        install_peers(a.checkov)

    work = Path(tempfile.mkdtemp(prefix="dralint-bench-"))
    corpus = a.corpus or work / "corpus"
    if not corpus.is_dir():
        sys.path.insert(0, str(HERE))
        from gen_corpus import generate

        generate(corpus, a.files, a.docs)
    size = sum(os.path.getsize(p) for p in corpus_files(corpus))
    nfiles = len(corpus_files(corpus))
    cache = corpus / ".dralint_cache"  # a cache must live in the project (or the user cache directory)
    full_cache = corpus / ".dralint_cache_full"  # the warm full check's own: the cold row empties `cache`
    changed = pick_changed_file(corpus)
    original = changed.read_bytes()

    def edit(rep: int) -> None:  # a fresh edit each time: the changed file is never a cache hit
        changed.write_bytes(original + f"# bench edit {rep} {time.perf_counter_ns()}\n".encode())

    def cold(rep: int) -> None:
        shutil.rmtree(cache, ignore_errors=True)
        edit(rep)

    warm_check = ["check", str(corpus), "--isolated", "--format", "json", "--exit-zero", "--cache-dir",
                  str(full_cache)]

    def first_run(rep: int) -> None:  # the first of the two runs; the second (measured) reads its cache
        shutil.rmtree(full_cache, ignore_errors=True)
        subprocess.run(dralint(*warm_check), cwd=corpus, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=False)

    jn = str(a.jobs)
    out = work / "out"
    out.mkdir()
    check_args = ["check", str(corpus), "--isolated", "--format", "json", "--exit-zero"]
    one_file = ["check", str(changed), "--context", str(corpus), "--isolated", "--format", "json", "--exit-zero",
                "--cache-dir", str(cache)]
    floor_row = Row("floor, 1 process", [PY, str(HERE / "floor.py"), str(corpus)], corpus)

    def cpu_ratio(r: Row) -> float:
        """CPU seconds against the floor's (the targets are CPU ratios: workers spend more CPU than wall)."""
        return r.median("cpu") / floor_row.median("cpu")

    def rss(r: Row) -> float:
        return max(x.rss_mib for x in r.samples)

    rows = [
        floor_row,
        Row(f"floor, {jn} workers", [PY, str(HERE / "floor.py"), str(corpus), "--workers", jn], corpus),
        Row("stricter floor (memoised resolver, offsets)",
            [PY, str(HERE / "floor.py"), str(corpus), "--parser", "compose"], corpus),
        Row("parse only, dralint loader", [PY, str(HERE / "floor.py"), str(corpus), "--parser", "dralint"], corpus),
        Row("check -j1 (no cache)", dralint(*check_args, "--no-cache", "--jobs", "1"), corpus,
            target="<= 1.10x floor CPU, <= 150 MiB",
            check=lambda r, ratio: cpu_ratio(r) <= 1.10 and rss(r) <= 150, keep_output=True),
        Row(f"check -j{jn} (no cache)", dralint(*check_args, "--no-cache", "--jobs", jn), corpus,
            target="<= 200 MiB", check=lambda r, ratio: rss(r) <= 200, keep_output=True),
        Row("check, warm cache (second of two runs)", dralint(*warm_check), corpus, setup=first_run,
            target="<= 0.30x floor CPU", check=lambda r, ratio: cpu_ratio(r) <= 0.30, keep_output=True),
        Row("one changed file + repo context, cold cache", dralint(*one_file), corpus, setup=cold),
        Row("one changed file + repo context, warm cache", dralint(*one_file), corpus, setup=edit,
            target="<= 0.3 s wall", check=lambda r, ratio: r.median("wall") <= 0.3),
    ]
    if has_command("migrate"):
        rows.append(Row("migrate --dry-run", dralint("migrate", str(corpus), "--isolated", "--dry-run"), corpus,
                        target="<= 3.0x floor CPU", check=lambda r, ratio: cpu_ratio(r) <= 3.0))
    if REFERENCE_FLOOR.is_file():
        # the floor script the performance baseline was measured with: the floor row's `located` parser
        # does the same work, and this row shows how closely (it also parses only .yaml/.yml files)
        rows.append(Row("reference floor (baseline's floor.py)",
                        [PY, str(REFERENCE_FLOOR), str(corpus), "--parser", "pyyaml_c_located"], corpus))
    peers: list[Row] = []
    if not a.no_peers:
        venvs = [PEERS_VENV, CHECKOV_VENV, Path(sys.executable).parent.parent]
        if yl := find_peer("yamllint", venvs):
            peers.append(Row("yamllint (YAML style only)", [yl, "-f", "parsable", str(corpus)], corpus, peer=True))
        if kv := find_peer("kubernetes-validate", venvs):
            peers.append(Row("kubernetes-validate --strict (schema only)",
                             [kv, "-k", "1.35.0", "--strict", "--quiet", *corpus_files(corpus)], corpus, peer=True))
        if a.checkov and (ck := find_peer("checkov", venvs)):
            peers.append(Row("checkov --framework kubernetes", [ck, "-d", str(corpus), "--framework", "kubernetes",
                                                                 "--quiet", "--compact", "--skip-download", "-o",
                                                                 "cli"], corpus, peer=True))
    skipped_peers: list[str] = []
    for name, row in path_peers(corpus, a.jobs):
        if a.no_peers:
            skipped_peers.append(f"{name}: --no-peers")
        elif row is None:
            skipped_peers.append(f"{name}: not on PATH")
        else:
            peers.append(row)

    compile_package()
    # fill the cache once so that the warm row measures a warm cache
    subprocess.run(dralint("check", str(corpus), "--isolated", "--exit-zero", "--format", "json",
                           "--cache-dir", str(cache)), cwd=corpus, stdout=subprocess.DEVNULL, check=False)
    print(f"corpus {corpus}: {nfiles} files, {size / 1e6:.1f} MB; changed file {changed.relative_to(corpus)}; "
          f"{a.reps} reps, {len(peers)} peers", flush=True)
    for why in skipped_peers:
        print(f"  skipped peer {why}", flush=True)

    floor = rows[0]
    warm_check_row, cold_row = named(rows, "check, warm cache"), named(rows, "one changed file + repo context, cold")
    warm_row = named(rows, "one changed file + repo context, warm")
    try:
        for rep in range(a.reps):
            order = rows[rep % len(rows):] + rows[: rep % len(rows)]
            # the warm row needs the cache the cold row deletes: refill it when the cold row ran first
            warm_first = order.index(warm_row) < order.index(cold_row)
            for row in order:
                if row is warm_row and not warm_first:
                    subprocess.run(warm_row.argv, cwd=corpus, stdout=subprocess.DEVNULL, check=False)
                if row.setup:
                    row.setup(rep)
                o = out / f"{rows.index(row)}-{rep}.json" if row.keep_output else None
                row.samples.append(run_child(row.argv, row.cwd, o, a.timeout))
            f = floor.samples[-1].wall
            for row in rows:
                row.ratios.append(row.samples[-1].wall / f)
            print(f"  rep {rep + 1}/{a.reps}: " + ", ".join(f"{r.samples[-1].wall:.2f}" for r in rows), flush=True)
        for peer in peers:
            for _ in range(a.peer_reps):
                print(f"  peer: {peer.name} ...", flush=True)
                peer.samples.append(run_child(peer.argv, peer.cwd, None, a.timeout))
                fs = run_child(floor.argv, floor.cwd, None, a.timeout)
                peer.ratios.append(peer.samples[-1].wall / fs.wall)
    finally:
        changed.write_bytes(original)

    # -- report -------------------------------------------------------------------------------
    head = ["command", "runs", "median s", "min s", "max s", "x floor", "CPU s", "x floor CPU", "peak MiB", "exit",
            "target"]
    table = []
    verdicts = []
    for row in [*rows, *peers]:
        if not row.samples:
            continue
        ratio = statistics.median(row.ratios)
        ok = row.check(row, ratio) if row.check else None
        mark = "" if ok is None else (" met" if ok else " MISSED")
        if ok is not None:
            verdicts.append((row.name, row.target, ok))
        table.append([row.name, str(len(row.samples)), fmt_s(row.median("wall")),
                      fmt_s(min(s.wall for s in row.samples)), fmt_s(max(s.wall for s in row.samples)),
                      f"{ratio:.2f}", fmt_s(row.median("cpu")), f"{row.median('cpu') / floor.median('cpu'):.2f}",
                      f"{max(s.rss_mib for s in row.samples):.0f}",
                      ",".join(sorted({str(s.code) for s in row.samples})), row.target + mark])
    widths = [max(len(r[i]) for r in [head, *table]) for i in range(len(head))]
    lines = ["| " + " | ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in table]
    print()
    print("\n".join(lines))

    dralint_rows = [r for r in rows if "dralint" in " ".join(r.argv) and r.samples]
    peak = max(max(s.rss_mib for s in r.samples) for r in dralint_rows)
    verdicts.append(("peak RSS of any dralint row", "<= 600 MiB", peak <= 600))
    check1, check_n = named(rows, "check -j1 "), named(rows, f"check -j{jn} ")
    for peer in peers:
        if peer.samples:
            verdicts.append((f"check -j1 vs {peer.name}", "faster",
                             check1.median("wall") < peer.median("wall")))
    same = [findings_of(s) for r in (check1, check_n, warm_check_row) for s in r.samples]
    identical = all(x is not None and x == same[0] for x in same)
    print()
    print_other_floors(rows, check1, floor_row)
    print(f"findings: {len(same[0] or [])} per check run; identical across -j1/-j{jn}/warm cache and reps: "
          f"{'yes' if identical else 'NO'}")
    print("targets: " + "; ".join(f"{n} {t}: {'met' if ok else 'MISSED'}" for n, t, ok in verdicts))
    print(f"reproduce: python bench/run.py --reps {a.reps}" + (" --corpus DIR" if a.corpus else ""))
    if a.json:
        a.json.write_text(json.dumps({
            "corpus": {"path": str(corpus), "files": nfiles, "bytes": size},
            "rows": [{"name": r.name, "argv": r.argv, "wall": [s.wall for s in r.samples],
                      "cpu": [s.cpu for s in r.samples], "rss_mib": [s.rss_mib for s in r.samples],
                      "ratios": r.ratios, "exit": [s.code for s in r.samples]} for r in [*rows, *peers]],
            "targets": [{"name": n, "target": t, "met": ok} for n, t, ok in verdicts],
            "identical_findings": identical,
        }, indent=2))
    shutil.rmtree(work, ignore_errors=True)  # outputs, cache, and the corpus when it was generated here
    return 0


if __name__ == "__main__":
    sys.exit(main())
