"""A signed token is taken only as the service writes it.

Decoding a token's base64 skips characters outside the ASCII alphabet, takes
padding and the standard alphabet's ``+`` and ``/``, and ignores the unused low
bits of the signature's last character: without a check of its spelling one
link would answer under many addresses, each a page of its own in the kept-page
cache and a line of its own in the logs.
"""

from __future__ import annotations

from urllib.parse import quote

import pytest
from flask import Flask
from flask.testing import FlaskClient
from itsdangerous.encoding import base64_decode

from service.links import SALT, home_token, serializer, signed_link


def same_signature(token: str) -> list[str]:
    """The token with its signature's last character changed to each other character of the
    URL-safe alphabet that decodes to the same bytes."""
    payload, _, signature = token.rpartition(".")
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    return [
        f"{payload}.{signature[:-1]}{char}"
        for char in alphabet
        if char != signature[-1]
        and base64_decode(signature[:-1] + char) == base64_decode(signature)
    ]


def misspelled(token: str) -> list[str]:
    """Spellings of ``token`` that name the same payload and signature once decoded."""
    payload, _, signature = token.rpartition(".")
    inside = f"{payload}.{signature[:9]}{{}}{signature[9:]}"
    return [
        inside.format("\u00e9"),  # é
        inside.format("\u200b"),  # a zero width space
        f"{token}\u202e\U0001f600",  # a right-to-left override and an emoji
        f"{token}=",  # padding
        *same_signature(token),
    ]


def test_every_token_has_spellings_to_refuse(app: Flask) -> None:
    """The signature of a token of 20 bytes has 2 bits to spare: 3 more spellings each."""
    with app.app_context():
        token = serializer(SALT).dumps([1, "key"])
    assert len(same_signature(token)) == 3


@pytest.mark.parametrize("path", ["/play/", "/api/play/"])
def test_a_link_spelled_otherwise_is_not_found(client: FlaskClient, make_game, path: str) -> None:
    token = make_game()["keeper"]
    assert client.get(f"{path}{token}").status_code == 200
    for spelling in misspelled(token):
        response = client.get(path + quote(spelling, safe=""))
        assert response.status_code == 404, ascii(spelling)
    moved = client.post(f"/api/play/{quote(misspelled(token)[0], safe='')}", json={})
    assert moved.status_code == 404


def test_a_home_link_spelled_otherwise_is_not_found(
    app: Flask, client: FlaskClient, make_game
) -> None:
    make_game()
    with app.app_context():
        token = home_token("kim@example.com")
    assert client.get(f"/me/{token}").status_code == 200
    for spelling in misspelled(token):
        assert client.get("/me/" + quote(spelling, safe="")).status_code == 404, ascii(spelling)


def test_a_signature_in_the_standard_alphabet_is_refused(app: Flask) -> None:
    """``+`` and ``/`` decode as ``-`` and ``_`` do; a token's path segment may hold ``+``."""
    with app.app_context():
        signed = ((f"key{n}", serializer(SALT).dumps([1, f"key{n}"])) for n in range(100))
        key, token = next(
            (key, token) for key, token in signed if {"-", "_"} <= set(token.rpartition(".")[2])
        )
        assert signed_link(token) == (1, key)
        payload, _, signature = token.rpartition(".")
        for standard in (signature.replace("-", "+"), signature.replace("_", "/")):
            assert signed_link(f"{payload}.{standard}") is None, standard
