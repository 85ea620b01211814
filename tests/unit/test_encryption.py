"""Encryption at rest: the EncryptionConfiguration parser and the aesgcm/secretbox/identity transformers."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from minik8s.api import errors
from minik8s.apiserver.encryption import EncryptionConfig, EncryptionConfigError, TransformError
from minik8s.apiserver.storage import Store

KEY = b"/registry/secrets/default/s1"
DATA = b'{"kind":"Secret","data":{"password":"aHVudGVyMg=="}}'


def b64(n: int, fill: bytes = b"k") -> str:
    return base64.b64encode(fill * n).decode()


def config(*providers: dict[str, Any], resources: list[str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "apiserver.config.k8s.io/v1", "kind": "EncryptionConfiguration",
            "resources": [{"resources": resources or ["secrets"], "providers": list(providers)}]}


def aesgcm(name: str, n: int = 32, fill: bytes = b"a") -> dict[str, Any]:
    return {"aesgcm": {"keys": [{"name": name, "secret": b64(n, fill)}]}}


def secretbox(name: str, fill: bytes = b"s") -> dict[str, Any]:
    return {"secretbox": {"keys": [{"name": name, "secret": b64(32, fill)}]}}


IDENTITY: dict[str, Any] = {"identity": {}}


def transformer(*providers: dict[str, Any]) -> Any:
    t = EncryptionConfig.parse(config(*providers)).for_key(KEY.decode())
    assert t is not None
    return t


@pytest.mark.parametrize("n", [16, 24, 32])
def test_aesgcm_round_trip_and_prefix(n: int) -> None:
    t = transformer(aesgcm("key1", n))
    stored = t.to_storage(DATA, KEY)
    assert stored.startswith(b"k8s:enc:aesgcm:v1:key1:")
    body = stored[len(b"k8s:enc:aesgcm:v1:key1:"):]
    assert len(body) == 12 + len(DATA) + 16  # nonce + ciphertext + tag
    assert b"password" not in stored and b"aHVudGVyMg" not in stored
    assert t.from_storage(stored, KEY) == DATA
    assert t.to_storage(DATA, KEY) != stored  # a fresh nonce each write


def test_secretbox_round_trip_and_prefix() -> None:
    t = transformer(secretbox("box1"))
    stored = t.to_storage(DATA, KEY)
    assert stored.startswith(b"k8s:enc:secretbox:v1:box1:")
    assert len(stored) == len(b"k8s:enc:secretbox:v1:box1:") + 24 + 16 + len(DATA)
    assert b"password" not in stored
    assert t.from_storage(stored, KEY) == DATA


def test_identity_first_writes_plaintext_and_reads_both() -> None:
    old = transformer(aesgcm("key1"))
    t = transformer(IDENTITY, aesgcm("key1"))
    assert t.to_storage(DATA, KEY) == DATA
    assert t.from_storage(DATA, KEY) == DATA
    assert t.from_storage(old.to_storage(DATA, KEY), KEY) == DATA  # decrypting back to plaintext


def test_rotation_new_key_first_reads_old_values() -> None:
    old = transformer(aesgcm("key1", fill=b"1"))
    stored_old = old.to_storage(DATA, KEY)
    rotated = transformer({"aesgcm": {"keys": [{"name": "key2", "secret": b64(32, b"2")},
                                               {"name": "key1", "secret": b64(32, b"1")}]}})
    assert rotated.from_storage(stored_old, KEY) == DATA
    stored_new = rotated.to_storage(DATA, KEY)
    assert stored_new.startswith(b"k8s:enc:aesgcm:v1:key2:")
    with pytest.raises(TransformError):  # the old config alone cannot read the new key's values
        old.from_storage(stored_new, KEY)
    # across provider kinds too: secretbox first, aesgcm still read
    mixed = transformer(secretbox("box"), aesgcm("key1", fill=b"1"))
    assert mixed.from_storage(stored_old, KEY) == DATA
    assert mixed.to_storage(DATA, KEY).startswith(b"k8s:enc:secretbox:v1:box:")


@pytest.mark.parametrize("provider", [aesgcm("key1", fill=b"x"), secretbox("box1", fill=b"x")])
def test_wrong_key_same_name_fails(provider: dict[str, Any]) -> None:
    good = transformer(aesgcm("key1") if "aesgcm" in provider else secretbox("box1"))
    stored = good.to_storage(DATA, KEY)
    with pytest.raises(TransformError, match="failed"):
        transformer(provider).from_storage(stored, KEY)


def test_unknown_key_name_and_plaintext_without_identity() -> None:
    stored = transformer(aesgcm("key1")).to_storage(DATA, KEY)
    with pytest.raises(TransformError, match="no matching prefix"):
        transformer(aesgcm("other")).from_storage(stored, KEY)
    with pytest.raises(TransformError, match="not encrypted"):
        transformer(aesgcm("key1")).from_storage(DATA, KEY)
    with pytest.raises(TransformError, match="identity transformer tried to read encrypted data"):
        transformer(IDENTITY).from_storage(stored, KEY)


@pytest.mark.parametrize("provider", [aesgcm("key1"), secretbox("box1")])
def test_tampered_or_truncated_value_fails(provider: dict[str, Any]) -> None:
    t = transformer(provider)
    stored = bytearray(t.to_storage(DATA, KEY))
    stored[-5] ^= 0x01
    with pytest.raises(TransformError):
        t.from_storage(bytes(stored), KEY)
    prefix_len = len(b"k8s:enc:aesgcm:v1:key1:") if "aesgcm" in provider else len(b"k8s:enc:secretbox:v1:box1:")
    with pytest.raises(TransformError, match="too short"):
        t.from_storage(bytes(stored[:prefix_len + 10]), KEY)


def test_aesgcm_binds_the_etcd_key() -> None:
    """As Kubernetes: the etcd key is authenticated data, so a value moved to another key does not read."""
    t = transformer(aesgcm("key1"))
    stored = t.to_storage(DATA, KEY)
    with pytest.raises(TransformError, match="authentication failed"):
        t.from_storage(stored, b"/registry/secrets/default/other")


def test_resources_map_to_storage_prefixes() -> None:
    cfg = EncryptionConfig.parse({
        "apiVersion": "apiserver.config.k8s.io/v1", "kind": "EncryptionConfiguration",
        "resources": [{"resources": ["secrets", "deployments.apps"], "providers": [aesgcm("a")]},
                      {"resources": ["configmaps"], "providers": [IDENTITY]}]})
    assert set(cfg.rules) == {"/registry/secrets/", "/registry/deployments/", "/registry/configmaps/"}
    assert cfg.for_key("/registry/secrets/ns/x") is not None
    assert cfg.for_key("/registry/deployments/ns/x") is not None
    assert cfg.for_key("/registry/secretsx/ns/x") is None
    assert cfg.for_key("/registry/pods/ns/x") is None
    assert "by identity" in cfg.describe() and "k8s:enc:aesgcm:v1:a" in cfg.describe()


@pytest.mark.parametrize(("doc", "message"), [
    ({**config(aesgcm("k")), "kind": "Config"}, 'kind: Unsupported value: "Config"'),
    ({**config(aesgcm("k")), "apiVersion": "v1"}, 'apiVersion: Unsupported value: "v1"'),
    (config({"aescbc": {"keys": [{"name": "k", "secret": b64(32)}]}}),
     'resources[0].providers[0]: Unsupported value: "aescbc"'),
    (config({"kms": {"name": "x"}}), 'Unsupported value: "kms"'),
    (config(aesgcm("k", 20)), "resources[0].providers[0].aesgcm.keys[0].secret: Invalid value: \"REDACTED\": "
                              "secret is not of the expected length, got 20, expected one of [16, 24, 32]"),
    (config(aesgcm("k", 16), {"secretbox": {"keys": [{"name": "b", "secret": b64(16)}]}}),
     "resources[0].providers[1].secretbox.keys[0].secret: Invalid value: \"REDACTED\": secret is not of the "
     "expected length, got 16, expected one of [32]"),
    (config({"aesgcm": {"keys": [{"name": "k", "secret": "not base64!"}]}}), "secrets must be base64 encoded"),
    (config({"aesgcm": {"keys": [{"name": "", "secret": b64(32)}]}}), "keys[0].name: Required value"),
    (config({"aesgcm": {"keys": [{"name": "k", "secret": b64(32)}, {"name": "k", "secret": b64(16)}]}}),
     'keys[1].name: Duplicate value: "k"'),
    (config({"aesgcm": {"keys": []}}), "aesgcm.keys: Required value"),
    (config({"aesgcm": {"keys": [{"name": "k", "secret": b64(32)}]}, "identity": {}}),
     "more than one provider specified in a single element"),
    (config({}), "resources[0].providers[0]: Required value"),
    (config(), "resources[0].providers: Required value"),
    (config(aesgcm("k"), resources=["*.*"]), "wildcards are not supported"),
    ({"apiVersion": "apiserver.config.k8s.io/v1", "kind": "EncryptionConfiguration",
      "resources": [{"resources": ["secrets"], "providers": [IDENTITY]},
                    {"resources": ["secrets"], "providers": [aesgcm("k")]}]},
     'resources[1].resources[0]: Duplicate value: "secrets"'),
    ("just text", "expected an EncryptionConfiguration object"),
])
def test_bad_configs_are_refused(doc: Any, message: str) -> None:
    with pytest.raises(EncryptionConfigError) as info:
        EncryptionConfig.parse(doc)
    assert message in str(info.value)
    assert b64(32) not in str(info.value)  # key material never in a message


def test_load_yaml_and_json_files(tmp_path: Path) -> None:
    yml = tmp_path / "enc.yaml"
    yml.write_text(f"""apiVersion: apiserver.config.k8s.io/v1
