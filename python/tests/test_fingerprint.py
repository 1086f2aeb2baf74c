"""Canonical JSON and fingerprints, pinned by fixtures/schema-fingerprint (shared with the TypeScript side)."""

from __future__ import annotations

import hashlib
import json
import math
import random
import struct
from pathlib import Path

import pytest

from ipython_mcp_worker.schema.fingerprint import (
    CANONICAL_JSON_ERROR_CODES,
    MAX_SAFE_INTEGER,
    CanonicalJsonError,
    canonical_json,
    es_number,
    schema_fingerprint,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "schema-fingerprint"
RAW = (FIXTURES / "vectors.json").read_bytes()
MANIFEST = json.loads((FIXTURES / "manifest.json").read_text(encoding="utf-8"))
VECTORS = json.loads(RAW.decode("utf-8"))


def _code(value: object) -> str | None:
    try:
        canonical_json(value)
    except CanonicalJsonError as error:
        return error.code
    return None


def test_vectors_match_the_manifest() -> None:
    assert MANIFEST["file"] == "vectors.json"
    assert len(RAW) == MANIFEST["bytes"]
    assert hashlib.sha256(RAW).hexdigest() == MANIFEST["sha256"]


def test_vectors_cover_the_required_cases() -> None:
    vectors = VECTORS["vectors"]
    assert len(vectors) >= 15
    assert len({vector["name"] for vector in vectors}) == len(vectors)
    canonical = {vector["canonical"] for vector in vectors}
    for required in ("1", "1e+21", "1e-7", "0.1", "0", "123456789012345", str(MAX_SAFE_INTEGER)):
        assert required in canonical
    assert VECTORS["rejects"]


@pytest.mark.parametrize("vector", VECTORS["vectors"], ids=lambda vector: vector["name"])
def test_vector(vector: dict) -> None:
    text = canonical_json(vector["input"])
    assert text == vector["canonical"]
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == vector["sha256"]
    assert schema_fingerprint(vector["input"]) == vector["sha256"]
    assert canonical_json(json.loads(text)) == text


@pytest.mark.parametrize("reject", VECTORS["rejects"], ids=lambda reject: reject["name"])
def test_reject(reject: dict) -> None:
    value = eval(reject["python"], {"__builtins__": __builtins__})  # noqa: S307 - fixture expressions
    with pytest.raises(CanonicalJsonError) as caught:
        canonical_json(value)
    assert caught.value.code == reject["code"]
    with pytest.raises(CanonicalJsonError):
        schema_fingerprint(value)


def test_number_forms() -> None:
    assert canonical_json(1.0) == "1"
    assert canonical_json(-0.0) == "0"
    assert canonical_json(1e21) == "1e+21"
    assert canonical_json(-1e21) == "-1e+21"
    assert canonical_json(1e-7) == "1e-7"
    assert canonical_json(1e-6) == "0.000001"
    assert canonical_json(0.1) == "0.1"
    assert canonical_json(123e-20) == "1.23e-18"
    assert canonical_json(1.5e300) == "1.5e+300"
    assert canonical_json(5e-324) == "5e-324"
    assert canonical_json(123456789012345) == "123456789012345"
    assert canonical_json(2**53 - 1) == "9007199254740991"
    assert canonical_json(float(2**53 - 1)) == "9007199254740991"


def test_es_number_round_trips_with_shortest_digits() -> None:
    rng = random.Random(1234)
    for _ in range(20_000):
        value = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
        if not math.isfinite(value):
            continue
        text = es_number(value)
        assert float(text) == value or (value == 0 and float(text) == 0)
        mantissa = text.lstrip("-").split("e")[0].replace(".", "").strip("0")
        expected = repr(abs(value)).split("e")[0].replace(".", "").strip("0")
        assert mantissa == expected or value == 0


def test_bool_is_not_an_integer() -> None:
    assert canonical_json([True, 1, False, 0]) == "[true,1,false,0]"
    assert schema_fingerprint({"default": True}) != schema_fingerprint({"default": 1})


def test_keys_sort_by_utf16_code_units() -> None:
    assert (
        canonical_json({"\ue000": 1, "\U0001f600": 2, "b": 3, "a": 4})
        == '{"a":4,"b":3,"\U0001f600":2,"\ue000":1}'
    )


def test_string_escaping_is_minimal() -> None:
    assert canonical_json('"\\\b\f\n\r\t\x00\x1f\x7f/é漢') == '"\\"\\\\\\b\\f\\n\\r\\t\\u0000\\u001f\x7f/é漢"'


def test_fingerprint_is_sha256_of_utf8() -> None:
    schema = {"type": "object", "properties": {"é": {"type": "string"}}}
    expected = hashlib.sha256('{"properties":{"é":{"type":"string"}},"type":"object"}'.encode()).hexdigest()
    assert schema_fingerprint(schema) == expected
    assert schema_fingerprint({"a": 1, "b": [1.0]}) == schema_fingerprint({"b": [1], "a": 1.0})


def test_refusals_and_their_codes() -> None:
    assert _code(float("nan")) == "non_finite_number"
    assert _code(2**53) == "unsafe_integer"
    assert _code(-(2**53)) == "unsafe_integer"
    assert _code(float(2**53)) == "unsafe_integer"
    assert _code(1e20) == "unsafe_integer"
    assert _code(1e21) is None
    assert _code("\ud800") == "lone_surrogate"
    assert _code({"\udc00": 1}) == "lone_surrogate"
    assert _code({1: "a"}) == "non_string_key"
    assert _code({None: "a"}) == "non_string_key"
    assert _code(object()) == "unsupported_type"
    assert _code({1, 2}) == "unsupported_type"

    class MyStr(str):
        pass

    assert _code(MyStr("x")) == "unsupported_type"
    cycle: dict = {}
    cycle["self"] = [cycle]
    assert _code(cycle) == "circular_reference"
    shared = {"x": 1}
    assert canonical_json([shared, shared]) == '[{"x":1},{"x":1}]'


def test_error_carries_code_and_path() -> None:
    with pytest.raises(CanonicalJsonError) as caught:
        canonical_json({"a": [0, float("inf")]})
    assert caught.value.code == "non_finite_number"
    assert caught.value.path == "$.a[1]"
    assert isinstance(caught.value, ValueError)
    assert caught.value.code in CANONICAL_JSON_ERROR_CODES
    with pytest.raises(ValueError):
        CanonicalJsonError("not_a_code", "$", "x")


def test_error_codes_are_the_shared_fixture_list() -> None:
    # The TypeScript list is generated from the same file (packages/schema-fingerprint/src/error-codes.ts).
    fixture = Path(__file__).resolve().parents[2] / "fixtures/schema-fingerprint/error-codes.json"
    assert CANONICAL_JSON_ERROR_CODES == tuple(json.loads(fixture.read_text(encoding="utf-8"))["codes"])
