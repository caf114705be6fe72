"""CEL timestamps and durations as cel-go has them: Go ``time`` semantics in integer nanoseconds.

- timestamps span 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59.999999999Z (the protobuf
  ``Timestamp`` range cel-go enforces); anything outside is a "range" error, never a Python
  exception;
- durations are Go ``time.Duration`` values: int64 nanoseconds, parsed like ``time.ParseDuration``
  (exact integer arithmetic, units ns us µs μs ms s m h), printed like cel-go (seconds as the
  shortest decimal, then ``s``);
- time-zone arguments of the getters are IANA names, ``UTC``, or ``[+-]HH:MM`` (the sign may be
  left out, as cel-go allows).
"""

from __future__ import annotations

import datetime
import re
from decimal import Decimal
from typing import Any

from dralint.cel.values import INT64_MAX, INT64_MIN, CelError

NS = 10**9
#: seconds of 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z since the Unix epoch
TS_MIN_S = -62135596800
TS_MAX_S = 253402300799
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


class Duration:
    __slots__ = ("ns",)

    def __init__(self, ns: int) -> None:
        self.ns = ns

    def __eq__(self, o: object) -> bool:
        return isinstance(o, Duration) and o.ns == self.ns

    def __hash__(self) -> int:
        return hash(("d", self.ns))


class Timestamp:
    __slots__ = ("ns",)

    def __init__(self, ns: int) -> None:
        self.ns = ns

    def __eq__(self, o: object) -> bool:
        return isinstance(o, Timestamp) and o.ns == self.ns

    def __hash__(self) -> int:
        return hash(("t", self.ns))


def duration(ns: int) -> Duration:
    if not INT64_MIN <= ns <= INT64_MAX:
        raise CelError("duration out of range")
    return Duration(ns)


def timestamp(ns: int) -> Timestamp:
    if not TS_MIN_S * NS <= ns <= TS_MAX_S * NS + NS - 1:
        raise CelError("timestamp out of range")
    return Timestamp(ns)


def timestamp_from_seconds(s: int) -> Timestamp:
    return timestamp(s * NS)


_DUR_UNITS = {"ns": 1, "us": 10**3, "µs": 10**3, "μs": 10**3, "ms": 10**6, "s": NS, "m": 60 * NS, "h": 3600 * NS}
_DUR_PART = re.compile(r"([0-9]*)(?:\.([0-9]*))?(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(s: str) -> Duration:
    """Go's ``time.ParseDuration``: ``[-+]?([0-9]*(\\.[0-9]*)?unit)+`` or ``0``."""
    text = s
    sign = 1
    if text and text[0] in "+-":
        sign = -1 if text[0] == "-" else 1
        text = text[1:]
    if text == "0":
        return Duration(0)
    if not text:
        raise CelError(f"invalid duration: {s!r}")
    pos, total = 0, 0
    while pos < len(text):
        m = _DUR_PART.match(text, pos)
        if not m or not (m.group(1) or m.group(2)):
            raise CelError(f"invalid duration: {s!r}")
        unit = _DUR_UNITS[m.group(3)]
        frac = m.group(2) or ""
        total += int(m.group(1) or "0") * unit + (int(frac) * unit // 10 ** len(frac) if frac else 0)
        if total > 2**63:
            raise CelError(f"invalid duration: {s!r} (out of range)")
        pos = m.end()
    return duration(sign * total)


_TS_RE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]{1,9})?"
                    r"([Zz]|[+-][0-9]{2}:[0-9]{2})")


