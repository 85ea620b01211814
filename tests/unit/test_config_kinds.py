"""ConfigMap and Secret: models, base64 handling, key rules and the apiserver strategies' rules."""

from __future__ import annotations

import base64

import pytest

from minik8s.api import errors
from minik8s.api.config import Base64Error, ConfigMap, Secret, b64decode, decoded_data
from minik8s.api.registry import default_registry
from minik8s.api.validation import config_map_key_errors
from minik8s.apiserver.config_strategy import ConfigMapStrategy, SecretStrategy
from minik8s.apiserver.strategy import default_strategies


def b64(text: str | bytes) -> str:
    return base64.b64encode(text.encode() if isinstance(text, str) else text).decode()


def cm(**fields: object) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "d"}, **fields}


def secret(**fields: object) -> dict:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "d"}, **fields}


def create(strategy: ConfigMapStrategy | SecretStrategy, obj: dict) -> list:
    strategy.prepare_for_create(obj)
    strategy.default(obj)
    return strategy.validate(obj, None)


def update(strategy: ConfigMapStrategy | SecretStrategy, new: dict, old: dict) -> list:
    strategy.prepare_for_update(new, old)
    strategy.default(new)
    return strategy.validate(new, old)


def test_registry_rows_and_strategies() -> None:
    reg = default_registry()
    cm_rt, secret_rt = reg.resolve("cm"), reg.resolve("secrets")
    assert cm_rt is not None and cm_rt.kind == "ConfigMap" and cm_rt.api_version == "v1" and cm_rt.namespaced
    assert secret_rt is not None and secret_rt.kind == "Secret" and secret_rt.plural == "secrets"
    assert cm_rt.storage_key("d", "c") == "/registry/configmaps/d/c"
    assert isinstance(default_strategies()["ConfigMap"], ConfigMapStrategy)
    assert isinstance(default_strategies()["Secret"], SecretStrategy)


def test_models_round_trip_wire_names() -> None:
    obj = ConfigMap.from_dict(cm(data={"a": "1"}, binaryData={"b": b64("x")}, immutable=True)).to_dict()
    assert obj["binaryData"] == {"b": "eA=="} and obj["immutable"] is True
    s = Secret.from_dict(secret(stringData={"k": "v"}, type="Opaque")).to_dict()
    assert s["stringData"] == {"k": "v"} and s["type"] == "Opaque"


@pytest.mark.parametrize("key,ok", [
    ("a", True), ("key.name", True), ("KEY_NAME", True), ("key-name", True), (".hidden", True),
    ("a" * 253, True), ("a" * 254, False), (".", False), ("..", False), ("..data", False),
    ("a/b", False), ("has space", False), ("", False),
])
def test_config_map_keys(key: str, ok: bool) -> None:
    assert (config_map_key_errors(key) == []) is ok


def test_config_map_key_messages() -> None:
    assert config_map_key_errors("..") == ["must not be '..'"]
    assert config_map_key_errors("..x") == ["must not start with '..'"]
    msg = config_map_key_errors("a/b")[0]
    assert msg.startswith("a valid config key must consist of alphanumeric characters, '-', '_' or '.'")
    assert "regex used for validation is '[-._a-zA-Z0-9]+'" in msg


def test_base64_decoding_like_go() -> None:
    assert b64decode("aGVsbG8=") == b"hello"
    assert b64decode("aGVs\nbG8=") == b"hello"  # Go skips newlines
    with pytest.raises(Base64Error, match="illegal base64 data at input byte 2"):
        b64decode("aG*sbG8=")
    with pytest.raises(Base64Error):
        b64decode("aGVsbG8")  # unpadded
    assert decoded_data(secret(data={"k": b64(b"\x00\xff")})) == {"k": b"\x00\xff"}
    assert decoded_data(cm(data={"t": "é"}, binaryData={"b": b64("x")})) == {"t": "é".encode(), "b": b"x"}


