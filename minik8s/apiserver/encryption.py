"""Encryption at rest: kube-apiserver's ``--encryption-provider-config``.

The file is an ``apiserver.config.k8s.io/v1`` ``EncryptionConfiguration`` (YAML or JSON)::

    apiVersion: apiserver.config.k8s.io/v1
    kind: EncryptionConfiguration
    resources:
      - resources: [secrets]            # plural, or plural.group (deployments.apps)
        providers:
          - aesgcm:
              keys:
                - name: key2
                  secret: <base64 of 16, 24 or 32 random bytes>
          - secretbox:
              keys:
                - name: key1
                  secret: <base64 of 32 random bytes>
          - identity: {}                # reads values written before encryption was on

For each listed resource the FIRST provider (its first key) transforms every new write; on read every
listed provider and key is tried, so keys rotate as in Kubernetes: put the new key first, restart, rewrite
the objects (any update), then drop the old key.  Stored values carry Kubernetes' prefixes, so an etcd
written by one can be read by the other:

* ``aesgcm``: ``k8s:enc:aesgcm:v1:<keyname>:`` + 12-byte random nonce + AES-GCM ciphertext and 16-byte
  tag; the etcd key is the additional authenticated data, so a value copied to another key does not
  decrypt.
* ``secretbox``: ``k8s:enc:secretbox:v1:<keyname>:`` + 24-byte random nonce + NaCl secretbox
  (XSalsa20-Poly1305).
* ``identity``: the plain JSON; on read it takes any value that does not start with ``k8s:enc:``.

Resources not listed are stored as before.  Errors: :class:`EncryptionConfigError` (a ``ValueError``)
for an unusable file, naming the field as kube-apiserver does (``resources[0].providers[0].aesgcm.keys[0]
.secret``); :class:`TransformError` for a value no configured provider can read (wrong or dropped key,
tampered bytes, plaintext without ``identity``).  ``aescbc`` and ``kms`` are not supported.
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import nacl.exceptions
import nacl.secret
import yaml
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from minik8s.api.resourcetypes import storage_base

API_VERSION = "apiserver.config.k8s.io/v1"
KIND = "EncryptionConfiguration"
#: every encrypted value starts with this (Kubernetes' ``k8s:enc:``)
ENCRYPTED_PREFIX = b"k8s:enc:"
SUPPORTED = ("aesgcm", "secretbox", "identity")


class EncryptionConfigError(ValueError):
    """The encryption configuration cannot be used; the message names the file and the field."""


class TransformError(Exception):
    """A stored value that no configured provider can read (message says why, never the key material)."""


class Provider(Protocol):
    """One key of one provider: ``prefix`` marks the values it wrote."""

    prefix: bytes

    def seal(self, data: bytes, context: bytes) -> bytes:
        """The ciphertext of ``data`` (without the prefix); ``context`` is the etcd key."""

    def open(self, body: bytes, context: bytes) -> bytes:
        """The plaintext of ``body`` (the value after the prefix); raises TransformError."""


class AESGCMKey:
    """``aesgcm``: AES-GCM with a random 12-byte nonce, the etcd key as additional authenticated data."""

    NONCE = 12

    def __init__(self, name: str, secret: bytes) -> None:
        self.name = name
        self.prefix = f"k8s:enc:aesgcm:v1:{name}:".encode()
        self._aead = AESGCM(secret)

    def seal(self, data: bytes, context: bytes) -> bytes:
        nonce = os.urandom(self.NONCE)
        return nonce + self._aead.encrypt(nonce, data, context)

    def open(self, body: bytes, context: bytes) -> bytes:
        if len(body) < self.NONCE + 16:
            raise TransformError("the aesgcm ciphertext is too short")
        try:
            return self._aead.decrypt(body[:self.NONCE], body[self.NONCE:], context)
        except InvalidTag:
            raise TransformError(f'aesgcm key "{self.name}": message authentication failed') from None


class SecretboxKey:
    """``secretbox``: NaCl's XSalsa20-Poly1305 with a random 24-byte nonce (nonce + box, as Kubernetes)."""

    def __init__(self, name: str, secret: bytes) -> None:
        self.name = name
        self.prefix = f"k8s:enc:secretbox:v1:{name}:".encode()
        self._box = nacl.secret.SecretBox(secret)

    def seal(self, data: bytes, context: bytes) -> bytes:
        return bytes(self._box.encrypt(data, os.urandom(nacl.secret.SecretBox.NONCE_SIZE)))

    def open(self, body: bytes, context: bytes) -> bytes:
        if len(body) < nacl.secret.SecretBox.NONCE_SIZE + nacl.secret.SecretBox.MACBYTES:
            raise TransformError("the secretbox ciphertext is too short")
        try:
            return bytes(self._box.decrypt(body))
        except nacl.exceptions.CryptoError:
            raise TransformError(f'secretbox key "{self.name}": decryption failed') from None


