"""What `dralint migrate` would skip, without planning the edits or writing anything.

The readiness page (`dralint report --format html`) lists the workloads a migration run would leave
for a person, with the planner's own reason, so the list cannot drift from what ``migrate`` does.
"""

from __future__ import annotations

from dralint.checks.legacy import usages
from dralint.engine.config import Config
from dralint.engine.runner import Result
from dralint.inputs.locate import locate
from dralint.migrate.planner import _Planner
from dralint.migrate.records import MigrateOptions, WorkloadReport


def skipped_workloads(result: Result, config: Config, opts: MigrateOptions | None = None) -> list[WorkloadReport]:
    """One report (status ``skipped``, with the reason) per target workload ``migrate`` would not touch."""
    planner = _Planner(result, config, opts or MigrateOptions())
    # the DRA204 findings of this run, if the rule ran: a workload on both allocators is skipped
    by_obj = {(f.path, f.doc_index, f.base_path) for f in result.findings if f.rule == "DRA204"}
    planner.dra204 = {id(o) for o in result.index.objects if (o.file.path, o.doc.index, o.base_path) in by_obj}
    out: list[WorkloadReport] = []
    for obj in result.index.targets():
        uses = usages(obj, planner.ctx)
        if not uses:
            continue
        why = planner._skip_reason(obj, uses)
        if why:
            line = locate(obj.file, obj.doc, (*obj.base_path, "kind")).line
            out.append(WorkloadReport(obj.file.path, line, obj.kind or "?", obj.namespace, obj.name or "?",
                                      "skipped", why))
    return out
