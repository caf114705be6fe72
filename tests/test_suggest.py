"""One did-you-mean for the whole program (`dralint.suggest.closest`), and what it means."""

from __future__ import annotations

import ast

from dralint.suggest import closest

from .conftest import REPO


def test_similarity_is_the_exact_indel_ratio() -> None:
    # 2 * LCS / total length: 2 * 6 / 15 = 0.8; difflib's greedy block matching gives 0.67 (no hint)
    assert closest("rqecsts", ["requests", "limits"], cutoff=0.75) == "requests"
    assert closest("rqecsts", ["requests"], cutoff=0.81) is None


def test_a_tie_goes_to_the_first_option() -> None:
    assert closest("ab", ["ac", "ad"], cutoff=0.5) == "ac"
    assert closest("ab", ["ad", "ac"], cutoff=0.5) == "ad"


def test_case_counts_and_nothing_matches_nothing() -> None:
    assert closest("GPU", ["gpu"], cutoff=0.6) is None
    assert closest("x", []) is None


def test_no_other_fuzzy_matcher_in_the_package() -> None:
    offenders = []
    for path in sorted((REPO / "dralint").rglob("*.py")):
        if path.name == "suggest.py" and path.parent.name == "dralint":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, (ast.Import, ast.ImportFrom)) else []
            module = node.module if isinstance(node, ast.ImportFrom) else None
            if (isinstance(node, ast.Attribute) and node.attr in ("get_close_matches", "extractOne")) or \
                    "rapidfuzz" in (module or "") or any(n.startswith("rapidfuzz") for n in names) or \
                    "get_close_matches" in names:
                offenders.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert not offenders, f"use dralint.suggest.closest: {offenders}"
