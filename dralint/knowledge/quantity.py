"""Kubernetes quantities (``resource.Quantity``): the one parser behind every place dralint reads one.

`parse_quantity` reads a quantity the way ``resource.ParseQuantity`` does — decimal and binary SI
suffixes, exponents, sub-nano precision rounded up, binary-SI values capped at the int64 maximum — as
an exact `Decimal`. The CEL ``quantity()`` library (`dralint.cel.values.Quantity`) and the checks of
driver parameters (`dralint.knowledge.drivers.parse_quantity`) both use it, so a value means the same
in a selector and in an opaque config. Texts longer than 256 characters and exponents beyond 100,000
are refused: a hostile manifest must not make dralint compute a number with a billion digits.
"""

from __future__ import annotations

import re
from decimal import ROUND_UP, Context, Decimal, InvalidOperation

_QUANTITY_RE = re.compile(
    r"^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$"
)
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
#: arithmetic on quantities is exact in Kubernetes (inf.Dec); a wide context keeps it exact for any
#: value a manifest can reasonably hold while bounding the work a hostile literal can cause
CONTEXT = Context(prec=120, Emax=999_999_999, Emin=-999_999_999)
_NANO = Decimal("1e-9")
_INT64_MAX = 2**63 - 1


class QuantityError(ValueError):
    """Not a valid quantity; the message is the one the Kubernetes CEL library gives."""


def parse_quantity(text: str) -> Decimal:
    """Parse like ``resource.ParseQuantity``; raises `QuantityError` for an invalid quantity."""
    if not isinstance(text, str) or len(text) > 256:
        raise QuantityError("quantities must match the regular expression "
                            f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' (got {text!r})")
    m = _QUANTITY_RE.match(text)
    if not m:
        raise QuantityError("quantities must match the regular expression "
                            "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    number, suffix = m.group(1), m.group(2) or ""
    try:
        value = Decimal(number)
        if suffix in _BINARY:
            value = CONTEXT.multiply(value, Decimal(_BINARY[suffix]))
            # Kubernetes caps binary-SI quantities at the int64 maximum
            if value > _INT64_MAX:
                value = Decimal(_INT64_MAX)
        elif suffix in _DECIMAL:
            value = value.scaleb(_DECIMAL[suffix], CONTEXT)
        else:
            exp = int(suffix[1:])
            if abs(exp) > 100_000:
                raise QuantityError("quantity exponent out of range")
            value = value.scaleb(exp, CONTEXT)
        if value.as_tuple().exponent < -9:  # type: ignore[operator]
            # sub-nano precision is rounded up, away from zero
            value = value.quantize(_NANO, rounding=ROUND_UP, context=CONTEXT)
    except QuantityError:
        raise
    except (InvalidOperation, ValueError) as e:
        raise QuantityError(f"invalid quantity {text!r}") from e
    return value
