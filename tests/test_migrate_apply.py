"""How `migrate` plans and applies: what it leaves to the garbage collector, what workers send back."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

import pytest

from dralint.engine import memory
from dralint.engine.config import build_config, usable_cores
from dralint.fix.loop import LoadedRun
from dralint.inputs.load import load_bytes
from dralint.migrate import apply
from dralint.migrate.records import MigrateOptions
from dralint.migrate.run import migrate_files, migrate_paths

from .conftest import REPO
from .test_migrate import POD, migrate_text


def test_the_plans_are_out_of_the_collectors_sight_while_the_edits_apply(monkeypatch: pytest.MonkeyPatch) -> None:
    # a real run freezes only above FREEZE_MIN_CHARS of text; this one is small
    monkeypatch.setattr(memory, "FREEZE_MIN_CHARS", 0)
    real = apply._apply_file
    tracked_plans: list[bool] = []

    def spy(job: Any, k: int) -> Any:
        tracked = {id(o) for o in gc.get_objects()}  # frozen objects are not listed
        tracked_plans.append(any(id(pf) in tracked for plans in job.plans for pf in plans))
        return real(job, k)

    monkeypatch.setattr(apply, "_apply_file", spy)
    frozen = gc.get_freeze_count()
    after, _ = migrate_text(POD)
    assert "resourceClaims" in after
    assert tracked_plans == [False]
    # a library caller (no `quiet_gc` around it) gets its collector back as it was
    assert gc.get_freeze_count() == frozen


def test_each_workload_is_reported_at_the_line_of_its_kind() -> None:
    # lines are counted on from the previous workload of the file; a List's items come in order too
    text = "\n".join([
        "# leading comment", POD.replace("trainer", "a"),
        "---", POD.replace("trainer", "b").replace("kind: Pod", "kind:   Pod"),
        "---\napiVersion: v1\nkind: List\nitems:",
        *("- " + POD.replace("trainer", n).replace("\n", "\n  ").rstrip() + "\n" for n in ("c", "d")),
    ])
    _, rep = migrate_text(text)
    lines = text.split("\n")
    want = [k + 1 for k, line in enumerate(lines) if line.lstrip("- ").startswith("kind:") and "List" not in line]
    assert [w.line for w in rep.workloads] == want and len(want) == 4


def test_the_planner_runs_with_the_collector_paused(monkeypatch: pytest.MonkeyPatch) -> None:
    # what it builds lives for the run: a full collection during planning walked all of it again
    from dralint.migrate.planner import _Planner

    real = _Planner.plan
    enabled: list[bool] = []

    def spy(self: Any, obj: Any) -> Any:
        enabled.append(gc.isenabled())
        return real(self, obj)

    monkeypatch.setattr(_Planner, "plan", spy)
    was = gc.isenabled()
    migrate_text(POD)
    assert enabled == [False]
    assert gc.isenabled() == was


def test_the_gates_take_the_identities_of_a_document_the_result_kept_as_it_was(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from dralint.fix import gates

    real = gates._identities
    asked: list[int] = []

    def spy(sf: Any, di: int, skip: Any = frozenset()) -> Any:
        asked.append(di)
        return real(sf, di, skip)

    monkeypatch.setattr(gates, "_identities", spy)
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n"
    after, _ = migrate_text(cm + "---\n" + POD)
    assert after.startswith(cm + "---\n")
    # the migrated Pod (document 1) in the file before and after; never the ConfigMap (document 0)
    assert asked == [1, 1]


@pytest.mark.skipif(usable_cores() < 2, reason="one core: migrate applies in this process")
def test_workers_send_back_changes_that_rebuild_the_same_files(monkeypatch: pytest.MonkeyPatch) -> None:
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n"
    texts = {
        "a.yaml": "\ufeff" + (cm + "---\n" + POD).replace("\n", "\r\n"),  # a BOM and CRLF lines
        "b.yaml": POD + "---\n# the end\n" + cm,
        "c.yaml": cm,  # nothing to migrate
    }

    def run(jobs: int) -> list[bytes]:
        cfg = build_config({"jobs": jobs}, None, REPO)
        rep = migrate_files([load_bytes(p, t.encode()) for p, t in texts.items()], [], cfg, MigrateOptions())
        assert not rep.failed
        return [f.after for f in rep.files]

    compact: list[bool] = []
    real = apply._expanded

    def spy(job: Any, done: Any) -> Any:
        compact.append(done.after is None and done.changes is not None)
        return real(job, done)

    monkeypatch.setattr(apply, "_expanded", spy)
    with_workers = run(2)
    assert compact == [True, True]
    alone = run(1)
    assert with_workers == alone and alone[0] != texts["a.yaml"].encode() and alone[1] != texts["b.yaml"].encode()


def test_the_console_script_keeps_what_migrate_loaded_to_the_end(monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    # it leaves with os._exit: freeing the trees one object at a time first was work for nothing
    (tmp_path / "p.yaml").write_text(POD)
    monkeypatch.setattr(memory, "_lingering", [])
    report = migrate_paths([str(tmp_path)], build_config({}, None, tmp_path), MigrateOptions())
    assert report.changed()
    kept = [o for o in memory._lingering or () if isinstance(o, LoadedRun)]
    assert len(kept) == 1 and kept[0].targets[0].documents[0].data["kind"] == "Pod"


def test_a_library_caller_gets_the_memory_back() -> None:
    assert memory._lingering is None  # only the console script asks for it
    migrate_text(POD)
    assert memory._lingering is None
