"""`fingerprint` stands in for `same` when migrate looks for an existing template with the spec it
would write: two values get equal fingerprints exactly when `same` calls them equal."""

from __future__ import annotations

import datetime
import math
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from dralint.inputs.load import load_bytes
from dralint.model import fingerprint, same

scalars = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([0.0, 1.0, 1.5, -2.0]),
                    st.sampled_from(["", "a", "1", "true", "gpu.nvidia.com"]))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["a", "b", "count", "1"]), inner, max_size=3)),
    max_leaves=12)


@given(values, values)
def test_equal_fingerprints_exactly_when_same(a: Any, b: Any) -> None:
    fa, fb = fingerprint(a), fingerprint(b)
    assert fa is not None and fb is not None
    assert (fa == fb) == same(a, b)


def test_yaml_tells_true_from_one_and_one_from_one_point_zero() -> None:
    assert fingerprint(True) != fingerprint(1) and fingerprint(1) != fingerprint(1.0)
    assert fingerprint({"a": [1, "x"]}) == fingerprint({"a": [1, "x"]})
    assert fingerprint({"a": 1, "b": 2}) == fingerprint({"b": 2, "a": 1})  # `same` ignores key order too


def test_located_data_fingerprints_like_plain_data() -> None:
    sf = load_bytes("a.yaml", b"spec:\n  devices:\n    requests:\n    - name: gpu\n      count: 2\n")
    plain = {"spec": {"devices": {"requests": [{"name": "gpu", "count": 2}]}}}
    assert fingerprint(sf.documents[0].data) == fingerprint(plain)


def test_what_cannot_be_fingerprinted_is_left_to_same() -> None:
    assert fingerprint(math.nan) is None and fingerprint({"a": [math.nan]}) is None
    assert fingerprint(datetime.date(2026, 1, 1)) is None
    assert fingerprint((1, 2)) is None
