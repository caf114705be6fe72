#!/usr/bin/env python3
"""Benchmark: `dralint migrate` over 3,000 device-plugin workloads (target: <= 15 s on the project machine).

    python bench/bench_migrate.py                 # 3,000 workloads in 300 files, 3 interleaved reps
    python bench/bench_migrate.py --workloads 6000 --reps 5 --keep /tmp/mig

The corpus is generated deterministically (seeded): Deployments, StatefulSets, Jobs and Pods asking
for `nvidia.com/gpu` or MIG devices in requests and/or limits, kubectl- and Helm-style indentation,
comments on the GPU lines, plus one untouched Service per three workloads. Each rep copies the
pristine corpus to a fresh directory and runs the whole command in a child process (interpreter
start-up, loading, planning, splicing, the write gates, the re-lint of the results and the atomic
writes included). The first rep's output is then verified: every workload migrated, no DRA201/202
left, and a second migrate changes nothing.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_SECONDS = 15.0

KINDS = ("Deployment", "StatefulSet", "Job", "Pod")
RESOURCES = ("nvidia.com/gpu", "nvidia.com/gpu", "nvidia.com/gpu", "nvidia.com/mig-1g.10gb",
             "nvidia.com/mig-3g.40gb", "nvidia.com/mig-1g.10gb.me")


def workload(rnd: random.Random, i: int, helm: bool) -> str:
    kind = rnd.choice(KINDS)
    res = rnd.choice(RESOURCES)
    n = rnd.randint(1, 4)
    d = "  " if helm else ""  # sequence dash offset
    api = {"Pod": "v1", "Job": "batch/v1"}.get(kind, "apps/v1")
    container = (
        f"{d}- name: trainer\n"
        f"{d}  image: nvcr.io/nvidia/pytorch:24.0{i % 9}-py3\n"
        f"{d}  args: [\"--epochs\", \"{i % 50}\"]\n"
        f"{d}  env:\n"
        f"{d}  {d}- name: RANK\n"
        f"{d}  {d}  value: \"{i}\"\n"
        f"{d}  resources:\n"
        f"{d}    limits:\n"
        f"{d}      cpu: \"{n * 4}\"\n"
        f"{d}      memory: {n * 16}Gi\n"
        f"{d}      {res}: {n}  # accelerators\n"
        + (f"{d}    requests:\n{d}      {res}: {n}\n" if rnd.random() < 0.5 else "")
        + f"{d}- name: sidecar\n{d}  image: busybox:1.36\n"
    )
    pod_spec = "containers:\n" + container + "restartPolicy: " + ("Never" if kind == "Job" else "Always") + "\n"
    meta = f"metadata:\n  name: train-{i}\n  namespace: team-{i % 7}\n  labels: {{app: train-{i}}}\n"
    if kind == "Pod":
        body = "spec:\n" + "".join("  " + ln + "\n" for ln in pod_spec.splitlines())
    else:
        head = f"spec:\n  replicas: {rnd.randint(1, 3)}\n" if kind != "Job" else "spec:\n  backoffLimit: 2\n"
        if kind != "Job":
            head += f"  selector:\n    matchLabels: {{app: train-{i}}}\n"
        body = head + "  template:\n    metadata:\n      labels: {app: train-" + str(i) + "}\n    spec:\n" + "".join(
            "      " + ln + "\n" for ln in pod_spec.splitlines())
    return f"# workload {i}\napiVersion: {api}\nkind: {kind}\n{meta}{body}"


def service(i: int) -> str:
    return (f"apiVersion: v1\nkind: Service\nmetadata:\n  name: train-{i}\n  namespace: team-{i % 7}\nspec:\n"
            f"  selector: {{app: train-{i}}}\n  ports:\n  - port: 80  # http\n    targetPort: 8080\n")


def generate(root: Path, workloads: int, per_file: int = 10, seed: int = 1) -> int:
    rnd = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    files = 0
    for f in range(0, workloads, per_file):
        helm = rnd.random() < 0.5
        docs = []
        for i in range(f, min(f + per_file, workloads)):
            docs.append(workload(rnd, i, helm))
            if i % 3 == 0:
                docs.append(service(i))
        (root / f"team-{f // per_file:04d}.yaml").write_text("---\n".join(docs), encoding="utf-8")
        files += 1
    return files


def run_migrate(corpus: Path, *extra: str) -> tuple[float, subprocess.CompletedProcess[str]]:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "dralint", "migrate", "--isolated", "--no-progress", *extra,
                           str(corpus)], capture_output=True, text=True, check=False)
    return time.perf_counter() - t0, proc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", type=int, default=3000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--keep", type=Path, help="Keep the generated corpus here.")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="dralint-bench-migrate-"))
    pristine = args.keep or tmp / "pristine"
    if pristine.exists():
        shutil.rmtree(pristine)
    nfiles = generate(pristine, args.workloads)
    size = sum(p.stat().st_size for p in pristine.iterdir())
    print(f"corpus: {args.workloads} workloads (+{(args.workloads + 2) // 3} Services) in {nfiles} files, "
          f"{size / 1e6:.1f} MB")
    times = []
    for rep in range(args.reps):
        work = tmp / f"rep{rep}"
        shutil.copytree(pristine, work)
        seconds, proc = run_migrate(work, "--format", "json")
        if proc.returncode != 0:
            print(proc.stdout[-2000:], proc.stderr[-2000:])
            return 1
        summary = json.loads(proc.stdout)["summary"]
        times.append(seconds)
        print(f"rep {rep + 1}: {seconds:.2f} s  {summary}")
        if rep == 0:
            verify(work, args.workloads, summary)
        else:
            shutil.rmtree(work)
    med = statistics.median(times)
    verdict = "OK" if med <= TARGET_SECONDS else "OVER TARGET"
    print(f"migrate of {args.workloads} workloads: median {med:.2f} s (min {min(times):.2f}, max {max(times):.2f}); "
          f"target <= {TARGET_SECONDS:.0f} s: {verdict}")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


def verify(work: Path, workloads: int, summary: dict[str, int]) -> None:
    assert summary["migrated"] == workloads and summary["skipped"] == 0, summary
    proc = subprocess.run([sys.executable, "-m", "dralint", "check", "--isolated", "--select", "DRA201,DRA202",
                           "--format", "json", str(work)], capture_output=True, text=True, check=False)
    left = json.loads(proc.stdout)["findings"]
    assert left == [], left[:3]
    seconds, again = run_migrate(work, "--format", "json")
    s2 = json.loads(again.stdout)["summary"]
    assert s2["files_changed"] == 0 and s2["migrated"] == 0, s2
    print(f"verified: no DRA201/DRA202 left; a second migrate changes nothing ({seconds:.2f} s)")


if __name__ == "__main__":
    sys.exit(main())
