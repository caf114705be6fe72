"""Runtime values of the DRA CEL environment that Python has no native type for.

CEL `int` is a Python ``int`` kept in the int64 range, `double` a ``float``, `string` a ``str``,
`bytes` ``bytes``, `null` ``None``, lists are ``list`` and maps ``dict``. The rest lives here:
`uint` (a distinct numeric type in CEL), optionals, type values, and the Kubernetes `Quantity` and
`Semver` objects with the same parsing and comparison rules as ``resource.ParseQuantity`` and the
strict semver parser Kubernetes uses.
"""

from __future__ import annotations

import re
from decimal import Decimal
from functools import total_ordering
from typing import Any

from dralint.knowledge.quantity import CONTEXT as QUANTITY_CONTEXT
from dralint.knowledge.quantity import QuantityError, parse_quantity

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
UINT64_MAX = 2**64 - 1


class CelError(Exception):
    """A CEL evaluation error (what cel-go returns as an error value)."""


class CelInternalError(CelError):
    """A Python exception inside dralint's CEL code (a dralint bug, not a CEL error): still a CelError
    so that a caller evaluating selectors reports it instead of crashing, but distinguishable (the
    fuzzers look for it)."""

    def __init__(self, phase: str, cause: BaseException) -> None:
        super().__init__(internal_message(phase, cause))
        self.phase = phase
        self.cause = cause


def internal_message(phase: str, cause: BaseException) -> str:
    """What to tell the user, with where it failed (the innermost frame: enough for a bug report,
    and what the fuzzers use to tell two bugs apart)."""
    import os
    import traceback

    frames = traceback.extract_tb(cause.__traceback__)
    where = f" at {os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames else ""
    detail = str(cause)[:200]
    return (f"could not be checked: dralint's CEL {phase} failed on it ({type(cause).__name__}{where}"
            f"{': ' + detail if detail else ''}); this is a bug in dralint, please report it")


class UInt(int):
    """CEL ``uint``: compares equal to ints of the same value, but is its own type."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"{int(self)}u"


class Optional:
    """A CEL ``optional_type(T)`` value."""

    __slots__ = ("value",)
    NONE: Optional

    def __init__(self, value: Any = None) -> None:
        self.value = value

    @property
    def has_value(self) -> bool:
        return self is not Optional.NONE

    def __repr__(self) -> str:
        return f"optional.of({self.value!r})" if self.has_value else "optional.none()"


Optional.NONE = Optional.__new__(Optional)
Optional.NONE.value = None


class TypeValue:
    """A CEL type used as a value (``type(x)``, ``int``, ``string`` ...)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TypeValue) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("type", self.name))

    def __repr__(self) -> str:
        return self.name


# ----------------------------------------------------------------------------------------------
# Kubernetes resource.Quantity

#: the parser and the arithmetic context are shared with the driver checks (`dralint.knowledge.quantity`)
_CTX = QUANTITY_CONTEXT


