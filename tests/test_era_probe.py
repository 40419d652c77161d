"""A dual-era client's era detection (LEG-21, VER-13..17, STDIO-18/19, HTTP-42).

The rows of the versioning page's compatibility matrix that concern a dual-era client:
against a modern server (a ``DiscoverResult``, ``-32022`` with or without a version in
common: never a fallback), against a legacy one (it answers the probe with an error of
its own, any code, or stays silent: ``initialize``), and the HTTP variant (the first
modern request is the probe; a ``4xx`` without a modern error falls back).
"""

from __future__ import annotations

from itertools import count
from typing import Any

import pytest

import mcp_proto as m
from mcp_proto import types as t
from mcp_proto.types import legacy as lt

CAPS = t.ClientCapabilities(elicitation=t.ClientCapabilitiesElicitation(), extensions={"x": {}})
INFO = t.Implementation(name="probe-test", version="1")


def probe(transport: str = "stdio", **kw: Any) -> m.EraProbe:
    ids = count(1)
    return m.EraProbe(
        transport=transport,  # type: ignore[arg-type]
        next_id=lambda: next(ids),
        capabilities=CAPS,
        client_info=INFO,
        **kw,
    )


def discover_result(*versions: str) -> t.DiscoverResult:
    return t.DiscoverResult(
        supported_versions=list(versions),
        capabilities=t.ServerCapabilities(),
        ttl_ms=0,
        cache_scope="public",
    )


def initialize_result(version: str = "2025-11-25") -> Any:
    body = {
        "protocolVersion": version,
        "capabilities": {"tools": {}, "logging": {}},
        "serverInfo": {"name": "legacy-server", "version": "9"},
        "instructions": "be kind",
    }
    return m.structure(body, lt.InitializeResult)


def error(id: Any, code: int, message: str = "no", data: Any = None) -> m.ErrorResponse:
    return m.ErrorResponse(id=id, error=t.Error(code=code, message=message, data=data))


def unsupported(request: m.Request, *supported: str) -> m.VersionNotSupported:
    err = t.Error(code=m.UNSUPPORTED_PROTOCOL_VERSION, message="no")
    return m.VersionNotSupported(
        id=request.id, request=request, requested="2026-07-28", supported=supported, error=err
    )


def test_stdio18_the_probe_is_server_discover_with_our_version_in_meta() -> None:
    p = probe()
    first = p.start()
    assert isinstance(first, m.Request) and first.method == "server/discover"
    assert first.meta is not None and first.meta.protocol_version == m.LATEST_PROTOCOL_VERSION
    assert first.meta.client_info == INFO and p.pending is first and p.outcome is None


def test_ver13_a_discover_result_is_a_modern_server_at_a_version_in_common() -> None:
    p = probe()
    first = p.start()
    result = discover_result("2026-07-28", "2027-01-01")
    outcome = p.received(m.Result(id=first.id, result=result))  # type: ignore[union-attr]
    assert outcome == m.Modern(
        version="2026-07-28", supported=("2026-07-28", "2027-01-01"), discover=result
    )
    assert p.outcome is outcome and p.pending is None


def test_ver14_minus_32022_with_a_version_in_common_stays_modern() -> None:
    p = probe(versions=("2026-07-28", "2027-01-01"))
    first = p.start()
    outcome = p.received(unsupported(first, "2027-01-01", "2028-01-01"))  # type: ignore[arg-type]
    assert outcome == m.Modern(version="2027-01-01", supported=("2027-01-01", "2028-01-01"))


@pytest.mark.parametrize("how", ["discover", "-32022"])
def test_ver15_a_modern_server_with_no_version_in_common_is_never_initialized(how: str) -> None:
    """The spec's "Do not fall back to initialize": an actionable error instead."""
    p = probe()
    first = p.start()
    assert isinstance(first, m.Request)
    answer: Any = (
        m.Result(id=first.id, result=discover_result("2099-01-01"))
        if how == "discover"
        else unsupported(first, "2099-01-01")
    )
    outcome = p.received(answer)
    assert isinstance(outcome, m.Incompatible) and outcome.supported == ("2099-01-01",)
    assert "2099-01-01" in outcome.reason and "2026-07-28" in outcome.reason
    with pytest.raises(m.LocalProtocolError):
        p.timed_out()  # decided: nothing more is sent


@pytest.mark.parametrize(
    "code", [m.METHOD_NOT_FOUND, m.INVALID_PARAMS, m.INVALID_REQUEST, -32000, 1234]
)
def test_leg21_any_other_error_to_the_probe_falls_back_to_initialize(code: int) -> None:
    """The fallback keys on no error code (STDIO-19): legacy servers use their own."""
    p = probe()
    first = p.start()
    init = p.received(error(first.id, code))  # type: ignore[union-attr]
    assert isinstance(init, m.Request) and init.method == "initialize"
    assert init.id != first.id  # type: ignore[union-attr]
    params = init.params
    assert params.protocol_version == "2025-11-25" and params.client_info.name == "probe-test"
    wire = m.unstructure(params.capabilities)
    assert wire == {"elicitation": {}}  # what 2025-11-25 knows of our capabilities


def test_leg21_a_silent_probe_falls_back_and_a_silent_initialize_gives_up() -> None:
    p = probe()
    p.start()
    init = p.timed_out()
    assert isinstance(init, m.Request) and init.method == "initialize"
    outcome = p.timed_out()
    assert isinstance(outcome, m.Incompatible) and "did not answer initialize" in outcome.reason


