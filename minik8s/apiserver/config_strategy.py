"""ConfigMap and Secret strategies (Kubernetes' ``pkg/registry/core/{configmap,secret}``).

Decoding: base64 values (``ConfigMap.binaryData``, ``Secret.data``) are decoded and written
back in canonical form; a value that is not base64 is a 400 ``BadRequest`` with Go's
message (``Secret in version "v1" cannot be handled as a Secret: illegal base64 data at
input byte 4``), as kube-apiserver answers when it cannot decode a request.
``Secret.stringData`` is merged into ``data`` (its entries win) and dropped before
anything is validated or stored.

Validation (``ValidateConfigMap``/``ValidateSecret`` and their ``...Update``): keys are
config keys (:func:`minik8s.api.validation.config_map_key_errors`); a ConfigMap key may
not be in both ``data`` and ``binaryData``; decoded values total at most 1 MiB
(``Too long: must have at most 1048576 bytes``); well-known Secret types need their keys
(``kubernetes.io/ssh-auth`` → ``ssh-privatekey``, ``kubernetes.io/tls`` → ``tls.crt`` and
``tls.key``, ``kubernetes.io/basic-auth`` → ``username`` or ``password``,
``kubernetes.io/dockerconfigjson`` → a JSON object under ``.dockerconfigjson``); a Secret's
``type`` never changes; once ``immutable`` is true, it stays true and the data stays as it is
(``Forbidden: field is immutable when `immutable` is set``).
"""

from __future__ import annotations

import json
from typing import Any

from minik8s.api import config as c
from minik8s.api import errors
from minik8s.api import validation as v
from minik8s.apiserver.strategy import REQUIRED, Cause, Obj, Strategy

IMMUTABLE_SET = "Forbidden: field is immutable when `immutable` is set"
TOO_LONG = f"Too long: must have at most {c.MAX_SIZE} bytes"
REDACTED = "<secret contents redacted>"
_GO_JSON_TYPES = {list: "array", str: "string", int: "number", float: "number", bool: "bool"}


def _canonical_base64(obj: Obj, field: str) -> int:
    """Rewrite ``obj[field]``'s base64 values canonically; returns their decoded size in bytes.

    Raises :class:`errors.BadRequest` (kube-apiserver's decode error) for a value that is
    not base64.
    """
    kind = obj.get("kind") or ""
    size = 0
    values = obj.get(field) or {}
    for key, value in values.items():
        try:
            raw = c.b64decode(value)
        except c.Base64Error as exc:
            raise errors.BadRequest(f'{kind} in version "v1" cannot be handled as a {kind}: {exc}') from None
        values[key] = c.b64encode(raw)
        size += len(raw)
    return size


def _key_errors(values: dict[str, Any] | None, field: str) -> list[Cause]:
    return [(f"{field}[{key}]", key, msg) for key in values or {} for msg in v.config_map_key_errors(key)]


def _immutable_errors(new: Obj, old: Obj | None, fields: tuple[str, ...]) -> list[Cause]:
    """``Validate{ConfigMap,Secret}Update``'s rule for objects stored with ``immutable: true``."""
    if old is None or old.get("immutable") is not True:
        return []
    causes: list[Cause] = []
    if new.get("immutable") is not True:
        causes.append(("immutable", None, IMMUTABLE_SET))
    for field in fields:
        if (new.get(field) or None) != (old.get(field) or None):
            causes.append((field, None, IMMUTABLE_SET))
    return causes


class ConfigMapStrategy(Strategy):
    """core/v1 ConfigMap: no status, no generation; validation as in the module docstring."""

    def prepare_for_create(self, obj: Obj) -> None:
        obj["metadata"].pop("generation", None)
        _canonical_base64(obj, "binaryData")

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        super().prepare_for_update(new, old)
        _canonical_base64(new, "binaryData")

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = _immutable_errors(obj, old, ("data", "binaryData"))
        causes += self.validate_metadata(obj)
        data, binary = obj.get("data") or {}, obj.get("binaryData") or {}
        causes += _key_errors(data, "data")
        causes += [(f"data[{key}]", key, "duplicate of key present in binaryData") for key in data if key in binary]
        causes += _key_errors(binary, "binaryData")
        size = sum(len(value.encode("utf-8")) for value in data.values())
        size += sum(len(c.b64decode(value)) for value in binary.values())
        if size > c.MAX_SIZE:
            causes.append(("[]", None, TOO_LONG))
        return causes


