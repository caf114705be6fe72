"""Mutation testing per package, with mutmut's mutation operators and the tests that cover each package.

    .venv/bin/pip install 'mutmut==2.5.1'
    DRALINT_SHARED=/work/shared nice -n 15 .venv/bin/python bench/mutation.py --package fix --every 10

Not part of CI: a full run takes hours on a small machine. mutmut 2.x is used as a library (its
`list_mutations` / `mutate`), because its own runner mutates one tree for every package with one
test command; here each package gets the tests that cover it (`PACKAGES`), and the run can be
sampled deterministically: ``--every K`` takes mutant 0, K, 2K, … of the package's mutants in file
order (``--offset`` shifts the start), so two runs with the same options test the same mutants.

Mutants are applied to a copy of the repository in a temporary directory (never to the working
tree); a mutant is *killed* when the tests fail or time out (3x the unmutated run, at least 60 s),
*survived* otherwise. Survivors are printed with their diff; review them: kill each with a test, or
list it in bench/mutation-equivalent.md with the reason it cannot change behaviour.
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
    "engine": (["dralint/engine"], ["tests/test_engine.py", "tests/test_cache.py", "tests/test_parallel.py",
                                    "tests/test_survivors.py", "tests/test_rule_examples.py"]),
    "fix": (["dralint/fix"], ["tests/test_fixer.py", "tests/test_fix_gates.py", "tests/test_fix_examples.py",
                              "tests/test_fix_properties.py", "tests/test_json_files.py"]),
    "checks": (["dralint/checks"], ["tests/test_rule_examples.py", "tests/test_conformance.py",
                                    "tests/test_driver_rules.py", "tests/test_rollout.py", "tests/test_metadata.py",
                                    "tests/test_admission.py", "tests/test_dra307_refusals.py"]),
    "cel": (["dralint/cel"], ["tests/test_cel.py", "tests/test_cel_conformance.py", "tests/test_cel_overloads.py",
                              "tests/test_cel_format_check.py", "tests/test_cel_apiserver_bank.py",
                              "tests/test_survivors.py"]),
    "migrate": (["dralint/migrate"], ["tests/test_migrate.py", "tests/test_survivors.py"]),
    "inventory": (["dralint/cel/inventory.py"], ["tests/test_inventory.py", "tests/test_rollout.py"]),
}
#: `cel` means the CEL engine; the inventory evaluator is its own package here
EXCLUDE = {"cel": ["dralint/cel/inventory.py"]}


@dataclass
class Mutant:
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


def _mutants(package: str, every: int, offset: int) -> list[Mutant]:
    from mutmut import Context, list_mutations, mutate

    chosen: list[Mutant] = []
    n = 0
    for rel in _files(package):
        src = (REPO / rel).read_text(encoding="utf-8")
        for mid in list_mutations(Context(source=src, filename=rel)):
            if n >= offset and (n - offset) % every == 0:
                out, _ = mutate(Context(source=src, mutation_id=mid, filename=rel))
                diff = "".join(difflib.unified_diff(src.splitlines(True), out.splitlines(True),
                                                    fromfile=rel, tofile=rel, n=1))
                chosen.append(Mutant(rel, mid, diff))
            n += 1
    print(f"{package}: {n} mutants in {len(_files(package))} files; testing {len(chosen)} "
          f"(every {every}th from {offset})", flush=True)
    return chosen


def _copy_repo(dst: Path) -> None:
    for name in ("dralint", "tests", "rules", "schemas", "examples", "scripts", "docs"):
        if (REPO / name).exists():
            shutil.copytree(REPO / name, dst / name, symlinks=True,
                            ignore=shutil.ignore_patterns("__pycache__", ".mutmut-cache"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, dst / name)


def _run_tests(root: Path, tests: list[str], timeout: float) -> tuple[str, float]:
    env = dict(os.environ, PYTHONPATH=str(root), PYTHONDONTWRITEBYTECODE="1")
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--no-header",
           *[t for t in tests if (root / t).is_file()]]
    start = time.monotonic()
    try:
        r = subprocess.run(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return "timeout", time.monotonic() - start
    return ("survived" if r.returncode == 0 else "killed"), time.monotonic() - start


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--package", required=True, choices=sorted(PACKAGES))
    ap.add_argument("--every", type=int, default=1, help="test every K-th mutant (deterministic sample)")
    ap.add_argument("--offset", type=int, default=0)
    args = ap.parse_args(argv)
    from mutmut import Context, mutate

    _, tests = PACKAGES[args.package]
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
        status, base = _run_tests(root, tests, timeout=3600)
        if status != "survived":
            print("error: the tests fail without any mutant", file=sys.stderr)
            return 2
        timeout = max(60.0, 3 * base)
        print(f"tests pass unmutated in {base:.0f}s; timeout per mutant {timeout:.0f}s", flush=True)
        counts = {"killed": 0, "survived": 0, "timeout": 0}
        survivors: list[Mutant] = []
        for m in _mutants(args.package, max(1, args.every), args.offset):
            target = root / m.file
            original = target.read_text(encoding="utf-8")
            mutated, _ = mutate(Context(source=original, mutation_id=m.mid, filename=m.file))
            target.write_text(mutated, encoding="utf-8")
            try:
                status, _ = _run_tests(root, tests, timeout)
            finally:
                target.write_text(original, encoding="utf-8")
            counts[status] += 1
            if status == "survived":
                survivors.append(m)
            print(f"  {status:8} {m.file}:{m.mid.line_number + 1}", flush=True)  # type: ignore[attr-defined]
    tested = sum(counts.values())
    killed = counts["killed"] + counts["timeout"]
    minutes = (time.monotonic() - began) / 60
    print(f"\n{args.package}: {killed}/{tested} killed ({100 * killed / max(tested, 1):.0f} %), "
          f"{counts['timeout']} by timeout; sample every {args.every}th; {minutes:.1f} min")
    for m in survivors:
        print(f"\nsurvived: {m.file}:{m.mid.line_number + 1}\n{m.diff}")  # type: ignore[attr-defined]
    return 0


if __name__ == "__main__":
    sys.exit(main())
