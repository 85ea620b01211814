"""Core (``v1``) configuration kinds: ConfigMap and Secret — Kubernetes field names and meanings.

On the wire, ``ConfigMap.data`` holds UTF-8 strings and ``ConfigMap.binaryData`` and
``Secret.data`` hold base64 (standard alphabet, padded); ``Secret.stringData`` is a
write-only convenience the apiserver merges into ``data`` and never stores.  Use
:func:`decoded_data` to read the bytes behind every key.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from minik8s.api.meta import TypedObject

#: The most bytes ``data`` plus ``binaryData`` (ConfigMap) or ``data`` (Secret) may hold
#: (Kubernetes' ``MaxSecretSize``, 1 MiB), counted on the decoded values.
MAX_SIZE = 1024 * 1024

SECRET_TYPE_OPAQUE = "Opaque"
SECRET_TYPE_SERVICE_ACCOUNT_TOKEN = "kubernetes.io/service-account-token"
SECRET_TYPE_DOCKERCFG = "kubernetes.io/dockercfg"
SECRET_TYPE_DOCKER_CONFIG_JSON = "kubernetes.io/dockerconfigjson"
SECRET_TYPE_BASIC_AUTH = "kubernetes.io/basic-auth"
SECRET_TYPE_SSH_AUTH = "kubernetes.io/ssh-auth"
SECRET_TYPE_TLS = "kubernetes.io/tls"

#: The keys well-known Secret types carry (``corev1.SSHAuthPrivateKey``, ``TLSCertKey`` ...).
SSH_AUTH_PRIVATE_KEY = "ssh-privatekey"
TLS_CERT_KEY = "tls.crt"
TLS_PRIVATE_KEY_KEY = "tls.key"
BASIC_AUTH_USERNAME_KEY = "username"
BASIC_AUTH_PASSWORD_KEY = "password"
DOCKER_CONFIG_KEY = ".dockercfg"
DOCKER_CONFIG_JSON_KEY = ".dockerconfigjson"
SERVICE_ACCOUNT_NAME_KEY = "kubernetes.io/service-account.name"


class ConfigMap(TypedObject):
    """``corev1.ConfigMap``: ``data`` (key → UTF-8 text), ``binaryData`` (key → base64 bytes).

    Keys are ``[-._a-zA-Z0-9]+`` (at most 253 characters, not ``.``/``..``), unique across
    both maps; the values total at most 1 MiB.  ``immutable: true`` freezes both maps.
    """

    data: dict[str, str] | None = None
    binary_data: dict[str, str] | None = None
    immutable: bool | None = None


class Secret(TypedObject):
    """``corev1.Secret``: ``data`` (key → base64 bytes), ``type`` (default ``Opaque``).

    ``stringData`` (key → text) is accepted on create and update and merged into ``data``
    (it wins over a ``data`` entry of the same key); it is never stored or returned.
    ``type`` never changes after create; ``immutable: true`` also freezes ``data``.
    """

    type: str | None = None
    data: dict[str, str] | None = None
    string_data: dict[str, str] | None = None
    immutable: bool | None = None


class Base64Error(ValueError):
    """A value that is not standard, padded base64; ``offset`` is the first bad input byte
    (Go's ``base64.CorruptInputError``: ``illegal base64 data at input byte N``)."""

    def __init__(self, offset: int) -> None:
        super().__init__(f"illegal base64 data at input byte {offset}")
        self.offset = offset


_B64_ALPHABET = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def b64decode(value: str) -> bytes:
    """Decode standard padded base64 as Go's ``encoding/json`` does for ``[]byte``
    (``\\r`` and ``\\n`` are skipped); raises :class:`Base64Error` at the first bad byte."""
    raw = value.encode("utf-8", "surrogatepass")
    kept = bytes(b for b in raw if b not in (0x0A, 0x0D))
    try:
        return base64.b64decode(kept, validate=True)
    except (binascii.Error, ValueError):
        pass
    for i, byte in enumerate(kept):
        if byte not in _B64_ALPHABET and byte != ord("="):
            raise Base64Error(i)
    padding = kept.find(b"=")
    raise Base64Error(padding if padding >= 0 else len(kept) - len(kept) % 4)


def b64encode(value: bytes) -> str:
    """Standard padded base64 of ``value`` (how ``[]byte`` is written in JSON)."""
    return base64.b64encode(value).decode("ascii")


def decoded_data(obj: dict[str, Any]) -> dict[str, bytes]:
    """Every key of a wire-form ConfigMap or Secret as bytes: ConfigMap ``data`` UTF-8
    encoded plus ``binaryData`` decoded; Secret ``data`` decoded.  Raises
    :class:`Base64Error` for a value that is not base64 (the apiserver never stores one)."""
    out: dict[str, bytes] = {}
    if obj.get("kind") == "Secret":
        for key, value in (obj.get("data") or {}).items():
            out[key] = b64decode(value)
        return out
    for key, value in (obj.get("data") or {}).items():
        out[key] = value.encode("utf-8")
    for key, value in (obj.get("binaryData") or {}).items():
        out[key] = b64decode(value)
    return out
