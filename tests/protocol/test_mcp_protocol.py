"""Sans-IO tests of gno_trio.protocol: framing, negotiation, envelope, stamping, era pinning."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gno_trio.protocol.connection import Admission, LegacySession, StdioConnection, admit_modern
from gno_trio.protocol.envelope import (
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    LOG_LEVEL_KEY,
    PROTOCOL_VERSION_KEY,
    SERVER_INFO_KEY,
    claims_modern,
    parse_envelope,
    split_legacy_meta,
)
from gno_trio.protocol.errors import (
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    RESOURCE_NOT_FOUND_LEGACY,
    UNSUPPORTED_PROTOCOL_VERSION,
    ProtocolError,
    resource_not_found,
)
from gno_trio.protocol.jsonrpc import (
    DecodeFailure,
    Notification,
    Request,
    Response,
    decode_line,
    encode_error,
    encode_notification,
    encode_result,
)
from gno_trio.protocol.routing import claimed_era, http_status
from gno_trio.protocol.stamping import CACHEABLE_METHODS, stamp_result
from gno_trio.protocol.versions import Era, negotiate_legacy_version

REPO_ROOT = Path(__file__).resolve().parents[2]
SERVER_INFO = {"name": "gno", "version": "9.9.9"}


def modern_meta(**extra: Any) -> dict[str, Any]:
    return {
        PROTOCOL_VERSION_KEY: "2026-07-28",
        CLIENT_CAPABILITIES_KEY: {},
        CLIENT_INFO_KEY: {"name": "probe", "version": "1"},
        **extra,
    }


def initialize_params(version: str = "2025-11-25") -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "claude-code", "version": "1.0"},
    }


def test_protocol_package_does_not_import_trio() -> None:
    probe = (
        "import sys, gno_trio.protocol.connection, gno_trio.protocol.jsonrpc, "
        "gno_trio.protocol.envelope, gno_trio.protocol.stamping, gno_trio.protocol.versions, "
        "gno_trio.protocol.errors; print('trio' in sys.modules)"
    )
    completed = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO_ROOT, capture_output=True, text=True, check=True
    )
    assert completed.stdout.strip() == "False"


# -- decode_line ---------------------------------------------------------------------------


def test_decodes_request_notification_and_response() -> None:
    assert decode_line(b'{"jsonrpc":"2.0","id":1,"method":"ping"}') == Request(id=1, method="ping")
    assert decode_line(b'{"jsonrpc":"2.0","id":"a","method":"x","params":{"k":1}}\r') == Request(
        id="a", method="x", params={"k": 1}
    )
    assert decode_line(b'{"jsonrpc":"2.0","method":"notifications/initialized"}') == Notification(
        method="notifications/initialized"
    )
    assert decode_line(b'{"jsonrpc":"2.0","id":3,"result":{}}') == Response(id=3, result={})


@pytest.mark.parametrize(
    ("line", "code", "echoed_id"),
    [
        (b"not json", PARSE_ERROR, None),
        (b'{"jsonrpc":"2.0","id":1,"method":"ping"', PARSE_ERROR, None),
        (b"\xff\xfe{}", PARSE_ERROR, None),
        (b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"n":1e999}}', PARSE_ERROR, None),
        (b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]', INVALID_REQUEST, None),
        (b"[]", INVALID_REQUEST, None),
        (b'"ping"', INVALID_REQUEST, None),
        (b"42", INVALID_REQUEST, None),
        (b'{"id":7,"method":"ping"}', INVALID_REQUEST, 7),
        (b'{"jsonrpc":"1.0","id":"x","method":"ping"}', INVALID_REQUEST, "x"),
        (b'{"jsonrpc":"2.0","id":7,"method":5}', INVALID_REQUEST, 7),
        (b'{"jsonrpc":"2.0","id":7}', INVALID_REQUEST, 7),
        (b'{"jsonrpc":"2.0","id":null,"method":"ping"}', INVALID_REQUEST, None),
        (b'{"jsonrpc":"2.0","id":true,"method":"ping"}', INVALID_REQUEST, None),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}', INVALID_REQUEST, None),
        (b'{"jsonrpc":"2.0","id":8,"method":"x","params":[1]}', INVALID_PARAMS, 8),
        (b'{"jsonrpc":"2.0","id":8,"method":"x","params":3}', INVALID_REQUEST, 8),
        (b'{"jsonrpc":"2.0","id":9,"method":"x","result":{}}', INVALID_REQUEST, 9),
    ],
)
def test_decode_failures_carry_precise_codes(line: bytes, code: int, echoed_id: object) -> None:
    failure = decode_line(line)
    assert isinstance(failure, DecodeFailure)
    assert (failure.code, failure.id) == (code, echoed_id)


def test_batches_are_refused_by_name() -> None:
    failure = decode_line(b'[{"jsonrpc":"2.0","method":"ping","id":1}]')
    assert isinstance(failure, DecodeFailure)
    assert failure.message == "batches are not supported"


def test_null_params_read_as_absent() -> None:
    assert decode_line(b'{"jsonrpc":"2.0","id":1,"method":"x","params":null}') == Request(
        id=1, method="x"
    )


@settings(max_examples=400, deadline=None)
@given(st.binary(max_size=200))
def test_decode_line_never_raises_on_arbitrary_bytes(line: bytes) -> None:
    result = decode_line(line)
    assert isinstance(result, Request | Notification | Response | DecodeFailure)
    if isinstance(result, DecodeFailure):
        assert result.code in {PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS}


def _json_containers(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(children, max_size=4) | st.dictionaries(
        st.text(max_size=6), children, max_size=4
    )


json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
json_values = st.recursive(json_scalars, _json_containers, max_leaves=12)
message_like = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "1.0"]) | json_values,
        "id": st.integers(-5, 5) | st.text(max_size=4) | json_values,
        "method": st.sampled_from(["ping", "tools/call"]) | json_values,
        "params": st.dictionaries(st.text(max_size=4), json_values, max_size=3) | json_values,
        "result": json_values,
        "error": json_values,
    },
)


@settings(max_examples=400, deadline=None)
@given(st.one_of(message_like, json_values))
def test_decode_line_classifies_any_json_document(document: Any) -> None:
    result = decode_line(json.dumps(document).encode())
    if isinstance(document, list):
        assert result == DecodeFailure(INVALID_REQUEST, "batches are not supported")
    elif not isinstance(document, dict):
        assert isinstance(result, DecodeFailure) and result.code == INVALID_REQUEST
    elif isinstance(result, Request):
        # A request is only produced from a well-formed object, and keeps id/method/params.
        assert document["jsonrpc"] == "2.0"
        assert (result.id, result.method) == (document["id"], document["method"])
        assert result.params == document.get("params")
    elif isinstance(result, Notification):
        assert "id" not in document and result.method == document["method"]
    elif isinstance(result, DecodeFailure):
        assert result.code in {INVALID_REQUEST, INVALID_PARAMS}
        raw_id = document.get("id")
        readable = isinstance(raw_id, str) or (type(raw_id) is int)
        assert result.id == (raw_id if readable else None)


def test_encoded_messages_are_single_lines() -> None:
    line = encode_result(1, {"text": "two\nlines", "n": 1})
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line) == {"jsonrpc": "2.0", "id": 1, "result": {"text": "two\nlines", "n": 1}}
    assert json.loads(encode_error(None, {"code": -32700, "message": "m"}))["id"] is None
    assert json.loads(encode_notification("notifications/progress", {"progress": 1})) == {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progress": 1},
    }
    assert "params" not in json.loads(encode_notification("x"))


# -- versions -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("requested", "answered"),
    [
        ("2025-11-25", "2025-11-25"),
        ("2025-06-18", "2025-06-18"),
        ("2025-03-26", "2025-03-26"),
        ("2024-11-05", "2024-11-05"),
        ("2026-07-28", "2025-11-25"),
        ("1999-01-01", "2025-11-25"),
        ("", "2025-11-25"),
    ],
)
def test_legacy_negotiation(requested: str, answered: str) -> None:
    assert negotiate_legacy_version(requested) == answered


# -- envelope -----------------------------------------------------------------------------


def test_envelope_lifts_reserved_keys_and_keeps_custom_ones() -> None:
    params = {"_meta": modern_meta(**{LOG_LEVEL_KEY: "info", "progressToken": 5, "acme/x": [1]})}
    envelope = parse_envelope(params)
    assert envelope.protocol_version == "2026-07-28"
    assert envelope.client_info is not None and envelope.client_info.name == "probe"
    assert (envelope.log_level, envelope.progress_token) == ("info", 5)
    assert envelope.custom_meta == {"acme/x": [1]}


def test_client_info_is_optional() -> None:
    meta = modern_meta()
    del meta[CLIENT_INFO_KEY]
    assert parse_envelope({"_meta": meta}).client_info is None


@pytest.mark.parametrize(
    ("params", "detail_fragment"),
    [
        (None, "required"),
        ({}, "required"),
        ({"_meta": []}, "object"),
        ({"_meta": {PROTOCOL_VERSION_KEY: "2026-07-28"}}, CLIENT_CAPABILITIES_KEY),
        ({"_meta": {CLIENT_CAPABILITIES_KEY: {}}}, PROTOCOL_VERSION_KEY),
        ({"_meta": modern_meta(**{CLIENT_CAPABILITIES_KEY: []})}, CLIENT_CAPABILITIES_KEY),
        ({"_meta": modern_meta(**{PROTOCOL_VERSION_KEY: 2026})}, PROTOCOL_VERSION_KEY),
        ({"_meta": modern_meta(**{CLIENT_INFO_KEY: {"name": 1}})}, f"{CLIENT_INFO_KEY}.name"),
        ({"_meta": modern_meta(**{LOG_LEVEL_KEY: "loud"})}, LOG_LEVEL_KEY),
        ({"_meta": modern_meta(progressToken=True)}, "progressToken"),
    ],
)
def test_malformed_envelope_is_invalid_params(params: Any, detail_fragment: str) -> None:
    with pytest.raises(ProtocolError) as raised:
        parse_envelope(params)
    assert raised.value.code == INVALID_PARAMS
    assert raised.value.message == "Invalid _meta envelope"
    assert detail_fragment in raised.value.data["detail"]


def test_unsupported_version_names_supported_and_requested() -> None:
    with pytest.raises(ProtocolError) as raised:
        admit_modern("tools/list", {"_meta": modern_meta(**{PROTOCOL_VERSION_KEY: "1999-01-01"})})
    assert raised.value.code == UNSUPPORTED_PROTOCOL_VERSION
    assert raised.value.message == "Unsupported protocol version: 1999-01-01"
    assert raised.value.data == {"supported": ["2026-07-28"], "requested": "1999-01-01"}


def test_shape_is_checked_before_version() -> None:
    meta = modern_meta(**{PROTOCOL_VERSION_KEY: "1999-01-01"})
    del meta[CLIENT_CAPABILITIES_KEY]
    with pytest.raises(ProtocolError) as raised:
        admit_modern("tools/list", {"_meta": meta})
    assert raised.value.code == INVALID_PARAMS


def test_claims_modern_keys_on_the_version_key_only() -> None:
    assert claims_modern({"_meta": {PROTOCOL_VERSION_KEY: "x"}})
    assert not claims_modern({"_meta": {"progressToken": 1}})
    assert not claims_modern({"_meta": "nope"})
    assert not claims_modern(None)


def test_legacy_meta_split() -> None:
    assert split_legacy_meta({"_meta": {"progressToken": "t", "x": 1}}) == ("t", {"x": 1})
    assert split_legacy_meta({}) == (None, {})
    with pytest.raises(ProtocolError) as raised:
        split_legacy_meta({"_meta": {"progressToken": 1.5}})
    assert raised.value.code == INVALID_PARAMS


# -- stamping ---------------------------------------------------------------------------------


def test_legacy_results_are_untouched() -> None:
    assert stamp_result(Era.LEGACY, "ping", {}, SERVER_INFO) == {}
    assert stamp_result(Era.LEGACY, "tools/list", {"tools": []}, SERVER_INFO) == {"tools": []}


@pytest.mark.parametrize("method", sorted(CACHEABLE_METHODS))
def test_modern_cacheable_results_carry_cache_hints(method: str) -> None:
    stamped = stamp_result(Era.MODERN, method, {"x": 1}, SERVER_INFO)
    assert stamped == {
        "x": 1,
        "resultType": "complete",
        "_meta": {SERVER_INFO_KEY: SERVER_INFO},
        "ttlMs": 0,
        "cacheScope": "private",
    }


def test_modern_tool_call_results_have_no_cache_hints_and_keep_meta() -> None:
    stamped = stamp_result(
        Era.MODERN, "tools/call", {"content": [], "_meta": {"k": 1}}, SERVER_INFO
    )
    assert stamped == {
        "content": [],
        "resultType": "complete",
        "_meta": {"k": 1, SERVER_INFO_KEY: SERVER_INFO},
    }


def test_resource_not_found_code_depends_on_era() -> None:
    legacy = resource_not_found("gno://x/y", Era.LEGACY)
    modern = resource_not_found("gno://x/y", Era.MODERN)
    assert (legacy.code, legacy.data) == (RESOURCE_NOT_FOUND_LEGACY, {"uri": "gno://x/y"})
    assert (modern.code, modern.data) == (INVALID_PARAMS, {"uri": "gno://x/y"})


# -- connection state -----------------------------------------------------------------------


def refused(connection: StdioConnection, method: str, params: Any) -> ProtocolError:
    with pytest.raises(ProtocolError) as raised:
        connection.admit(method, params)
    return raised.value


def test_initialize_pins_legacy_and_records_the_client() -> None:
    connection = StdioConnection()
    admission = connection.admit("initialize", initialize_params("2026-07-28"))
    assert connection.era is Era.LEGACY
    assert (admission.era, admission.protocol_version) == (Era.LEGACY, "2025-11-25")
    assert admission.client_name == "claude-code"
    listed = connection.admit("tools/list", {"_meta": {"progressToken": 3, "k": "v"}})
    assert (listed.progress_token, listed.custom_meta) == (3, {"k": "v"})


def test_initialize_with_an_envelope_still_pins_legacy() -> None:
    connection = StdioConnection()
    connection.admit("initialize", {**initialize_params(), "_meta": modern_meta()})
    assert connection.era is Era.LEGACY


def test_legacy_requests_before_initialize() -> None:
    connection = StdioConnection()
    assert connection.admit("ping", None).era is Era.LEGACY
    assert refused(connection, "tools/list", None).code == INVALID_PARAMS
    unknown = refused(connection, "prompts/list", None)
    assert (unknown.code, unknown.data) == (METHOD_NOT_FOUND, {"method": "prompts/list"})


def test_enveloped_request_on_legacy_connection_is_invalid_request() -> None:
    connection = StdioConnection()
    connection.admit("initialize", initialize_params())
    assert refused(connection, "tools/list", {"_meta": modern_meta()}).code == INVALID_REQUEST


def test_bad_initialize_params_are_invalid_params() -> None:
    assert refused(StdioConnection(), "initialize", {"protocolVersion": 5}).code == INVALID_PARAMS


def test_discover_pins_modern_and_initialize_is_then_refused() -> None:
    connection = StdioConnection()
    admission = connection.admit("server/discover", {"_meta": modern_meta()})
    assert (connection.era, admission.client_name) == (Era.MODERN, "probe")
    error = refused(connection, "initialize", initialize_params())
    assert error.code == UNSUPPORTED_PROTOCOL_VERSION
    assert error.data == {"supported": ["2026-07-28"], "requested": "2025-11-25"}
    assert refused(connection, "initialize", {}).data == {"supported": ["2026-07-28"]}


def test_modern_connection_refusals() -> None:
    connection = StdioConnection()
    bad_version = refused(
        connection, "tools/list", {"_meta": modern_meta(**{PROTOCOL_VERSION_KEY: "1999-01-01"})}
    )
    assert connection.era is Era.MODERN  # a bad envelope still pins the era
    assert bad_version.data["requested"] == "1999-01-01"
    assert refused(connection, "tools/list", None).code == INVALID_PARAMS
    for method in ("ping", "logging/setLevel", "resources/subscribe", "subscriptions/listen"):
        error = refused(connection, method, {"_meta": modern_meta()})
        assert (error.code, error.data) == (METHOD_NOT_FOUND, {"method": method})


def test_notifications_do_not_pin() -> None:
    connection = StdioConnection()
    connection.on_notification("notifications/initialized")
    assert connection.era is None


def test_legacy_session_tracks_initialized_notification() -> None:
    session = LegacySession()
    session.on_notification("notifications/initialized")
    assert not session.client_ready
    session.admit("initialize", initialize_params())
    session.on_notification("notifications/initialized")
    assert session.client_ready


def test_admit_modern_is_stateless() -> None:
    first = admit_modern("tools/call", {"name": "x", "_meta": modern_meta(progressToken="p")})
    assert first == Admission(
        era=Era.MODERN,
        method="tools/call",
        protocol_version="2026-07-28",
        client_name="probe",
        client_capabilities={},
        progress_token="p",
        custom_meta={},
    )


def test_envelope_struct_round_trips_through_msgspec() -> None:
    envelope = parse_envelope({"_meta": modern_meta(**{"x/y": 1})})
    assert msgspec.json.decode(msgspec.json.encode(envelope), type=type(envelope)) == envelope


def test_the_era_a_message_claims_is_decided_by_one_rule() -> None:
    modern = {"_meta": modern_meta()}
    assert claimed_era(modern) is Era.MODERN
    assert claimed_era({"name": "x"}) is Era.LEGACY
    assert claimed_era(None) is Era.LEGACY
    # Over HTTP the version header alone claims it (the body may still be malformed).
    assert claimed_era(None, " 2026-07-28 ") is Era.MODERN
    assert claimed_era({"name": "x"}, "2025-11-25") is Era.LEGACY


@pytest.mark.parametrize(
    ("code", "modern_status"),
    [(INVALID_PARAMS, 400), (UNSUPPORTED_PROTOCOL_VERSION, 400), (-32601, 404), (-32603, 500)],
)
def test_an_error_rides_on_its_status_in_2026_and_on_200_in_2025(
    code: int, modern_status: int
) -> None:
    assert http_status(code, Era.MODERN) == modern_status
    assert http_status(code, Era.LEGACY) == 200
    assert http_status(-32000, Era.MODERN) == 200  # a server-defined error is not a status
