"""JSON written and read by orjson (service.json_codec) is what the standard library's gives."""

from __future__ import annotations

import json

import pytest

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