def parse_timestamp(s: str) -> Timestamp:
    """RFC 3339 as Go's ``time.Parse(time.RFC3339, s)`` reads it, within the protobuf range."""
    m = _TS_RE.fullmatch(s)
    if not m:
        raise CelError(f"invalid timestamp: {s!r}")
    y, mo, d, h, mi, sec = (int(x) for x in m.group(1, 2, 3, 4, 5, 6))
    if y == 0:
        raise CelError(f"timestamp out of range: {s!r}")
    if h > 23 or mi > 59 or sec > 59:
        raise CelError(f"invalid timestamp: {s!r}")
    try:
        days = datetime.date(y, mo, d).toordinal() - datetime.date(1970, 1, 1).toordinal()
    except ValueError:
        raise CelError(f"invalid timestamp: {s!r}") from None
    zone = m.group(8)
    offset = 0
    if zone not in ("Z", "z"):
        zh, zm = int(zone[1:3]), int(zone[4:6])
        if zh > 23 or zm > 59:
            raise CelError(f"invalid timestamp: {s!r}")
        offset = (zh * 3600 + zm * 60) * (-1 if zone[0] == "-" else 1)
    secs = days * 86400 + h * 3600 + mi * 60 + sec - offset
    frac = int((m.group(7) or ".0")[1:].ljust(9, "0"))
    return timestamp(secs * NS + frac)


def format_timestamp(ts: Timestamp) -> str:
    """Go's RFC 3339 with nanoseconds in UTC: the fraction without trailing zeros."""
    secs, frac = divmod(ts.ns, NS)
    d = _EPOCH + datetime.timedelta(seconds=secs)
    text = d.strftime("%Y-%m-%dT%H:%M:%S")
    if len(text) < 19:  # strftime does not pad years below 1000 on every platform
        text = f"{d.year:04d}" + text[text.index("-"):]
    if frac:
        text += "." + f"{frac:09d}".rstrip("0")
    return text + "Z"


def format_duration(d: Duration) -> str:
    """cel-go: the seconds as the shortest decimal that reads back as the same float64, then ``s``."""
    secs = d.ns / NS
    text = format(Decimal(repr(secs)), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text + "s"


def zone_of(tz: Any) -> datetime.tzinfo:
    text = str(tz)
    zm = re.fullmatch(r"([+-]?)([0-9]{2}):([0-9]{2})", text)
    if zm:
        delta = datetime.timedelta(hours=int(zm.group(2)), minutes=int(zm.group(3)))
        if delta >= datetime.timedelta(days=1):
            raise CelError(f"invalid time zone {text!r}")
        return datetime.timezone(-delta if zm.group(1) == "-" else delta)
    if text == "UTC" or text == "":
        return datetime.timezone.utc
    try:
        from zoneinfo import ZoneInfo

        return ZoneInfo(text)
    except Exception:  # not a name the tz database knows, or no tz database on this machine
        raise CelError(f"unknown time zone {text!r}") from None


def _trunc(ns: int, unit: int) -> int:
    """Go converts durations to a unit by truncating toward zero."""
    q = abs(ns) // unit
    return q if ns >= 0 else -q


def part(v: Any, name: str, tz: Any = None) -> int:
    """The getters: on durations the whole hours/minutes/seconds/milliseconds, on timestamps the
    calendar fields (months, days of month and days of year from 0; days of the week from Sunday)."""
    if type(v) is Duration:
        if tz is not None:
            raise CelError(f"no such overload: {name}(duration, string)")
        unit = {"getHours": 3600 * NS, "getMinutes": 60 * NS, "getSeconds": NS, "getMilliseconds": 10**6}.get(name)
        if unit is None:
            raise CelError(f"no such overload: {name}(duration)")
        return _trunc(v.ns, unit)
    if type(v) is not Timestamp:
        raise CelError(f"no such overload: {name}({type(v).__name__})")
    zone = zone_of(tz) if tz is not None else datetime.timezone.utc
    secs, frac = divmod(v.ns, NS)
    try:
        d = (_EPOCH + datetime.timedelta(seconds=secs)).astimezone(zone)
    except (OverflowError, ValueError):
        raise CelError("timestamp out of range in that time zone") from None
    if name == "getMilliseconds":
        return frac // 10**6
    fields = {
        "getFullYear": d.year, "getMonth": d.month - 1, "getDate": d.day, "getDayOfMonth": d.day - 1,
        "getDayOfWeek": (d.weekday() + 1) % 7, "getDayOfYear": d.timetuple().tm_yday - 1, "getHours": d.hour,
        "getMinutes": d.minute, "getSeconds": d.second,
    }
    if name not in fields:
        raise CelError(f"no such overload: {name}(timestamp)")
    return fields[name]
