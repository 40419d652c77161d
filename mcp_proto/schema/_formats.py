"""``format`` assertions, used only when a validator is compiled with ``formats=True``.

In 2020-12 ``format`` is an annotation by default, so a plain ``Validator`` ignores it. With
``formats=True`` these formats are checked (unknown formats stay annotations): ``date``,
``time``, ``date-time`` (RFC 3339), ``email`` (one ``@``, no spaces, non-empty parts),
``uri`` (a scheme and no spaces), ``uri-reference``, ``uuid``, ``ipv4``, ``ipv6``,
``hostname``. The elicitation helpers check the four formats elicitation allows (ELIC-11).
"""

from __future__ import annotations

import datetime
import ipaddress
import re
from collections.abc import Callable

__all__ = ["FORMATS"]

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}", re.ASCII)
_TIME = re.compile(r"(\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", re.ASCII)
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[^\s]*", re.ASCII)
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_LABEL = re.compile(r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?", re.ASCII)


def _date(value: str) -> bool:
    if _DATE.fullmatch(value) is None:
        return False
    try:
        datetime.date.fromisoformat(value)
    except ValueError:
        return False
    return True


def _time(value: str) -> bool:
    m = _TIME.fullmatch(value)
    if m is None:
        return False
    hour, minute, second = int(m.group(1)), int(m.group(2)), int(m.group(3))
    offset = m.group(5)
    if offset not in ("Z", "z") and (int(offset[1:3]) > 23 or int(offset[4:6]) > 59):
        return False
    return hour < 24 and minute < 60 and second < 61  # a leap second is allowed


def _date_time(value: str) -> bool:
    date, sep, time_part = value.partition("T") if "T" in value else value.partition("t")
    return bool(sep) and _date(date) and _time(time_part)


def _email(value: str) -> bool:
    local, at, domain = value.rpartition("@")
    return bool(at and local and domain) and not any(c.isspace() for c in value)


def _uri(value: str) -> bool:
    return _URI.fullmatch(value) is not None


def _uri_reference(value: str) -> bool:
    return not any(c.isspace() for c in value)


def _ip(version: int) -> Callable[[str], bool]:
    def check(value: str) -> bool:
        try:
            address = ipaddress.ip_address(value)
        except ValueError:
            return False
        return address.version == version and "%" not in value

    return check


def _hostname(value: str) -> bool:
    name = value[:-1] if value.endswith(".") else value
    return 0 < len(name) <= 253 and all(_LABEL.fullmatch(p) for p in name.split("."))


FORMATS: dict[str, Callable[[str], bool]] = {
    "date": _date,
    "time": _time,
    "date-time": _date_time,
    "email": _email,
    "uri": _uri,
    "uri-reference": _uri_reference,
    "uuid": lambda v: _UUID.fullmatch(v) is not None,
    "ipv4": _ip(4),
    "ipv6": _ip(6),
    "hostname": _hostname,
}
