"""Small shared pieces of the message model."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

__all__ = ["EMPTY"]

#: The shared, immutable default of every class's ``extra`` field (unknown wire keys).
EMPTY: Mapping[str, Any] = MappingProxyType({})