@total_ordering
class Quantity:
    """A Kubernetes ``resource.Quantity`` (exact decimal value)."""

    __slots__ = ("text", "value")

    def __init__(self, value: Decimal, text: str | None = None) -> None:
        self.value = value
        self.text = text if text is not None else _format_decimal(value)

    @classmethod
    def parse(cls, text: str) -> Quantity:
        """Parse like ``resource.ParseQuantity``; raises CelError for an invalid quantity."""
        try:
            return cls(parse_quantity(text), text)
        except QuantityError as e:
            raise CelError(str(e)) from e

    @classmethod
    def valid(cls, text: str) -> bool:
        try:
            cls.parse(text)
        except CelError:
            return False
        return True

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and self.value == other.value

    def __lt__(self, other: Quantity) -> bool:
        return self.value < other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def compare(self, other: Quantity) -> int:
        return (self.value > other.value) - (self.value < other.value)

    def add(self, other: Quantity | int) -> Quantity:
        o = other.value if isinstance(other, Quantity) else Decimal(other)
        return Quantity(_CTX.add(self.value, o))

    def sub(self, other: Quantity | int) -> Quantity:
        o = other.value if isinstance(other, Quantity) else Decimal(other)
        return Quantity(_CTX.subtract(self.value, o))

    def mul(self, n: int) -> Quantity:
        return Quantity(_CTX.multiply(self.value, Decimal(n)))

    def div(self, n: int, places: int = 4, integer: bool = False) -> Quantity:
        if n == 0:
            raise CelError("division by zero error")
        if integer:
            return Quantity(_CTX.divide_int(self.value, Decimal(n)))
        if not 0 <= places <= 10:
            raise CelError(f"the valid range for roundVal is 0 to 10 but {places} was passed")
        q = _CTX.divide(self.value, Decimal(n))
        return Quantity(q.quantize(Decimal(1).scaleb(-places), context=_CTX))

    def is_integer(self) -> bool:
        v = self.value
        return v == v.to_integral_value() and INT64_MIN <= v <= INT64_MAX

    def as_integer(self) -> int:
        if not self.is_integer():
            raise CelError("cannot convert value to integer")
        return int(self.value)

    def as_float(self) -> float:
        try:
            return float(self.value)
        except (OverflowError, ValueError):
            return float("inf") if self.value > 0 else float("-inf")

    def sign(self) -> int:
        return (self.value > 0) - (self.value < 0)

    def __repr__(self) -> str:
        return f"quantity({self.text!r})"


def _format_decimal(v: Decimal) -> str:
    s = format(v.normalize(_CTX), "f") if v == v else "NaN"
    return s


# ----------------------------------------------------------------------------------------------
# semantic versions (strict, as Kubernetes' semver library; optional normalisation)

_NUM = r"(0|[1-9][0-9]*)"
_PRE_ID = r"(?:0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)"
_SEMVER_RE = re.compile(
    rf"^{_NUM}\.{_NUM}\.{_NUM}(?:-({_PRE_ID}(?:\.{_PRE_ID})*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)
_LOOSE_RE = re.compile(r"^v?([0-9]+)(?:\.([0-9]+))?(?:\.([0-9]+))?((?:[-+].*)?)$")


@total_ordering
class Semver:
    __slots__ = ("build", "major", "minor", "patch", "pre", "text")

    def __init__(self, major: int, minor: int, patch: int, pre: tuple[str | int, ...] = (), build: str = "",
                 text: str = "") -> None:
        self.major, self.minor, self.patch, self.pre, self.build = major, minor, patch, pre, build
        self.text = text or f"{major}.{minor}.{patch}"

    @classmethod
    def parse(cls, text: str, normalize: bool = False) -> Semver:
        if not isinstance(text, str) or len(text) > 256:
            raise CelError("invalid semver")
        src = text
        if normalize:
            lm = _LOOSE_RE.match(text)
            if lm:
                core = ".".join(str(int(x or "0")) for x in lm.group(1, 2, 3))
                src = core + lm.group(4)
        m = _SEMVER_RE.match(src)
        if not m:
            raise CelError(f"invalid semver: {text!r} (expected MAJOR.MINOR.PATCH, e.g. \"1.2.3\")")
        major, minor, patch = (int(x) for x in m.group(1, 2, 3))
        if max(major, minor, patch) > UINT64_MAX:
            raise CelError("invalid semver: number out of range")
        pre: tuple[str | int, ...] = ()
        if m.group(4):
            pre = tuple(int(p) if p.isascii() and p.isdigit() else p for p in m.group(4).split("."))
        return cls(major, minor, patch, pre, m.group(5) or "", text)

    @classmethod
    def valid(cls, text: str, normalize: bool = False) -> bool:
        try:
            cls.parse(text, normalize)
        except CelError:
            return False
        return True

    def _key(self) -> tuple[Any, ...]:
        # a version without pre-release sorts after any pre-release of the same core version;
        # numeric identifiers sort before alphanumeric ones
        pre = tuple((0, p, "") if isinstance(p, int) else (1, 0, p) for p in self.pre)
        return (self.major, self.minor, self.patch, 0 if self.pre else 1, pre)

    def compare(self, other: Semver) -> int:
        a, b = self._key(), other._key()
        return (a > b) - (a < b)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Semver) and self._key() == other._key()

    def __lt__(self, other: Semver) -> bool:
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"semver({self.text!r})"
