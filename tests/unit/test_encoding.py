"""JSON in kube-apiserver's bytes (Go's encoding/json Encoder) and Status in Go's field order."""

from __future__ import annotations

import json

import pytest

from minik8s.api import errors
from minik8s.api.encoding import encode_json


def test_go_escapes_and_newline() -> None:
    assert encode_json({"m": "a <b> & c"}) == b'{"m":"a \\u003cb\\u003e \\u0026 c"}\n'
    assert encode_json({"m": "gr\u00fc\u00dfe \u2028"}) == '{"m":"grüße \\u2028"}\n'.encode()
    assert encode_json([1, "x"]) == b'[1,"x"]\n'
    assert json.loads(encode_json({"s": "\ud800"})) == {"s": "\ud800"}  # a lone surrogate still encodes
    with pytest.raises(ValueError):
        encode_json({"f": float("nan")})


def test_status_in_go_order_with_empty_fields_left_out() -> None:
    err = errors.AlreadyExists('services "x" already exists', {"kind": "services", "group": "", "name": "x"})
    assert encode_json(err.to_status()) == (
        b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
        b'"message":"services \\"x\\" already exists","reason":"AlreadyExists",'
        b'"details":{"name":"x","kind":"services"},"code":409}\n')
    bare = errors.NotFound("the server could not find the requested resource").to_status()
    assert list(bare) == ["kind", "apiVersion", "metadata", "status", "message", "reason", "details", "code"]
    assert bare["details"] == {}  # as kube-apiserver's 404 for a path it does not serve
    invalid = errors.Invalid("x", {"causes": [{"field": "spec", "message": "m", "reason": "FieldValueInvalid"}],
                                   "kind": "Pod", "name": "p", "retryAfterSeconds": 0})
    details = invalid.to_status()["details"]
    assert list(details) == ["name", "kind", "causes"] and list(details["causes"][0]) == ["reason", "message", "field"]
    assert errors.status_object("Success", code=201) == {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                                         "status": "Success", "code": 201}