class Identity:
    """``identity``: the value as is; refuses values that carry an encryption prefix (as Kubernetes)."""

    prefix = b""

    def seal(self, data: bytes, context: bytes) -> bytes:
        return data

    def open(self, body: bytes, context: bytes) -> bytes:
        if body.startswith(ENCRYPTED_PREFIX):
            raise TransformError("identity transformer tried to read encrypted data")
        return body


class Transformer:
    """The ordered keys of one ``resources`` entry: the first writes, all are tried on read."""

    def __init__(self, providers: Sequence[Provider]) -> None:
        if not providers:
            raise ValueError("a transformer needs at least one provider")
        self.providers = list(providers)

    @property
    def writes_plaintext(self) -> bool:
        return isinstance(self.providers[0], Identity)

    def to_storage(self, data: bytes, context: bytes) -> bytes:
        """``data`` as the first provider stores it (prefix + ciphertext); ``context``: the etcd key."""
        first = self.providers[0]
        return first.prefix + first.seal(data, context)

    def from_storage(self, value: bytes, context: bytes) -> bytes:
        """The plaintext of a stored ``value``: the first provider whose prefix it carries and that opens
        it wins.  Raises TransformError when none does (no matching prefix, wrong key, tampered value)."""
        failures: list[str] = []
        for provider in self.providers:
            if not value.startswith(provider.prefix):
                continue
            try:
                return provider.open(value[len(provider.prefix):], context)
            except TransformError as exc:
                failures.append(str(exc))
        if failures:
            raise TransformError("; ".join(failures))
        raise TransformError("no matching prefix found" + (
            "" if value.startswith(ENCRYPTED_PREFIX)
            else " (the value is not encrypted: add the identity provider to read it)"))


class EncryptionConfig:
    """Which etcd keys go through which :class:`Transformer` (by resource key prefix)."""

    def __init__(self, rules: dict[str, Transformer]) -> None:
        #: etcd key prefix (``/registry/secrets/``) -> its transformer
        self.rules = dict(rules)
        self._ordered = sorted(self.rules.items(), key=lambda kv: -len(kv[0]))

    def for_key(self, key: str) -> Transformer | None:
        """The transformer of the resource ``key`` belongs to, or None (stored as plain JSON)."""
        for prefix, transformer in self._ordered:
            if key.startswith(prefix):
                return transformer
        return None

    def describe(self) -> str:
        """One line for the start-up log: resource prefixes and the provider that writes each."""
        parts = []
        for prefix, t in self.rules.items():
            first = t.providers[0]
            name = "identity" if isinstance(first, Identity) else first.prefix.decode().rstrip(":")
            parts.append(f"{prefix} by {name}")
        return ", ".join(parts)

    @classmethod
    def load(cls, path: str | Path) -> EncryptionConfig:
        """Read and validate the file at ``path``; raises EncryptionConfigError (or OSError)."""
        text = Path(path).read_text()
        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise EncryptionConfigError(f"encryption provider config {path}: not YAML or JSON: {exc}") from None
        try:
            return cls.parse(doc)
        except EncryptionConfigError as exc:
            raise EncryptionConfigError(f"encryption provider config {path}: {exc}") from None

    @classmethod
    def parse(cls, doc: Any) -> EncryptionConfig:
        """Validate a decoded ``EncryptionConfiguration``; raises EncryptionConfigError naming the field."""
        if not isinstance(doc, dict):
            raise EncryptionConfigError("expected an EncryptionConfiguration object")
        if doc.get("kind") != KIND:
            raise EncryptionConfigError(f'kind: Unsupported value: "{doc.get("kind")}": supported values: "{KIND}"')
        if doc.get("apiVersion") != API_VERSION:
            raise EncryptionConfigError(
                f'apiVersion: Unsupported value: "{doc.get("apiVersion")}": supported values: "{API_VERSION}"')
        entries = doc.get("resources")
        if not isinstance(entries, list) or not entries:
            raise EncryptionConfigError("resources: Required value: at least one resources entry is required")
        rules: dict[str, Transformer] = {}
        for i, entry in enumerate(entries):
            path = f"resources[{i}]"
            if not isinstance(entry, dict):
                raise EncryptionConfigError(f"{path}: Invalid value: expected an object")
            names = entry.get("resources")
            if not isinstance(names, list) or not names:
                raise EncryptionConfigError(f"{path}.resources: Required value: at least one resource is required")
            providers_doc = entry.get("providers")
            if not isinstance(providers_doc, list) or not providers_doc:
                raise EncryptionConfigError(f"{path}.providers: Required value: at least one provider is required")
            transformer = Transformer(
                [key for j, p in enumerate(providers_doc) for key in _provider(p, f"{path}.providers[{j}]")])
            for j, name in enumerate(names):
                prefix = _resource_prefix(name, f"{path}.resources[{j}]")
                if prefix in rules:
                    raise EncryptionConfigError(
                        f'{path}.resources[{j}]: Duplicate value: "{name}": a resource may be listed once')
                rules[prefix] = transformer
        return cls(rules)


