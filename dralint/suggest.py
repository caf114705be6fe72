"""Did-you-mean hints: the known name closest to a misspelt one.

Hints are attached to findings such as "ResourceClaimTemplate `x` is not defined", and a large
repository holds thousands of names per namespace; the similarity runs in C (rapidfuzz's indel
ratio, the same measure as difflib's ratio but without its per-pair Python overhead).
"""

from __future__ import annotations

from collections.abc import Iterable


def closest(word: str, options: Iterable[str], cutoff: float = 0.75) -> str | None:
    """The option most similar to ``word`` with a similarity of at least ``cutoff`` (0..1), or None."""
    from rapidfuzz import fuzz, process  # imported on the first hint: most runs never need it

    hit = process.extractOne(word, options, scorer=fuzz.ratio, score_cutoff=cutoff * 100)
    return None if hit is None else str(hit[0])
