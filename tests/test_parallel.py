"""Worker processes change how fast dralint runs, never what it reports.

Every comparison here is between a one-process run and a run with workers over the same files:
the generated benchmark corpus (small), the repository's examples, and split target/context sets.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from dralint.engine import parallel
from dralint.engine.config import build_config, usable_cores
from dralint.engine.pipeline import choose_jobs, lint_paths
from dralint.engine.runner import Result
from dralint.report import ReportOptions, get_formatter
from tests.conftest import EXAMPLES, REPO


def load_generator() -> Any:
    spec = importlib.util.spec_from_file_location("dralint_bench_gen", REPO / "bench" / "gen_corpus.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("corpus") / "repo"
    load_generator().generate(out, files=80, docs=700, seed=3)
    return out


def canonical(result: Result) -> list[tuple[Any, ...]]:
    """Everything a finding says, including its fix, in a comparable form."""
    return [
        (f.path, f.span, f.rule, f.name, f.severity, f.message, f.object, f.source, repr(f.fix), f.doc_index,
         f.base_path, f.obj_path)
        for f in result.findings
    ]


def run(paths: list[str], jobs: int, context: list[str] | None = None, **cfg: Any) -> Result:
    config = build_config(cfg, None, REPO)
    config.use_cache = False
    return lint_paths(paths, config, context=context or (), jobs=jobs)


def test_generated_corpus_same_findings_with_and_without_workers(corpus: Path) -> None:
    one = run([str(corpus)], jobs=1)
    two = run([str(corpus)], jobs=2)
    assert one.stats["jobs"] == 1 and two.stats["jobs"] == 2
    assert "worker_error" not in two.stats
    assert len(one.findings) > 50  # the corpus has legacy GPUs, missing templates, broken objects
    assert canonical(two) == canonical(one)
    assert [e.__dict__ for e in two.internal_errors] == [e.__dict__ for e in one.internal_errors]
    assert two.suppressed == one.suppressed
    assert [f.path for f in two.files] == [f.path for f in one.files]
    assert sum(o.target for o in two.index.objects) == sum(o.target for o in one.index.objects)
    as_json = get_formatter("json")
    assert as_json(two, ReportOptions()) == as_json(one, ReportOptions())


def test_every_rule_including_off_by_default_ones(corpus: Path) -> None:
    one = run([str(corpus)], jobs=1, select=["ALL"])
    assert canonical(run([str(corpus)], jobs=3, select=["ALL"])) == canonical(one)


def test_examples_same_findings_with_and_without_workers() -> None:
    paths = [str(EXAMPLES)]
    assert canonical(run(paths, jobs=2)) == canonical(run(paths, jobs=1))


def test_targets_with_context_same_findings(corpus: Path) -> None:
    # lint one directory with the whole corpus as context: lookups cross worker shares
    targets = [str(p) for p in sorted(corpus.iterdir()) if p.is_dir()][:1]
    one = run(targets, jobs=1, context=[str(corpus)])
    two = run(targets, jobs=2, context=[str(corpus)])
    assert canonical(two) == canonical(one)
    assert all(f.path.startswith(targets[0]) for f in two.findings)
    alone = run(targets, jobs=1)
    assert canonical(alone) != canonical(one)  # the context matters: templates and classes live elsewhere


def test_files_of_a_parallel_run_can_still_be_read(corpus: Path) -> None:
    # fixers and reports read the parsed targets: they are parsed again on first use
    one = run([str(corpus)], jobs=1)
    two = run([str(corpus)], jobs=2)
    for a, b in list(zip(one.files, two.files, strict=True))[:10]:
        assert b.path == a.path
        assert b.raw == a.raw and b.text == a.text and b.newline == a.newline and b.bom == a.bom
        assert [d.data for d in b.documents] == [d.data for d in a.documents]
        assert b.line_col(len(b.text) // 2) == a.line_col(len(a.text) // 2)


def test_a_failing_worker_falls_back_to_one_process(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: object) -> None:
        raise RuntimeError("worker bug")

    monkeypatch.setattr(parallel, "_phase1", boom)
    r = run([str(corpus)], jobs=2)
    assert "worker bug" in r.stats["worker_error"]
    assert r.stats["jobs"] == 1
    assert canonical(r) == canonical(run([str(corpus)], jobs=1))


def test_a_worker_that_dies_falls_back_to_one_process(corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    def die(*args: object) -> None:
        os._exit(9)

    monkeypatch.setattr(parallel, "_phase1", die)
    r = run([str(corpus)], jobs=2)
    assert "ended unexpectedly" in r.stats["worker_error"]
    assert canonical(r) == canonical(run([str(corpus)], jobs=1))


def test_shares_are_balanced_and_cover_every_file() -> None:
    sizes = [100_000, 5, 60_000, 40_000, 7, 9, 30_000, 30_000]
    out = parallel.shares(sizes, range(len(sizes)), 2)
    assert sorted(i for s in out for i in s) == list(range(len(sizes)))
    loads = [sum(sizes[i] for i in s) for s in out]
    assert max(loads) - min(loads) <= 40_000


def test_jobs_default_to_one_for_a_handful_of_files() -> None:
    assert choose_jobs(None, nbytes=20_000, nfiles=3) == 1
    assert choose_jobs(0, nbytes=20_000, nfiles=3) == 1
    # never more workers than files, nor than usable cores
    assert choose_jobs(4, nbytes=20_000, nfiles=3) == min(3, usable_cores())
    assert choose_jobs(None, nbytes=50_000_000, nfiles=2000) >= 1


def test_jobs_option_from_cli_and_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from dralint.cli.app import main

    for i in range(20):
        (tmp_path / f"pod{i}.yaml").write_text(
            f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}}}\nspec:\n  containers:\n  - name: c\n"
            "    resources: {limits: {nvidia.com/gpu: 1}}\n")
    outs = []
    for extra in (["--jobs", "1"], ["-j", "2"]):
        assert main(["check", str(tmp_path), "--isolated", "--no-cache", "--format", "json", *extra]) == 1
        outs.append(json.loads(capsys.readouterr().out)["findings"])
    assert outs[0] == outs[1] and len(outs[0]) == 20
    (tmp_path / ".dralint.yaml").write_text("jobs: 2\n")
    assert build_config({"jobs": 2}, None, tmp_path).jobs == min(2, usable_cores())
    assert main(["check", str(tmp_path), "--config", str(tmp_path / ".dralint.yaml"), "--no-cache"]) == 1
    (tmp_path / ".dralint.yaml").write_text("jobs: -1\n")
    assert main(["check", str(tmp_path), "--config", str(tmp_path / ".dralint.yaml")]) == 2