def _resource_prefix(name: Any, path: str) -> str:
    if not isinstance(name, str) or not name:
        raise EncryptionConfigError(f"{path}: Required value: a resource name is required")
    if "*" in name:
        raise EncryptionConfigError(f'{path}: Invalid value: "{name}": wildcards are not supported by minik8s')
    if name != name.lower() or "/" in name:
        raise EncryptionConfigError(f'{path}: Invalid value: "{name}": resource names must be lowercase plurals '
                                    "(secrets, deployments.apps)")
    plural, _, group = name.partition(".")
    return storage_base(group, plural)


def _provider(doc: Any, path: str) -> list[Provider]:
    if not isinstance(doc, dict) or len(doc) != 1:
        kinds = ", ".join(sorted(doc)) if isinstance(doc, dict) else ""
        if isinstance(doc, dict) and len(doc) > 1:
            raise EncryptionConfigError(f"{path}: Invalid value: more than one provider specified in a single "
                                        f"element ({kinds}); split them into separate list elements")
        raise EncryptionConfigError(f"{path}: Required value: a provider is required: one of "
                                    + ", ".join(SUPPORTED))
    kind, body = next(iter(doc.items()))
    if kind == "identity":
        return [Identity()]
    if kind not in SUPPORTED:
        raise EncryptionConfigError(f'{path}: Unsupported value: "{kind}": supported providers: '
                                    + ", ".join(SUPPORTED))
    keys = body.get("keys") if isinstance(body, dict) else None
    if not isinstance(keys, list) or not keys:
        raise EncryptionConfigError(f"{path}.{kind}.keys: Required value: at least one key is required")
    lengths = (16, 24, 32) if kind == "aesgcm" else (32,)
    out: list[Provider] = []
    seen: set[str] = set()
    for k, key in enumerate(keys):
        kpath = f"{path}.{kind}.keys[{k}]"
        name = key.get("name") if isinstance(key, dict) else None
        if not isinstance(name, str) or not name:
            raise EncryptionConfigError(f"{kpath}.name: Required value: key name is required")
        if name in seen:
            raise EncryptionConfigError(f'{kpath}.name: Duplicate value: "{name}"')
        seen.add(name)
        encoded = key.get("secret")
        if not isinstance(encoded, str) or not encoded:
            raise EncryptionConfigError(f"{kpath}.secret: Required value: secret is required")
        try:
            secret = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise EncryptionConfigError(f'{kpath}.secret: Invalid value: "REDACTED": secrets must be base64 '
                                        "encoded") from None
        if len(secret) not in lengths:
            raise EncryptionConfigError(
                f'{kpath}.secret: Invalid value: "REDACTED": secret is not of the expected length, got '
                f"{len(secret)}, expected one of {list(lengths)}")
        out.append(AESGCMKey(name, secret) if kind == "aesgcm" else SecretboxKey(name, secret))
    return out