def test_config_map_validation() -> None:
    s = ConfigMapStrategy()
    good = cm(data={"a.conf": "x"}, binaryData={"b": b64(b"\x00")})
    assert create(s, good) == [] and "generation" not in good["metadata"]
    causes = create(s, cm(data={"bad/key": "x", "dup": "1"}, binaryData={"dup": b64("1"), "..": b64("2")}))
    fields = [f for f, _, _ in causes]
    assert fields == ["data[bad/key]", "data[dup]", "binaryData[..]"]
    assert causes[1][2] == "duplicate of key present in binaryData"
    big = cm(data={"a": "x" * (512 * 1024)}, binaryData={"b": b64(b"y" * (512 * 1024 + 1))})
    assert create(s, big) == [("[]", None, "Too long: must have at most 1048576 bytes")]
    assert create(s, cm(data={"a": "x" * (1024 * 1024)})) == []


def test_config_map_bad_base64_is_a_decode_error() -> None:
    with pytest.raises(errors.BadRequest, match='ConfigMap in version "v1" cannot be handled as a ConfigMap: '
                                                "illegal base64 data at input byte 0"):
        create(ConfigMapStrategy(), cm(binaryData={"b": "***"}))


def test_config_map_immutable() -> None:
    s = ConfigMapStrategy()
    old = cm(data={"a": "1"}, immutable=True)
    assert update(s, cm(data={"a": "1"}, immutable=True, metadata={"name": "c", "labels": {"x": "y"}}), old) == []
    causes = update(s, cm(data={"a": "2"}, binaryData={"b": b64("x")}), old)
    assert causes == [("immutable", None, "Forbidden: field is immutable when `immutable` is set"),
                      ("data", None, "Forbidden: field is immutable when `immutable` is set"),
                      ("binaryData", None, "Forbidden: field is immutable when `immutable` is set")]
    # mutable → immutable is allowed, with a data change in the same write
    assert update(s, cm(data={"a": "2"}, immutable=True), cm(data={"a": "1"})) == []


def test_secret_string_data_and_defaults() -> None:
    s = SecretStrategy()
    obj = secret(data={"a": b64("from-data"), "b": "aGVs\nbG8="}, stringData={"a": "from-string", "c": "é"})
    assert create(s, obj) == []
    assert obj["type"] == "Opaque" and "stringData" not in obj
    assert obj["data"] == {"a": b64("from-string"), "b": b64("hello"), "c": b64("é")}
    with pytest.raises(errors.BadRequest, match='Secret in version "v1" cannot be handled as a Secret: '
                                                "illegal base64 data at input byte 3"):
        create(s, secret(data={"k": "abc!"}))


def test_secret_validation() -> None:
    s = SecretStrategy()
    causes = create(s, secret(stringData={"bad key": "x", "ok": "y" * (1024 * 1024)}))
    assert [f for f, _, _ in causes] == ["data[bad key]", "data"]
    assert causes[1][2] == "Too long: must have at most 1048576 bytes"
    assert create(s, secret(type="kubernetes.io/ssh-auth")) == [("data[ssh-privatekey]", None, "Required value")]
    assert create(s, secret(type="kubernetes.io/ssh-auth", stringData={"ssh-privatekey": ""})) == \
        [("data[ssh-privatekey]", None, "Required value")]
    assert create(s, secret(type="kubernetes.io/ssh-auth", stringData={"ssh-privatekey": "KEY"})) == []
    assert [f for f, _, _ in create(s, secret(type="kubernetes.io/tls", stringData={"tls.crt": "c"}))] == \
        ["data[tls.key]"]
    assert len(create(s, secret(type="kubernetes.io/basic-auth"))) == 2
    assert create(s, secret(type="kubernetes.io/basic-auth", stringData={"password": ""})) == []
    bad_json = create(s, secret(type="kubernetes.io/dockerconfigjson", stringData={".dockerconfigjson": "[1]"}))
    assert bad_json[0][0] == "data[.dockerconfigjson]" and bad_json[0][1] == "<secret contents redacted>"
    assert "cannot unmarshal array" in bad_json[0][2]
    assert create(s, secret(type="kubernetes.io/dockerconfigjson",
                            stringData={".dockerconfigjson": '{"auths": {}}'})) == []
    assert create(s, secret(type="example.com/custom")) == []


