"""Mutation testing per package, with mutmut's mutation operators and the tests that cover each package.

    .venv/bin/pip install 'mutmut==2.5.1' coverage
    DRALINT_SHARED=/work/shared nice -n 15 .venv/bin/python bench/mutation.py --package fix --every 88
    .venv/bin/python bench/mutation.py --package fix --mutant 440 --tests tests/test_mutants_fix.py  # check a new test

Not part of CI: a full run takes hours on a small machine. mutmut 2.x is used as a library (its
`list_mutations` / `mutate`), because its own runner mutates one tree for every package with one
test command; here each package gets the tests that cover it (`PACKAGES`), and the run can be
sampled deterministically: ``--every K`` takes mutant 0, K, 2K, … of the package's mutants in file
order (``--offset`` shifts the start), so two runs with the same options test the same mutants.

Mutants are applied to a copy of the repository in a temporary directory (never to the working
tree). One coverage run with a context per test maps each line to the tests that execute it, and a
mutant runs only those (``--no-coverage``: the whole list); a line no test executes is reported
*uncovered* (a survivor, without a run). A mutant is *killed* when its tests fail or time out (3x
the unmutated run, at least 20 s), *survived* otherwise. Survivors are printed with their diff;
review them: kill each with a test, or list it in bench/mutation-equivalent.md with the reason it
cannot change behaviour.
"""

from __future__ import annotations

import argparse
import difflib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

#: package -> (files to mutate, relative to the repository; tests that cover them)
PACKAGES: dict[str, tuple[list[str], list[str]]] = {
    "engine": (["dralint/engine"], ["tests/test_engine.py", "tests/test_cache.py", "tests/test_render.py",
                                    "tests/test_survivors.py", "tests/test_rule_examples.py",
                                    "tests/test_mutants_engine.py"]),
    "fix": (["dralint/fix"], ["tests/test_fixer.py", "tests/test_fix_gates.py", "tests/test_fix_examples.py",
                              "tests/test_json_files.py", "tests/test_mutants_fix.py"]),
    "checks": (["dralint/checks"], ["tests/test_rule_examples.py", "tests/test_conformance.py",
                                    "tests/test_driver_rules.py", "tests/test_rollout.py", "tests/test_metadata.py",
                                    "tests/test_admission.py", "tests/test_dra307_refusals.py",
                                    "tests/test_mutants_checks.py"]),
    "cel": (["dralint/cel"], ["tests/test_cel.py", "tests/test_cel_conformance.py", "tests/test_cel_overloads.py",
                              "tests/test_cel_format_check.py", "tests/test_cel_apiserver_bank.py",
                              "tests/test_survivors.py", "tests/test_mutants_cel.py"]),
    "migrate": (["dralint/migrate"], ["tests/test_migrate.py", "tests/test_survivors.py",
                                      "tests/test_mutants_migrate.py"]),
    "inventory": (["dralint/cel/inventory.py"], ["tests/test_inventory.py", "tests/test_rollout.py",
                                                "tests/test_mutants_inventory.py"]),
}
#: `cel` means the CEL engine; the inventory evaluator is its own package here
EXCLUDE = {"cel": ["dralint/cel/inventory.py"]}


@dataclass
class Mutant:
    index: int  # position among all the package's mutants, in file order: `--mutant INDEX` replays it
    file: str
    mid: object  # mutmut's RelativeMutationID
    diff: str


def _files(package: str) -> list[str]:
    paths, _ = PACKAGES[package]
    out: list[str] = []
    for p in paths:
        full = REPO / p
        found = [full] if full.is_file() else sorted(full.rglob("*.py"))
        out += [f.relative_to(REPO).as_posix() for f in found]
    return [f for f in out if f not in EXCLUDE.get(package, [])]


def _mutants(package: str, every: int, offset: int, only: set[int] | None = None) -> tuple[list[Mutant], int]:
    """The sample (every K-th from `offset`, or exactly the indices in `only`) and the package's total."""
    from mutmut import Context, list_mutations, mutate

    chosen: list[Mutant] = []
    n = 0
    for rel in _files(package):
        src = (REPO / rel).read_text(encoding="utf-8")
        for mid in list_mutations(Context(source=src, filename=rel)):
            wanted = n in only if only is not None else n >= offset and (n - offset) % every == 0
            if wanted:
                out, _ = mutate(Context(source=src, mutation_id=mid, filename=rel))
                diff = "".join(difflib.unified_diff(src.splitlines(True), out.splitlines(True),
                                                    fromfile=rel, tofile=rel, n=1))
                chosen.append(Mutant(n, rel, mid, diff))
            n += 1
    return chosen, n


