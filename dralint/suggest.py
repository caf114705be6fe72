"""Did-you-mean hints: the known name closest to a misspelt one, for every hint dralint gives.

Field names in schemas, enum values, CEL identifiers and functions, attribute domains and names,
driver feature gates, config kinds and fields, and the claims and templates of a repository all go
through `closest`. The similarity is rapidfuzz's indel ratio (2 × longest common subsequence / total
length, in C: a large repository holds thousands of names per namespace). It differs from difflib's
ratio only in being exact where difflib's block matching is greedy (``rqecsts`` is 80 % like
``requests``; difflib finds 67 %), and a tie goes to the first option given.
"""

from __future__ import annotations

from collections.abc import Iterable


def closest(word: str, options: Iterable[str], cutoff: float = 0.75) -> str | None:
    """The option most similar to ``word`` with a similarity of at least ``cutoff`` (0..1), or None."""
    from rapidfuzz import fuzz, process  # imported on the first hint: most runs never need it

    hit = process.extractOne(word, options, scorer=fuzz.ratio, score_cutoff=cutoff * 100)
    return None if hit is None else str(hit[0])


def within_edits(word: str, other: str, limit: int) -> bool:
    """``word`` turns into ``other`` with at most ``limit`` insertions, deletions, substitutions or
    swaps of neighbours (Damerau-Levenshtein): a typo, where `closest` only ranks similarity."""
    from rapidfuzz.distance import DamerauLevenshtein

    return int(DamerauLevenshtein.distance(word, other, score_cutoff=limit + 1)) <= limit