def test_secret_update_rules() -> None:
    s = SecretStrategy()
    old = secret(type="Opaque", data={"a": b64("1")})
    assert update(s, secret(type="kubernetes.io/tls", stringData={"tls.crt": "c", "tls.key": "k"}), old) == \
        [("type", "kubernetes.io/tls", "field is immutable")]
    assert update(s, secret(data={"a": b64("2")}), old) == []  # type defaults to Opaque again
    frozen = secret(type="Opaque", data={"a": b64("1")}, immutable=True)
    assert update(s, secret(stringData={"a": "1"}, immutable=True), frozen) == []
    assert update(s, secret(stringData={"a": "2"}, immutable=True), frozen) == \
        [("data", None, "Forbidden: field is immutable when `immutable` is set")]
    assert s.fields(secret(type="kubernetes.io/ssh-auth"))["type"] == "kubernetes.io/ssh-auth"


# ---------------------------------------------------------------- how pods refer to them
def _pod_causes(spec: dict) -> list:
    from minik8s.apiserver.strategy import default_pod_spec, validate_pod_spec

    default_pod_spec(spec)
    return validate_pod_spec(spec)


def test_pod_config_volume_defaults_and_validation() -> None:
    spec = {"containers": [{"name": "c", "image": "i"}],
            "volumes": [{"name": "a", "configMap": {"name": "cm"}}, {"name": "b", "secret": {"secretName": "s"}}]}
    assert _pod_causes(spec) == []
    assert spec["volumes"][0]["configMap"]["defaultMode"] == 0o644
    assert spec["volumes"][1]["secret"]["defaultMode"] == 0o644
    bad = {"containers": [{"name": "c", "image": "i"}], "volumes": [
        {"name": "a", "configMap": {"defaultMode": 0o1777, "items": [{"key": "k", "path": "/abs"},
                                                                     {"key": "", "path": "../up", "mode": -1}]}},
        {"name": "b", "secret": {"items": [{"key": "k", "path": "..x"}]}}]}
    got = {(f, m) for f, _, m in _pod_causes(bad)}
    assert got == {
        ("spec.volumes[0].configMap.name", "Required value"),
        ("spec.volumes[0].configMap.defaultMode", "must be a number between 0 and 0777 (octal), both inclusive"),
        ("spec.volumes[0].configMap.items[0].path", "must be a relative path"),
        ("spec.volumes[0].configMap.items[1].key", "Required value"),
        ("spec.volumes[0].configMap.items[1].path", "must not contain '..'"),
        ("spec.volumes[0].configMap.items[1].mode", "must be a number between 0 and 0777 (octal), both inclusive"),
        ("spec.volumes[1].secret.secretName", "Required value"),
        ("spec.volumes[1].secret.items[0].path", "must not start with '..'"),
    }


def test_pod_env_source_validation() -> None:
    spec = {"containers": [{"name": "c", "image": "i", "env": [
        {"name": "A", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "bad/key"}}},
        {"name": "B", "value": "x", "valueFrom": {"secretKeyRef": {"key": "k"}}},
        {"name": "C", "valueFrom": {}},
    ], "envFrom": [{"prefix": "P=", "configMapRef": {"name": "cm"}, "secretRef": {"name": "s"}}]}]}
    got = [(f, m) for f, _, m in _pod_causes(spec)]
    assert got[0][0] == "spec.containers[0].env[0].valueFrom.configMapKeyRef.key"
    assert got[0][1].startswith("a valid config key")
    assert ("spec.containers[0].env[1].valueFrom", "may not be specified when `value` is not empty") in got
    assert ("spec.containers[0].env[1].valueFrom.secretKeyRef.name", "Required value") in got
    assert ("spec.containers[0].env[2].valueFrom", "must specify one of: `fieldRef`, `resourceFieldRef`, "
                                                   "`configMapKeyRef` or `secretKeyRef`") in got
    assert ("spec.containers[0].envFrom[0]", "may not have more than one field specified at a time") in got
    assert any(f == "spec.containers[0].envFrom[0].prefix" for f, _ in got)
