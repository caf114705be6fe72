"""Rules read other files only through the index's recording queries: the results cache relies on it.

`Index.reads` is what a stored result is checked against (`dralint.engine.results`); a rule that
walked `index.objects` itself would depend on files the cache does not look at."""

from __future__ import annotations

import re
from pathlib import Path

from dralint.inputs.index import ALL_OBJECTS, ALL_VALUES, Index
from dralint.inputs.load import load_bytes

PKG = Path(__file__).resolve().parent.parent / "dralint"
#: the code that runs inside rules: checks and what they call to look things up
RULE_CODE = [PKG / "checks", PKG / "cel", PKG / "knowledge", PKG / "inputs" / "dra.py", PKG / "suggest.py"]
DIRECT = re.compile(r"\bindex\.(objects|values|files|_by_kind|_by_kind_name|_values_by_file)\b")


def test_rule_code_never_reads_the_index_lists_directly() -> None:
    offenders = []
    for root in RULE_CODE:
        for path in [root] if root.is_file() else sorted(root.rglob("*.py")):
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if DIRECT.search(line):
                    offenders.append(f"{path.relative_to(PKG)}:{n}: {line.strip()}")
    assert offenders == []


def test_the_scan_sees_a_direct_read() -> None:
    assert DIRECT.search("for o in ctx.index.objects:") and DIRECT.search("x = index.values[0]")
    assert not DIRECT.search("ctx.index.all_objects()") and not DIRECT.search("index.values_in(sf)")


def test_queries_record_what_they_asked() -> None:
    sf = load_bytes("a.yaml", b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\n[1, 2]\n")
    index = Index()
    index.add_file(sf)
    assert index.reads == set()
    assert index.values_in(sf) and index.reads == set()  # a file's own documents depend on nothing else
    list(index.of_kind("DeviceClass", "ResourceSlice"))
    index.find("ResourceClaim", "c", "ns")
    index.find_any_namespace("Namespace", "ns")
    assert index.reads == {"DeviceClass", "ResourceSlice", "ResourceClaim", "Namespace"}
    assert [o.name for o in index.all_objects()] == ["x"] and ALL_OBJECTS in index.reads
    assert len(index.all_values()) == 1 and ALL_VALUES in index.reads