def _copy_repo(dst: Path) -> None:
    for name in ("dralint", "tests", "rules", "schemas", "examples", "scripts", "docs"):
        if (REPO / name).exists():
            shutil.copytree(REPO / name, dst / name, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__", ".mutmut-cache"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, dst / name)


#: Per-mutant pytest options. `-x` stops at the first failure (a killed mutant costs one failing test);
#: plain asserts and no hypothesis plugin cut the start-up from ~9 s to ~3 s on a loaded 2-core machine,
#: because nothing is byte-compiled in the copy (PYTHONDONTWRITEBYTECODE) and every run would otherwise
#: re-rewrite every test module's asserts. A failing assert still fails; only the message is plainer.
PYTEST_OPTS = ["-x", "-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "--assert=plain",
               "--no-header", "-o", "addopts="]


def _run_tests(root: Path, tests: list[str], timeout: float) -> tuple[str, float]:
    env = dict(os.environ, PYTHONPATH=str(root), PYTHONDONTWRITEBYTECODE="1")
    # the tests find the shared folder through DRALINT_SHARED; in the copy the default (../shared) is wrong
    env.setdefault("DRALINT_SHARED", str(REPO.parent / "shared"))
    cmd = [sys.executable, "-m", "pytest", *PYTEST_OPTS,
           *[t for t in tests if (root / t.split("::")[0]).is_file()]]
    start = time.monotonic()
    try:
        r = subprocess.run(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return "timeout", time.monotonic() - start
    return ("survived" if r.returncode == 0 else "killed"), time.monotonic() - start


def _node_id(root: Path, context: str) -> str | None:
    """`tests.test_x.TestC.test_m` (coverage's test_function context) -> `tests/test_x.py::TestC::test_m`."""
    parts = context.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        path = "/".join(parts[:cut]) + ".py"
        if (root / path).is_file():
            return "::".join([path, *parts[cut:]])
    return None


def _coverage_map(root: Path, files: list[str], tests: list[str]) -> tuple[dict[str, dict[int, set[str]]], float]:
    """Run the tests once under coverage with one context per test function: file -> line -> node ids.

    A mutant on line L can only change the outcome of a test that executes L, so only those run for it;
    that turns a 20 s run per mutant into a few seconds. A line also executed at import time (context
    "") maps to "*": every test, because a changed module-level value reaches tests that never run it.
    """
    from coverage import Coverage, CoverageData

    rc = root / ".coveragerc-mutation"
    rc.write_text("[run]\ndynamic_context = test_function\ninclude =\n"
                  + "".join(f"    {root / f}\n" for f in files), encoding="utf-8")
    data_file = root / ".coverage-mutation"
    env = dict(os.environ, PYTHONPATH=str(root), PYTHONDONTWRITEBYTECODE="1")
    env.setdefault("DRALINT_SHARED", str(REPO.parent / "shared"))
    cmd = [sys.executable, "-m", "coverage", "run", f"--rcfile={rc}", f"--data-file={data_file}", "-m", "pytest",
           *[o for o in PYTEST_OPTS if o != "-x"], *[t for t in tests if (root / t.split("::")[0]).is_file()]]
    start = time.monotonic()
    r = subprocess.run(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    took = time.monotonic() - start
    if r.returncode != 0:
        raise SystemExit("error: the tests fail without any mutant")
    data = CoverageData(basename=str(data_file))
    data.read()
    cov = Coverage(data_file=str(data_file), config_file=str(rc))
    cov.load()
    out: dict[str, dict[int, set[str]]] = {}
    for f in files:
        # a statement no test executes maps to no test at all: its mutants survive without a run
        lines: dict[int, set[str]] = {n: set() for n in cov.analysis2(str(root / f))[3]}
        for lineno, contexts in (data.contexts_by_lineno(str(root / f)) or {}).items():
            ids = {"*"} if "" in contexts else {n for c in contexts if (n := _node_id(root, c))}
            lines[lineno] = ids or {"*"}  # a context that names no test file: be safe, run everything
        out[f] = lines
    return out, took


def _tests_for(cover: dict[str, dict[int, set[str]]] | None, m: Mutant, tests: list[str]) -> list[str] | None:
    """The tests that reach the mutated line; the package's list when unsure; None when no test reaches it."""
    if cover is None:
        return tests
    line = m.mid.line_number + 1  # type: ignore[attr-defined]
    ids = cover.get(m.file, {}).get(line)
    if ids is None:
        # coverage records a multi-line statement on one of its lines, so an unrecorded line is not proof
        # that no test reaches it: run everything rather than call it a survivor unseen
        return tests
    if not ids:
        return None  # an executable statement that no test executes
    return tests if "*" in ids else sorted(ids)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--package", required=True, choices=sorted(PACKAGES))
    ap.add_argument("--every", type=int, default=1, help="test every K-th mutant (deterministic sample)")
    ap.add_argument("--offset", type=int, default=0)
    ap.add_argument("--mutant", type=int, action="append", metavar="INDEX",
                    help="test only this mutant (its index as printed; repeatable), e.g. to check a new test")
    ap.add_argument("--tests", nargs="+", help="test files or node ids instead of the package's own list")
    ap.add_argument("--no-coverage", action="store_true",
                    help="run the whole test list for every mutant instead of the tests that reach its line")
    ap.add_argument("--list", action="store_true", help="print the sample's diffs without running anything")
    ap.add_argument("--timeout", type=float, default=0.0,
                    help="seconds per mutant, counted as killed (default 3x the unmutated run, at least 20)")
    args = ap.parse_args(argv)
    from mutmut import Context, mutate

    tests = args.tests or PACKAGES[args.package][1]
    only = set(args.mutant) if args.mutant else None
    sample, total = _mutants(args.package, max(1, args.every), args.offset, only)
    what = f"mutants {sorted(only)}" if only else f"every {args.every}th from {args.offset}"
    print(f"{args.package}: {total} mutants in {len(_files(args.package))} files; testing {len(sample)} "
          f"({what}) with {' '.join(tests)}", flush=True)
    if args.list:
        for m in sample:
            print(f"\n#{m.index} {m.file}:{m.mid.line_number + 1}\n{m.diff}")  # type: ignore[attr-defined]
        return 0
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="dralint-mut-") as tmp:
        root = Path(tmp)
        _copy_repo(root)
        # the copy must be what the tests import, not the editable install of the working tree
        probe = subprocess.run([sys.executable, "-c", "import dralint; print(dralint.__file__)"], cwd=root,
                               env=dict(os.environ, PYTHONPATH=str(root)), capture_output=True, text=True, check=True)
        if not probe.stdout.strip().startswith(str(root)):
            print(f"error: the tests would import {probe.stdout.strip()}, not the copy", file=sys.stderr)
            return 2
        if args.no_coverage:
            cover = None
            status, base = _run_tests(root, tests, timeout=3600)
            if status != "survived":
                print("error: the tests fail without any mutant", file=sys.stderr)
                return 2
        else:
            cover, base = _coverage_map(root, _files(args.package), tests)
        timeout = args.timeout or max(20.0, 3 * base)
        print(f"tests pass unmutated in {base:.0f}s{'' if cover is None else ' (under coverage)'}; "
              f"timeout per mutant {timeout:.0f}s", flush=True)
        counts = {"killed": 0, "survived": 0, "timeout": 0, "uncovered": 0}
        survivors: list[Mutant] = []
        for m in sample:
            chosen = _tests_for(cover, m, tests)
            if chosen is None:
                counts["uncovered"] += 1
                survivors.append(m)
                print(f"  #{m.index:<5} uncovered  no test executes {m.file}:{m.mid.line_number + 1}",  # type: ignore[attr-defined]
                      flush=True)
                continue
            target = root / m.file
            original = target.read_text(encoding="utf-8")
            mutated, _ = mutate(Context(source=original, mutation_id=m.mid, filename=m.file))
            target.write_text(mutated, encoding="utf-8")
            try:
                status, took = _run_tests(root, chosen, timeout)
            finally:
                target.write_text(original, encoding="utf-8")
            counts[status] += 1
            if status == "survived":
                survivors.append(m)
            print(f"  #{m.index:<5} {status:8} {took:5.1f}s {m.file}:{m.mid.line_number + 1}",  # type: ignore[attr-defined]
                  flush=True)
    tested = sum(counts.values())
    killed = counts["killed"] + counts["timeout"]
    minutes = (time.monotonic() - began) / 60
    print(f"\n{args.package}: {killed}/{tested} killed ({100 * killed / max(tested, 1):.0f} %), "
          f"{counts['timeout']} by timeout, {counts['uncovered']} never executed by a test; "
          f"{len(sample)} of {total} mutants ({what}); {minutes:.1f} min")
    for m in survivors:
        print(f"\nsurvived #{m.index}: {m.file}:{m.mid.line_number + 1}\n{m.diff}")  # type: ignore[attr-defined]
    return 0


if __name__ == "__main__":
    sys.exit(main())