class SecretStrategy(Strategy):
    """core/v1 Secret: ``stringData`` merged into ``data``, ``type`` defaulted to ``Opaque``
    and fixed; validation as in the module docstring.  ``fields()`` adds ``type`` for
    ``fieldSelector`` (``type=kubernetes.io/ssh-auth``)."""

    @staticmethod
    def _merge_string_data(obj: Obj) -> None:
        string_data = obj.pop("stringData", None) or {}
        _canonical_base64(obj, "data")
        if string_data:
            data = obj.setdefault("data", {})
            for key, value in string_data.items():
                data[key] = c.b64encode(value.encode("utf-8"))

    def prepare_for_create(self, obj: Obj) -> None:
        obj["metadata"].pop("generation", None)
        self._merge_string_data(obj)

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        super().prepare_for_update(new, old)
        self._merge_string_data(new)

    def default(self, obj: Obj) -> None:
        if not obj.get("type"):
            obj["type"] = c.SECRET_TYPE_OPAQUE

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes: list[Cause] = []
        if old is not None and obj.get("type") != old.get("type"):
            causes.append(("type", obj.get("type"), "field is immutable"))
        causes += _immutable_errors(obj, old, ("data",))
        causes += self.validate_metadata(obj)
        data = {key: c.b64decode(value) for key, value in (obj.get("data") or {}).items()}
        causes += _key_errors(data, "data")
        if sum(len(value) for value in data.values()) > c.MAX_SIZE:
            causes.append(("data", None, TOO_LONG))
        causes += self._type_errors(obj, data)
        return causes

    @staticmethod
    def _type_errors(obj: Obj, data: dict[str, bytes]) -> list[Cause]:
        """The keys a well-known ``type`` requires (``ValidateSecret``'s switch)."""
        stype = obj.get("type")
        if stype == c.SECRET_TYPE_SERVICE_ACCOUNT_TOKEN:
            annotations = (obj.get("metadata") or {}).get("annotations") or {}
            if not annotations.get(c.SERVICE_ACCOUNT_NAME_KEY):
                return [(f"metadata.annotations[{c.SERVICE_ACCOUNT_NAME_KEY}]", None, REQUIRED)]
        elif stype in (c.SECRET_TYPE_DOCKERCFG, c.SECRET_TYPE_DOCKER_CONFIG_JSON):
            key = c.DOCKER_CONFIG_KEY if stype == c.SECRET_TYPE_DOCKERCFG else c.DOCKER_CONFIG_JSON_KEY
            if key not in data:
                return [(f"data[{key}]", None, REQUIRED)]
            try:
                parsed = json.loads(data[key])
            except ValueError as exc:
                return [(f"data[{key}]", REDACTED, str(exc))]
            if parsed is not None and not isinstance(parsed, dict):
                go_type = _GO_JSON_TYPES.get(type(parsed), "value")
                return [(f"data[{key}]", REDACTED,
                         f"json: cannot unmarshal {go_type} into Go value of type map[string]interface {{}}")]
        elif stype == c.SECRET_TYPE_BASIC_AUTH:
            if c.BASIC_AUTH_USERNAME_KEY not in data and c.BASIC_AUTH_PASSWORD_KEY not in data:
                return [(f"data[{c.BASIC_AUTH_USERNAME_KEY}]", None, REQUIRED),
                        (f"data[{c.BASIC_AUTH_PASSWORD_KEY}]", None, REQUIRED)]
        elif stype == c.SECRET_TYPE_SSH_AUTH:
            if not data.get(c.SSH_AUTH_PRIVATE_KEY):
                return [(f"data[{c.SSH_AUTH_PRIVATE_KEY}]", None, REQUIRED)]
        elif stype == c.SECRET_TYPE_TLS:
            return [(f"data[{key}]", None, REQUIRED)
                    for key in (c.TLS_CERT_KEY, c.TLS_PRIVATE_KEY_KEY) if key not in data]
        return []

    def fields(self, obj: Obj) -> dict[str, str]:
        f = super().fields(obj)
        f["type"] = obj.get("type") or ""
        return f

