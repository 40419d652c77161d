"""The method registry and the error-code helpers (ERR-xx, MRTR-03, CACHE-01, PAGE-03)."""

from __future__ import annotations

import attrs
import pytest

import mcp_proto
from mcp_proto import METHODS, Kind, types


def test_twenty_one_methods_in_three_kinds() -> None:
    kinds = [info.kind for info in METHODS.values()]
    assert len(METHODS) == 21
    assert (kinds.count(Kind.REQUEST), kinds.count(Kind.NOTIFICATION)) == (10, 8)
    assert kinds.count(Kind.INPUT_REQUEST) == 3


@pytest.mark.parametrize("method", sorted(METHODS))
def test_each_entry_names_the_class_that_carries_it(method: str) -> None:
    info = METHODS[method]
    (field,) = [f for f in attrs.fields(info.message_type) if f.name == "method"]
    assert field.default == method
    if info.params_type is not None:
        hints = attrs.fields_dict(info.message_type)
        assert "params" in hints


def test_input_required_only_where_mrtr_allows_it() -> None:
    """MRTR-03."""
    allowed = {m for m, i in METHODS.items() if i.input_required_allowed}
    assert allowed == {"tools/call", "prompts/get", "resources/read"}


def test_cacheable_and_paginated_methods() -> None:
    """CACHE-01 and PAGE-03."""
    assert {m for m, i in METHODS.items() if i.cacheable} == {
        "server/discover", "tools/list", "prompts/list", "resources/list",
        "resources/templates/list", "resources/read",
    }  # fmt: skip
    assert {m for m, i in METHODS.items() if i.paginated} == {
        "tools/list", "prompts/list", "resources/list", "resources/templates/list",
    }  # fmt: skip


def test_mcp_name_sources() -> None:
    """HTTP: Mcp-Name mirrors params.name or params.uri."""
    names = {m: i.name_field for m, i in METHODS.items() if i.name_field}
    assert names == {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


def test_removed_methods_are_not_in_the_registry() -> None:
    assert mcp_proto.REMOVED_METHODS.isdisjoint(METHODS)
    assert {"initialize", "ping", "logging/setLevel", "resources/subscribe"} <= (
        mcp_proto.REMOVED_METHODS
    )
    assert mcp_proto.method_info("ping") is None
    assert mcp_proto.method_info("tools/call") is METHODS["tools/call"]


def test_error_codes_are_the_specs() -> None:
    """ERR-01..ERR-04: only the defined codes; none in -32000..-32019 but the legacy -32002."""
    codes = {
        mcp_proto.PARSE_ERROR: -32700, mcp_proto.INVALID_REQUEST: -32600,
        mcp_proto.METHOD_NOT_FOUND: -32601, mcp_proto.INVALID_PARAMS: -32602,
        mcp_proto.INTERNAL_ERROR: -32603, mcp_proto.HEADER_MISMATCH: -32020,
        mcp_proto.MISSING_REQUIRED_CLIENT_CAPABILITY: -32021,
        mcp_proto.UNSUPPORTED_PROTOCOL_VERSION: -32022,
    }  # fmt: skip
    assert all(k == v for k, v in codes.items())


def test_unsupported_protocol_version_data() -> None:
    """VER-02 / ERR-10: data.supported and data.requested."""
    err = mcp_proto.unsupported_protocol_version("2024-01-01", ["2026-07-28"])
    assert err.code == -32022
    assert err.data == {"supported": ["2026-07-28"], "requested": "2024-01-01"}
    body = mcp_proto.unstructure(types.JSONRPCErrorResponse(id=3, error=err))
    assert mcp_proto.structure(body, types.UnsupportedProtocolVersionError).error.code == -32022


def test_missing_capability_data() -> None:
    """META-10 / ERR-09: data.requiredCapabilities is a ClientCapabilities object."""
    caps = types.ClientCapabilities(elicitation=types.ClientCapabilitiesElicitation())
    err = mcp_proto.missing_required_client_capability(caps)
    assert err.code == -32021
    assert err.data == {"requiredCapabilities": {"elicitation": {}}}


def test_other_builders_and_decode_error_reply() -> None:
    assert mcp_proto.method_not_found("ping").code == -32601
    assert mcp_proto.invalid_params("bad", data={"x": 1}).data == {"x": 1}
    assert mcp_proto.header_mismatch("Mcp-Name").code == -32020
    try:
        mcp_proto.decode_message(b'{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{}}')
    except mcp_proto.DecodeError as e:
        reply = e.error_response()
        assert reply.id == "a" and reply.error.code == -32602
        assert "DecodeError(code=-32602" in repr(e)
    else:
        raise AssertionError("params without _meta must fail")
