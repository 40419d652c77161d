"""The 2025-11-25 (``initialize``-era) message model: same generator, same strict codec.

``mcp_proto.types.legacy`` names every definition of the 2025-11-25 ``schema.json``
(``tests/test_generated.py`` checks the files are current and complete); these tests
pin what the codec does with the definitions 2026-07-28 does not have.
"""

from __future__ import annotations

import pytest

from mcp_proto import DecodeError, structure, unstructure
from mcp_proto.types import legacy as L  # noqa: N812

INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"sampling": {}, "roots": {"listChanged": True}},
    "clientInfo": {"name": "c", "version": "1"},
}


def test_initialize_params_round_trip_byte_for_byte() -> None:
    """LEG-01: ``initialize`` carries protocolVersion, capabilities and clientInfo."""
    params = structure(INIT, L.InitializeRequestParams)
    assert params.protocol_version == "2025-11-25"
    assert params.capabilities.roots is not None and params.capabilities.roots.list_changed
    assert unstructure(params) == INIT


@pytest.mark.parametrize("missing", ["protocolVersion", "capabilities", "clientInfo"])
def test_initialize_params_without_a_required_field_are_refused(missing: str) -> None:
    """LEG-01: each of the three is required; the error points at the field."""
    body = {k: v for k, v in INIT.items() if k != missing}
    with pytest.raises(DecodeError) as e:
        structure(body, L.InitializeRequestParams)
    assert e.value.code == -32602
    assert f"/{missing}" in str(e.value)


def test_initialize_result_has_no_result_type() -> None:
    """LEG-02: a legacy result has no ``resultType``; an unknown key is kept in ``extra``."""
    result = L.InitializeResult(
        protocol_version="2025-11-25",
        capabilities=L.ServerCapabilities(),
        server_info=L.Implementation(name="s", version="1"),
    )
    body = unstructure(result)
    assert body == {
        "capabilities": {},
        "protocolVersion": "2025-11-25",
        "serverInfo": {"name": "s", "version": "1"},
    }
    assert "result_type" not in set(L.InitializeResult.__slots__)


def test_set_level_refuses_an_unknown_level() -> None:
    with pytest.raises(DecodeError):
        structure({"level": "loud"}, L.SetLevelRequestParams)
    assert structure({"level": "debug"}, L.SetLevelRequestParams).level == "debug"


def test_task_ttl_null_is_a_value_and_required() -> None:
    """``Task.ttl`` is ``integer | null`` and required: null is kept, absence refused."""
    body = {
        "taskId": "t",
        "status": "working",
        "createdAt": "2025-11-25T00:00:00Z",
        "lastUpdatedAt": "2025-11-25T00:00:00Z",
        "ttl": None,
    }
    task = structure(body, L.Task)
    assert task.ttl is None
    assert unstructure(task) == body
    assert unstructure(structure({**body, "ttl": 60000}, L.Task))["ttl"] == 60000
    with pytest.raises(DecodeError, match="/ttl: missing"):
        structure({k: v for k, v in body.items() if k != "ttl"}, L.Task)
    with pytest.raises(DecodeError, match="/ttl: expected an integer"):
        structure({**body, "ttl": "1"}, L.Task)


def test_all_of_definitions_are_merged_classes() -> None:
    """``GetTaskResult`` is ``allOf [Result, Task]`` in the schema: one class with both."""
    wires = {f.metadata.get("wire") for f in L.GetTaskResult.__attrs_attrs__}
    assert {"taskId", "status", "ttl", "_meta"} <= wires
