"""dralint's CEL compile verdicts and cost estimates against the Kubernetes 1.35 API server's.

``../shared/conformance/apiserver-1.35/cel.jsonl`` holds, per selector, what the DRA CEL compiler
of k8s.io/dynamic-resource-allocation v0.35 says at create time (compile errors, the 10 KiB limit,
the estimated cost limit of 1,000,000, and the estimated cost of accepted selectors). dralint
compiling for ``--kubernetes-version 1.35`` must accept and reject the same selectors, and its
estimate must be within 10 % of the server's, except for the known estimator gaps listed in
``COST_GAPS`` (each strict: an entry whose estimate has come within 10 % fails the test, so
that it gets removed).
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest

from dralint.cel import Environment
from tests.conftest import SHARED

BANK = SHARED / "conformance" / "apiserver-1.35" / "cel.jsonl"
pytestmark = pytest.mark.skipif(not BANK.is_file(), reason=f"API-server verdict bank not found at {BANK}")

#: expression -> why dralint's estimate is more than 10 % off the API server's (empty: every
#: expression of the bank is within 10 %; a new gap is added here with its reason)
COST_GAPS: dict[str, str] = {}


@cache
def rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in BANK.read_text().splitlines() if line.strip()]


def compiled(expr: str) -> Any:
    return Environment.for_target("1.35", {}).compile(expr)


def test_same_accept_and_reject() -> None:
    rs = rows()
    assert len(rs) > 200 and {r["ok"] for r in rs} == {True, False}
    differ = [(r["expr"], r["ok"], r["error"], [d.message for d in compiled(r["expr"]).diags])
              for r in rs if compiled(r["expr"]).ok != r["ok"]]
    assert differ == [], "\n".join(map(str, differ))


def test_the_cost_limit_rejections_are_cost_findings() -> None:
    """What the server refuses as too costly, dralint refuses with a cost diagnostic (DRA605)."""
    over = [r for r in rows() if not r["ok"] and "exceeds cost limit" in (r["error"] or "")]
    assert len(over) >= 3
    for r in over:
        assert "cost" in {d.code for d in compiled(r["expr"]).diags}, r["expr"]


def _off(r: dict[str, Any]) -> bool:
    mine, theirs = compiled(r["expr"]).cost, r["cost"]
    return mine is None or abs(mine - theirs) > 0.1 * max(theirs, 1)


def test_cost_within_ten_percent() -> None:
    accepted = [r for r in rows() if r["ok"] and r["cost"] is not None]
    off = [(r["expr"], compiled(r["expr"]).cost, r["cost"]) for r in accepted
           if r["expr"] not in COST_GAPS and _off(r)]
    assert off == [], "\n".join(map(str, off))


def test_every_cost_gap_is_still_a_gap() -> None:
    by_expr = {r["expr"]: r for r in rows()}
    assert all(e in by_expr for e in COST_GAPS)
    fixed = [e for e in COST_GAPS if not _off(by_expr[e])]
    assert fixed == [], f"within 10 % now, remove from COST_GAPS: {fixed}"


def figures() -> dict[str, object]:  # pragma: no cover - for the report
    rs = rows()
    accepted = [r for r in rs if r["ok"] and r["cost"] is not None]
    return {"selectors": len(rs), "same verdict": sum(compiled(r["expr"]).ok == r["ok"] for r in rs),
            "accepted with a cost": len(accepted), "cost within 10 %": sum(not _off(r) for r in accepted)}


if __name__ == "__main__":  # pragma: no cover
    print(figures())
