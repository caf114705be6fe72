#!/usr/bin/env python3
"""Inventory evaluation benchmark: 10,000 devices x 100 selectors (and per-node claim allocation).

    python bench/bench_inventory.py [--nodes 1250] [--gpus 8] [--selectors 100] [--repeat 3] [--no-grouping]

Builds a synthetic inventory of GPU ResourceSlices (a realistic product/memory/driver mix, one
pool per node), 100 distinct selectors in the shapes seen in manifests (equality on productName,
capacity comparisons, semver comparisons, prefix/regex matches, guarded lookups, cel.bind, a few
that read the whole attribute map), then times:

1. loading the slices into the inventory (CEL device values, quantities, versions);
2. matching every selector against every device (``Evaluator.match``), the work DRA403/DRA402 do;
3. allocating 20 claims (1-4 devices, some with a matchAttribute constraint) on every node.

``--no-grouping`` evaluates every selector on every device instead of once per distinct
combination of the attribute values it reads, to show what the grouping saves.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dralint.cel import inventory as invmod
from dralint.inputs.index import Index
from dralint.inputs.load import load_bytes
from dralint.knowledge.profile import ClusterProfile

PRODUCTS = [
    ("NVIDIA A100-SXM4-80GB", "Ampere", "80Gi", "8.0.0"), ("NVIDIA A100-SXM4-40GB", "Ampere", "40Gi", "8.0.0"),
    ("NVIDIA H100 80GB HBM3", "Hopper", "80Gi", "9.0.0"), ("NVIDIA L4", "Ada Lovelace", "24Gi", "8.9.0"),
    ("Tesla T4", "Turing", "15Gi", "7.5.0"), ("NVIDIA A10G", "Ampere", "24Gi", "8.6.0"),
    ("NVIDIA RTX A5000", "Ampere", "24Gi", "8.6.0"), ("NVIDIA B200", "Blackwell", "180Gi", "10.0.0"),
]
DRIVERS = ["550.54.15", "570.172.8", "580.126.20"]


def make_slices(nodes: int, gpus: int, rng: random.Random) -> list[dict[str, Any]]:
    out = []
    for n in range(nodes):
        product, arch, mem, cc = PRODUCTS[rng.randrange(len(PRODUCTS))]
        drv = rng.choice(DRIVERS)
        devices = []
        for g in range(gpus):
            devices.append({
                "name": f"gpu-{g}",
                "attributes": {
                    "type": {"string": "gpu"}, "productName": {"string": product}, "architecture": {"string": arch},
                    "brand": {"string": "Nvidia"}, "uuid": {"string": f"GPU-{n:08x}-{g:04x}"},
                    "cudaComputeCapability": {"version": cc}, "driverVersion": {"version": drv},
                    "resource.kubernetes.io/pciBusID": {"string": f"0000:{g * 16:02x}:00.0"},
                    "resource.kubernetes.io/pcieRoot": {"string": f"pci0000:{(g // 4) * 64:02x}"},
                },
                "capacity": {"memory": {"value": mem}},
            })
        out.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                    "metadata": {"name": f"node-{n}-gpu"},
                    "spec": {"driver": "gpu.nvidia.com", "nodeName": f"node-{n}",
                             "pool": {"name": f"node-{n}", "generation": 1, "resourceSliceCount": 1},
                             "devices": devices}})
    return out


G = 'device.attributes["gpu.nvidia.com"]'
C = 'device.capacity["gpu.nvidia.com"]'


def make_selectors(count: int) -> list[str]:
    shapes = []
    for p, arch, _mem, cc in PRODUCTS:
        shapes += [f'{G}.productName == "{p}"', f'{G}.architecture == "{arch}"',
                   f'{G}.productName.startsWith("{p.split()[0]} {p.split()[1][:3]}")',
                   f'{G}.cudaComputeCapability.compareTo(semver("{cc}")) >= 0']
    for m in ("8Gi", "16Gi", "20Gi", "24Gi", "40Gi", "48Gi", "80Gi", "141Gi"):
        shapes += [f'{C}.memory.compareTo(quantity("{m}")) >= 0', f'{C}.memory.isGreaterThan(quantity("{m}"))']
    for d in DRIVERS:
        shapes += [f'{G}.driverVersion.isGreaterThan(semver("{d}"))',
                   f'{G}.driverVersion.compareTo(semver("{d}")) == 0 && {G}.architecture != "Turing"']
    shapes += [
        f'{G}.productName.lowerAscii().matches("a100|h100")',
        f'cel.bind(g, {G}, g.architecture == "Ampere" && g.?numa.orValue(0) == 0)',
        f'"productName" in {G} && {G}.productName.contains("80GB")',
        'device.attributes.exists(d, d == "resource.kubernetes.io")',
        f'has({G}.profile) || {G}.type == "gpu"',
        'device.attributes["resource.kubernetes.io"].pcieRoot == "pci0000:00"',
    ]
    i = 0
    while len(shapes) < count:  # combine shapes into conjunctions until there are enough distinct ones
        shapes.append(f"{shapes[i % 40]} && {shapes[(i * 7 + 3) % 40]}")
        i += 1
    return shapes[:count]


def claims(n: int) -> str:
    docs = []
    for i in range(n):
        count = 1 + i % 4
        sel = make_selectors(40)[i % 40]
        cons = ("      constraints:\n      - {matchAttribute: resource.kubernetes.io/pcieRoot}\n"
                if i % 3 == 0 else "")
        docs.append(f"""apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {{name: c{i}, namespace: ml}}
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly:
          deviceClassName: gpu.nvidia.com
          count: {count}
          selectors:
          - cel: {{expression: '{sel}'}}
{cons}""")
    return "---\n".join(docs)


def timed(fn: Any) -> tuple[float, Any]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def one_round(slices: list[dict[str, Any]], selectors: list[str], cls: str, profile: ClusterProfile,
              n_claims: int) -> tuple[float, float, float, int, int]:
    t_load, inv = timed(lambda: invmod.build(slices))
    ev = invmod.Evaluator(inv, profile)
    t_match, sets = timed(lambda: [ev.match((cls, s)) for s in selectors])
    total_match = sum(len(m.matches) for m in sets if m is not None)
    sf = load_bytes("claims.yaml", claims(n_claims).encode())
    index = Index()
    index.add_file(sf)

    def allocate_all() -> int:
        ok = 0
        for obj in index.objects:
            spec = invmod.claim_spec(obj, index, inv, ev)
            ok += sum(1 for node in inv.nodes() if invmod.allocate(spec, inv, node) is not None)
        return ok

    t_alloc, ok = timed(allocate_all)
    return t_load, t_match, t_alloc, total_match, ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=1250)
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--selectors", type=int, default=100)
    ap.add_argument("--claims", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-grouping", action="store_true")
    args = ap.parse_args()
    rng = random.Random(1)
    slices = make_slices(args.nodes, args.gpus, rng)
    selectors = make_selectors(args.selectors)
    profile = ClusterProfile()
    if args.no_grouping:
        invmod._projection = lambda prog: None  # type: ignore[assignment]  # evaluate every device
    cls = 'device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "gpu"'
    loads, matches, allocs = [], [], []
    total_match = ok = 0
    for _ in range(args.repeat):
        t_load, t_match, t_alloc, total_match, ok = one_round(slices, selectors, cls, profile, args.claims)
        loads.append(t_load)
        matches.append(t_match)
        allocs.append(t_alloc)
    n_dev = args.nodes * args.gpus
    print(f"inventory: {n_dev:,} devices on {args.nodes:,} nodes; {len(selectors)} selectors; "
          f"grouping {'off' if args.no_grouping else 'on'}; median of {args.repeat}")
    print(f"  load slices            {statistics.median(loads):7.3f} s")
    print(f"  match all selectors    {statistics.median(matches):7.3f} s  "
          f"({n_dev * len(selectors) / statistics.median(matches):,.0f} device-selector pairs/s; "
          f"{total_match:,} matches)")
    print(f"  allocate {args.claims} claims x {args.nodes} nodes {statistics.median(allocs):7.3f} s "
          f"({ok:,} node placements possible)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
