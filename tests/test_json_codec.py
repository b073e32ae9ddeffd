"""JSON written and read by orjson (service.json_codec) is what the standard library's gives."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

import pytest
from flask.json.provider import DefaultJSONProvider

from service import json_codec


@pytest.mark.parametrize(
    "text",
    [
        "-9223372036854775808",  # -2**63, the least orjson reads as an integer
        "-9223372036854775809",
        "-9999999999999999999",
        "-10000000000000000000",
        "9999999999999999999",
        "18446744073709551615",  # 2**64 - 1, the greatest
        "18446744073709551616",
        '{"seed": -9999999999999999999, "deals": []}',
        "1e400",
        "NaN",
        '"\\ud800"',
        '{"a": 1, "a": 2}',
    ],
)
def test_a_number_is_read_as_the_standard_library_reads_it(text: str) -> None:
    expected = json.loads(text)
    for given in (text, text.encode()):
        read = json_codec.loads(given)
        assert repr(read) == repr(expected)
        assert type(read) is type(expected)


def test_a_stored_seed_below_64_bits_comes_back_whole() -> None:
    state = {"seed": -9999999999999999999}
    assert json_codec.loads(json_codec.dumps(state)) == state
    assert type(json_codec.loads(json_codec.dumps(state))["seed"]) is int


@pytest.mark.parametrize(
    "value",
    [
        {"seed": 2**70, "deals": []},  # beyond 64 bits: orjson refuses it
        {1: "a", "b": [1.5, True, None]},  # a key not a string
        {"name": "Bérénice 🂡", "line": "\u2028"},
        [[[[]]]],
    ],
)
def test_a_value_is_written_as_the_standard_library_writes_it(value: object) -> None:
    written = json_codec.dumps(value)
    assert json.loads(written) == json.loads(json.dumps(value))
    assert json_codec.loads(written) == json.loads(json.dumps(value))


@pytest.mark.parametrize("value", [datetime(2026, 12, 6, tzinfo=UTC), date(2026, 12, 6)])
def test_a_value_json_has_no_type_for_is_refused_as_before(value: object) -> None:
    with pytest.raises(TypeError):
        json.dumps({"when": value})
    with pytest.raises(TypeError):
        json_codec.dumps({"when": value})


def test_a_response_body_keeps_flasks_order_and_default() -> None:
    body = json_codec.compact_sorted(
        {"b": 1, "a": date(2026, 12, 6), "c": "é"}, default=DefaultJSONProvider.default
    )
    assert body == '{"a":"Sun, 06 Dec 2026 00:00:00 GMT","b":1,"c":"é"}'.encode()