kind: EncryptionConfiguration
resources:
  - resources: [secrets]
    providers:
      - aesgcm:
          keys:
            - name: key1
              secret: {b64(32)}
      - identity: {{}}
""")
    assert EncryptionConfig.load(yml).for_key("/registry/secrets/a/b") is not None
    js = tmp_path / "enc.json"
    js.write_text(json.dumps(config(secretbox("b"))))
    assert EncryptionConfig.load(js).for_key("/registry/secrets/a/b") is not None
    bad = tmp_path / "bad.yaml"
    bad.write_text(json.dumps(config(aesgcm("k", 7))))
    with pytest.raises(EncryptionConfigError, match=f"encryption provider config {bad}: resources"):
        EncryptionConfig.load(bad)


def test_store_encrypts_only_listed_resources_and_reports_unreadable_values() -> None:
    store = Store(encryption=EncryptionConfig.parse(config(aesgcm("key1"))))
    secret = {"kind": "Secret", "metadata": {"name": "s1", "resourceVersion": "7"}, "data": {"a": "Yg=="}}
    raw = store._to_storage(KEY, secret)
    assert raw.startswith(b"k8s:enc:aesgcm:v1:key1:")
    back = store._from_storage(KEY, raw, 9)
    assert back["data"] == {"a": "Yg=="} and back["metadata"]["resourceVersion"] == "9"
    cm_key = b"/registry/configmaps/default/c"
    plain = store._to_storage(cm_key, {"kind": "ConfigMap", "metadata": {"name": "c"}})
    assert json.loads(plain)["kind"] == "ConfigMap"
    other = Store(encryption=EncryptionConfig.parse(config(aesgcm("key1", fill=b"z"))))
    with pytest.raises(errors.InternalError, match=f'unable to transform key "{KEY.decode()}"'):
        other._from_storage(KEY, raw, 9)
