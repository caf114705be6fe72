"""dralint against what the Kubernetes 1.35 API server itself says about the same objects.

`../shared/conformance/apiserver-1.35/objects.jsonl` records, for each object under `objects/`,
the verdict of the published Kubernetes Go modules: `reject` (decode, ObjectMeta, declarative
validation or the DRA CEL compiler refuse it), `drop` (the create strategy clears a field of a
gate that is off by default, then accepts the rest) or `accept`. dralint on
`--kubernetes-version 1.35` must agree: an error-level DRA0xx/DRA1xx/DRA6xx finding on every
reject, DRA501 and no such error on every drop, no such error on every accept.

`EXPECTED` lists the objects where dralint knowingly disagrees, each with the reason. An entry
that starts agreeing fails the test too, so the list can only shrink.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from dralint.model import Finding, Severity

from .conftest import SHARED, lint_text

BANK = SHARED / "conformance" / "apiserver-1.35"
requires_bank = pytest.mark.skipif(not (BANK / "objects.jsonl").is_file(),
                                   reason=f"API-server verdict bank not found at {BANK}")

#: what the API server does not check but the NVIDIA driver does (its webhook, or kubelet's
#: NodePrepareResources): the server stores opaque parameters unread, so it accepts what the driver
#: later refuses and the pod never starts. dralint reports the driver's verdict on purpose.
DRIVER = "opaque parameters the API server stores unread; the NVIDIA driver rejects them (DRA106)"
#: the bank did not run the hand-written `pkg/apis/resource/validation` checks (its README says so),
#: and these objects break one of them; the real API server rejects them
HANDWRITTEN = "bank skips hand-written validation, which rejects this object (DRA105)"

EXPECTED: dict[str, str] = {
    "0021": DRIVER,
    "0148": DRIVER,
    "0149": DRIVER,
    "0150": DRIVER,
    "0151": DRIVER,
    "0238": DRIVER,
    "0198": HANDWRITTEN,
}


def _verdicts() -> list[dict[str, Any]]:
    if not (BANK / "objects.jsonl").is_file():
        return []
    with (BANK / "objects.jsonl").open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


@dataclass
class Outcome:
    entry: dict[str, Any]
    findings: list[Finding]

    @property
    def errors(self) -> list[Finding]:
        # the families the API server's own verdict speaks for: input, API conformance, CEL
        return [f for f in self.findings if f.severity is Severity.ERROR and f.rule[3] in "016"]

    @property
    def agrees(self) -> bool:
        verdict = self.entry["verdict"]
        if verdict == "reject":
            return bool(self.errors)
        if verdict == "drop":
            return not self.errors and any(f.rule == "DRA501" for f in self.findings)
        return not self.errors

    def describe(self) -> str:
        got = ", ".join(f"{f.rule}[{f.severity.name.lower()}] {f.message[:80]}" for f in self.findings) or "no findings"
        return f"{self.entry['file']} ({self.entry['mutation']}, {self.entry['verdict']}): {got}"


_CACHE: dict[str, Outcome] = {}


def outcome(entry: dict[str, Any]) -> Outcome:
    name = entry["file"]
    if name not in _CACHE:
        text = (BANK / name).read_text(encoding="utf-8")
        result = lint_text(text, path=name, **{"kubernetes-version": "1.35"})
        assert result.internal_errors == [], result.internal_errors
        _CACHE[name] = Outcome(entry, result.findings)
    return _CACHE[name]


def _stem(entry: dict[str, Any]) -> str:
    return Path(entry["file"]).stem


VERDICTS = _verdicts()


@requires_bank
@pytest.mark.parametrize("entry", VERDICTS, ids=_stem)
def test_object_matches_api_server(entry: dict[str, Any]) -> None:
    got = outcome(entry)
    reason = EXPECTED.get(_stem(entry))
    if reason is None:
        assert got.agrees, got.describe()
    else:
        assert not got.agrees, f"now agrees, drop it from EXPECTED ({reason}): {got.describe()}"


@requires_bank
def test_expected_disagreements_name_real_objects() -> None:
    assert set(EXPECTED) <= {_stem(e) for e in VERDICTS}


@requires_bank
def test_agreement_figure(capsys: pytest.CaptureFixture[str]) -> None:
    agreeing = sum(outcome(e).agrees for e in VERDICTS)
    # the figure the issue asks for; -s shows it
    with capsys.disabled():
        print(f"\nverdict bank: {agreeing}/{len(VERDICTS)} objects agree with the API server")
    assert agreeing == len(VERDICTS) - len(EXPECTED)
