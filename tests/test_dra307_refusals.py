"""DRA307: Job wording from parallelism/completions, and the cases where no fix is offered."""

from __future__ import annotations

import json

from .conftest import lint_text

CLAIM = """apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared-gpu}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.nvidia.com}
"""


def _job(parallelism: int, completions: int | None, name: str = "train") -> str:
    comp = f"  completions: {completions}\n" if completions is not None else ""
    return f"""apiVersion: batch/v1
kind: Job
metadata: {{name: {name}}}
spec:
  parallelism: {parallelism}
{comp}  template:
    spec:
      restartPolicy: Never
      resourceClaims:
      - name: gpu
        resourceClaimName: shared-gpu
      containers:
      - name: main
        image: cuda
        resources:
          claims:
          - name: gpu
"""


def _dra307(text: str, context: tuple[tuple[str, str], ...] = ()):  # type: ignore[no-untyped-def]
    r = lint_text(text, select=["DRA307"], context=(("claim.yaml", CLAIM), *context))
    return [f for f in r.findings if f.rule == "DRA307"]


def test_job_message_names_parallelism_and_completions() -> None:
    [f] = _dra307(_job(2, 10))
    assert "parallelism: 2, completions: 10" in f.message
    assert "replicas" not in f.message


def test_block_style_single_user_keeps_the_fix() -> None:
    [f] = _dra307(_job(3, None))
    assert "parallelism: 3)" in f.message
    assert f.fix is not None


def test_no_fix_for_a_flow_style_document() -> None:
    import yaml

    flow = yaml.safe_dump(yaml.safe_load(_job(2, 4)), default_flow_style=True)
    assert flow.lstrip().startswith("{")
    [f] = _dra307(flow)
    assert f.fix is None


def test_no_fix_for_json() -> None:
    import yaml

    text = json.dumps(yaml.safe_load(_job(2, 4)), indent=2)
    r = lint_text(text, path="job.json", select=["DRA307"], context=(("claim.yaml", CLAIM),))
    [f] = [f for f in r.findings if f.rule == "DRA307"]
    assert f.fix is None


def test_no_fix_when_another_workload_uses_the_claim() -> None:
    [f] = _dra307(_job(2, 4), context=(("other.yaml", _job(1, None, name="eval")),))
    assert f.fix is None


BAD_CEL_CLAIM = CLAIM.replace("      exactly: {deviceClassName: gpu.nvidia.com}\n",
                              "      exactly:\n        deviceClassName: gpu.nvidia.com\n"
                              "        selectors:\n        - cel: {expression: \"device.driver ==\"}\n")
NO_CLASS_CLAIM = CLAIM.replace("      exactly: {deviceClassName: gpu.nvidia.com}\n", "      exactly: {count: 1}\n")


def test_no_fix_when_the_claims_own_spec_has_errors() -> None:
    for bad in (BAD_CEL_CLAIM, NO_CLASS_CLAIM):
        # the claim itself is reported at error level (so copying it into a template would copy that)
        errors = [f for f in lint_text(bad, select=["DRA1", "DRA6"]).findings if f.severity >= 3]
        assert errors, bad
        r = lint_text(_job(3, None), select=["DRA307"], context=(("claim.yaml", bad),))
        [f] = [f for f in r.findings if f.rule == "DRA307"]
        assert f.fix is None
    # the same workload with the valid claim keeps its fix
    [f] = _dra307(_job(3, None))
    assert f.fix is not None
