"""The ``_meta`` key grammar and the W3C trace-context values it carries (META-02, META-03).

Owns: checking ``_meta`` keys (prefix, name, the reserved prefixes), extension
identifiers, and the ``traceparent``/``tracestate``/``baggage`` values.  Pure
functions over strings; imports nothing from the rest of ``mcp_proto``, so any
layer may use it.  The contract of each check is in ``_grammar``'s docstring;
today's names stay importable from :mod:`mcp_proto` too.
"""

from ._grammar import (
    RESERVED_META_KEYS,
    MetaKeyError,
    check_baggage,
    check_extension_id,
    check_meta,
    check_meta_key,
    check_traceparent,
    check_tracestate,
    is_reserved_meta_key,
    is_valid_meta_key,
    split_meta_key,
)

__all__ = [
    "RESERVED_META_KEYS",
    "MetaKeyError",
    "check_baggage",
    "check_extension_id",
    "check_meta",
    "check_meta_key",
    "check_traceparent",
    "check_tracestate",
    "is_reserved_meta_key",
    "is_valid_meta_key",
    "split_meta_key",
]