def test_leg21_an_invalid_answer_to_the_probe_is_not_a_modern_one() -> None:
    p = probe()
    first = p.start()
    broken = m.InvalidResponse(
        id=first.id,  # type: ignore[union-attr]
        request=first,  # type: ignore[arg-type]
        error=t.Error(code=m.INVALID_PARAMS, message="not a DiscoverResult"),
    )
    assert isinstance(p.received(broken), m.Request)


def test_leg03_leg05_the_initialize_result_is_the_legacy_outcome() -> None:
    p = probe()
    first = p.start()
    init = p.received(error(first.id, m.METHOD_NOT_FOUND))  # type: ignore[union-attr]
    outcome = p.received(m.Result(id=init.id, result=initialize_result()))  # type: ignore[union-attr]
    assert isinstance(outcome, m.Legacy) and outcome.version == "2025-11-25"
    assert outcome.server_info.name == "legacy-server" and outcome.instructions == "be kind"
    assert outcome.capabilities.tools is not None
    assert outcome.initialized == m.Notification(method="notifications/initialized")  # LEG-03


def test_leg05_an_initialize_answered_at_a_version_we_do_not_speak_is_incompatible() -> None:
    p = probe()
    p.start()
    init = p.timed_out()
    outcome = p.received(m.Result(id=init.id, result=initialize_result("2024-11-05")))  # type: ignore[union-attr]
    assert isinstance(outcome, m.Incompatible) and outcome.supported == ("2024-11-05",)
    assert "2024-11-05" in outcome.reason


def test_leg22_a_modern_only_server_refusing_initialize_is_modern_after_all() -> None:
    """Over HTTP a modern server may answer a bad first request 400 with an error the
    client cannot read as modern; its refusal of ``initialize`` names its versions."""
    p = probe("http")
    assert p.start() is None
    init = p.not_modern()
    data = {"supported": ["2026-07-28"], "requested": "2025-11-25"}
    outcome = p.received(error(init.id, m.METHOD_NOT_FOUND, "modern only", data))  # type: ignore[union-attr]
    assert outcome == m.Modern(version="2026-07-28", supported=("2026-07-28",))


@pytest.mark.parametrize("data", [None, {"supported": "2026-07-28"}, {"supported": [1]}])
def test_a_refused_initialize_naming_no_version_is_incompatible(data: Any) -> None:
    p = probe()
    p.start()
    init = p.timed_out()
    outcome = p.received(error(init.id, m.INVALID_REQUEST, "go away", data))  # type: ignore[union-attr]
    assert isinstance(outcome, m.Incompatible) and "go away" in outcome.reason


def test_http42_the_first_modern_request_is_the_probe() -> None:
    p = probe("http")
    assert p.start() is None  # no request of its own
    assert p.received(m.Result(id=1, result=t.CallToolResult(content=[]))) == m.Modern(
        version=m.LATEST_PROTOCOL_VERSION
    )


@pytest.mark.parametrize("code", [m.HEADER_MISMATCH, m.MISSING_REQUIRED_CLIENT_CAPABILITY])
def test_http42_a_modern_error_keeps_the_client_modern(code: int) -> None:
    p = probe("http")
    p.start()
    assert isinstance(p.received(error(1, code)), m.Modern)


def test_http42_any_other_answer_or_a_4xx_without_a_modern_body_falls_back() -> None:
    p = probe("http")
    p.start()
    assert isinstance(p.received(error(1, m.INVALID_PARAMS)), m.Request)
    q = probe("http")
    q.start()
    init = q.not_modern()
    assert isinstance(init, m.Request) and init.method == "initialize"
    with pytest.raises(m.LocalProtocolError):
        q.not_modern()  # once


def test_over_http_a_timeout_says_nothing_of_the_era() -> None:
    p = probe("http")
    p.start()
    with pytest.raises(m.LocalProtocolError, match="nothing to time out"):
        p.timed_out()


def test_ver13_a_known_outcome_skips_the_probe() -> None:
    modern = m.Modern(version="2026-07-28")
    assert probe(known=modern).start() is modern
    legacy = m.Legacy(
        version="2025-11-25",
        result=initialize_result(),
        initialized=m.Notification(method="notifications/initialized"),
    )
    init = probe(known=legacy).start()
    assert isinstance(init, m.Request) and init.method == "initialize"  # a new session


def test_a_client_with_one_era_only() -> None:
    modern_only = probe(legacy_versions=())
    modern_only.start()
    outcome = modern_only.timed_out()
    assert isinstance(outcome, m.Incompatible) and "initialize-era" in outcome.reason
    legacy_only = probe(versions=())
    assert isinstance(legacy_only.start(), m.Request)  # initialize at once: no probe
    with pytest.raises(ValueError):
        probe(versions=(), legacy_versions=())


def test_steps_out_of_turn_are_local_protocol_errors() -> None:
    p = probe()
    with pytest.raises(m.LocalProtocolError):
        p.received(error(1, m.METHOD_NOT_FOUND))  # not started
    p.start()
    with pytest.raises(m.LocalProtocolError):
        p.start()
    with pytest.raises(m.LocalProtocolError):
        p.not_modern()  # stdio has no 4xx


def test_ver13_the_cache_keeps_what_was_learned_per_server() -> None:
    cache = m.EraCache(max_entries=2)
    modern = m.Modern(version="2026-07-28")
    cache.put("a", modern)
    cache.put("b", m.Modern(version="2027-01-01"))
    assert cache.get("a") is modern  # now the most recent
    cache.put("c", modern)
    assert cache.get("b") is None and len(cache) == 2  # the least recently used went
    cache.put("a", m.Incompatible(reason="x"))  # never cached: probed again
    assert cache.get("a") is None
    cache.invalidate("c")
    cache.invalidate("never")
    assert len(cache) == 0
    with pytest.raises(ValueError):
        m.EraCache(max_entries=0)
