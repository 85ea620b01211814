"""Kubernetes' protobuf encoding of request bodies (``application/vnd.kubernetes.protobuf``), decoded.

kubectl's generators (``kubectl create deployment|service|namespace|ingress|configmap|secret|job``,
``kubectl autoscale``) encode the object they build in protobuf whatever the server says, and
client-go never falls back to JSON for it, so the apiserver reads it; Helm sends its DeleteOptions
that way too, and any client may send any kind of a stable API group (an Eviction, a Scale, a
TokenRequest, a review) or meta/v1's options kinds (:func:`body_message_class`).  A body is the magic
``k8s\\x00`` and a ``runtime.Unknown`` message (``typeMeta`` with apiVersion and kind, ``raw`` the
object's message, e.g. ``k8s.io.api.apps.v1.Deployment``).  The messages are described by the
descriptors in ``k8s-api.binpb`` (written by ``scripts/k8s-protobuf-descriptors.py`` from a kubectl
binary) and parsed with the ``protobuf`` library; :func:`to_json` turns a message into the
object's JSON form:

- Kubernetes' special types become their JSON forms: Quantity → ``"100m"``, IntOrString → int or
  string, Time/MicroTime → RFC 3339, Duration → Go duration, RawExtension and FieldsV1 → JSON,
  bytes → base64, map entries → objects.
- Embedded Go structs (``json:",inline"``, :data:`INLINE`) have their fields flattened.
- Go's non-pointer fields are always encoded, even when empty, while their JSON form omits
  them: empty strings, zeros, false and empty objects are left out, as ``omitempty`` does —
  except ``replicas`` (a pointer whose 0 means "none").

Responses are never protobuf (JSON is served to clients that accept it too).
"""

from __future__ import annotations

import base64
import datetime as dt
import json
from functools import cache
from pathlib import Path
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import DecodeError, Message

from minik8s.api import errors

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"
DESCRIPTORS = Path(__file__).with_name("k8s-api.binpb")
#: Pointer fields whose zero value is meaningful (kept when decoded as 0).
ZERO_KEPT = frozenset({"replicas"})
_META = "k8s.io.apimachinery.pkg.apis.meta.v1."
_CORE = "k8s.io.api.core.v1."
#: Go structs embedded with ``json:",inline"``: a field in protobuf, their fields flattened in JSON.
INLINE = frozenset({
    _CORE + "Volume.volumeSource", _CORE + "Probe.handler", _CORE + "EphemeralContainer.ephemeralContainerCommon",
    _CORE + "PersistentVolumeSpec.persistentVolumeSource", "k8s.io.api.networking.v1.IngressRule.ingressRuleValue",
    *(_CORE + f"{kind}.localObjectReference" for kind in (
        "ConfigMapEnvSource", "ConfigMapKeySelector", "ConfigMapProjection", "ConfigMapVolumeSource",
        "SecretEnvSource", "SecretKeySelector", "SecretProjection")),
})


@cache
def _pool() -> descriptor_pool.DescriptorPool:
    pool = descriptor_pool.DescriptorPool()
    for fd in descriptor_pb2.FileDescriptorSet.FromString(DESCRIPTORS.read_bytes()).file:
        pool.Add(fd)
    return pool


def message_class(full_name: str) -> type[Message]:
    """The generated class of a message of ``k8s-api.binpb`` (``k8s.io.api.apps.v1.Deployment``,
    ``openapi.v2.Document``)."""
    return message_factory.GetMessageClass(_pool().FindMessageTypeByName(full_name))


def proto_package(api_version: str) -> str:
    """The protobuf package of an apiVersion: ``v1`` → ``k8s.io.api.core.v1``, ``apps/v1`` → ``k8s.io.api.apps.v1``,
    ``networking.k8s.io/v1`` → ``k8s.io.api.networking.v1``, ``rbac.authorization.k8s.io/v1`` →
    ``k8s.io.api.rbac.v1``."""
    group, _, version = api_version.rpartition("/")
    group = group.split(".")[0] if group.endswith(".k8s.io") else group or "core"
    return f"k8s.io.api.{group}.{version}"


def body_message_class(api_version: str, kind: str) -> type[Message]:
    """The message of a body of ``kind`` sent as ``api_version``: the group's own message
    (``policy/v1`` Eviction → ``k8s.io.api.policy.v1.Eviction``), else meta/v1's — client-go registers
    the options kinds (DeleteOptions, ListOptions, ...) in every group version, so a DELETE's body says
    ``v1`` or ``apps/v1`` while its message is ``k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions``.
    Raises KeyError when neither exists."""
    try:
        return message_class(f"{proto_package(api_version)}.{kind}")
    except KeyError:
        return message_class(_META + kind)


def decode(body: bytes) -> dict[str, Any]:
    """The JSON form of a protobuf-encoded object (apiVersion and kind from its envelope).

    Raises BadRequest (400) for a body that is not Kubernetes protobuf, and UnsupportedMediaType
    (415) for a kind whose messages are not known here.
    """
    if not body.startswith(MAGIC):
        raise errors.BadRequest("the request body could not be decoded: protobuf body without the k8s magic prefix")
    try:
        unknown = message_class("k8s.io.apimachinery.pkg.runtime.Unknown").FromString(body[len(MAGIC):])
    except DecodeError as exc:
        raise errors.BadRequest(f"the request body could not be decoded: {exc}") from None
    type_meta = unknown.typeMeta
    api_version, kind = type_meta.apiVersion, type_meta.kind
    try:
        cls = body_message_class(api_version, kind)
    except KeyError:
        raise errors.UnsupportedMediaType(
            f"{kind} in version {api_version!r} cannot be decoded from {MEDIA_TYPE}; send application/json") from None
    try:
        msg = cls.FromString(unknown.raw)
    except DecodeError as exc:
        raise errors.BadRequest(f"the request body could not be decoded: {exc}") from None
    try:
        obj = to_json(msg)
    except ValueError as exc:  # an embedded RawExtension that is not JSON
        raise errors.BadRequest(f"the request body could not be decoded: {exc}") from None
    return {"apiVersion": api_version, "kind": kind, **obj}


def to_json(msg: Message) -> dict[str, Any]:
    """The JSON form of a message of Kubernetes' API (see the module docstring)."""
    out: dict[str, Any] = {}
    for field, value in msg.ListFields():
        converted = _field_json(field, value)
        if _empty(converted) and not (field.name in ZERO_KEPT and converted == 0):
            continue
        if field.full_name in INLINE and isinstance(converted, dict):
            out.update(converted)
            continue
        out[field.name] = converted  # Kubernetes' message fields are named as in JSON
    return out


def _empty(value: Any) -> bool:
    if isinstance(value, bool):
        return value is False
    return value is None or value in ("", 0) or value == {} or value == []


def _field_json(field: FieldDescriptor, value: Any) -> Any:
    if field.type == FieldDescriptor.TYPE_MESSAGE and field.message_type.GetOptions().map_entry:
        value_field = field.message_type.fields_by_name["value"]
        return {key: _value_json(value_field, item) for key, item in value.items()}
    if field.is_repeated:
        return [_value_json(field, item) for item in value]
    return _value_json(field, value)


def _value_json(field: FieldDescriptor, value: Any) -> Any:
    if field.type == FieldDescriptor.TYPE_BYTES:
        return base64.b64encode(value).decode()
    if field.type != FieldDescriptor.TYPE_MESSAGE:
        return value
    return _special(field.message_type, value)


def _special(descriptor: Descriptor, msg: Any) -> Any:
    name = descriptor.full_name
    if name == "k8s.io.apimachinery.pkg.api.resource.Quantity":
        return msg.string
    if name == "k8s.io.apimachinery.pkg.util.intstr.IntOrString":
        return msg.strVal if msg.type == 1 else msg.intVal
    if name in (_META + "Time", _META + "MicroTime"):
        if not msg.seconds and not msg.nanos:
            return None  # Go's zero time, null in JSON
        when = dt.datetime.fromtimestamp(msg.seconds, dt.UTC)
        if name.endswith("MicroTime"):
            return when.replace(microsecond=msg.nanos // 1000).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        return when.strftime("%Y-%m-%dT%H:%M:%SZ")
    if name == _META + "Duration":
        return f"{msg.duration / 1e9:g}s"
    if name in ("k8s.io.apimachinery.pkg.runtime.RawExtension", _META + "FieldsV1"):
        raw = msg.raw if hasattr(msg, "raw") else msg.Raw
        return json.loads(raw) if raw else None
    return to_json(msg)


_RANGES = {FieldDescriptor.TYPE_INT32: ("int32", -(2**31), 2**31 - 1),
           FieldDescriptor.TYPE_SINT32: ("int32", -(2**31), 2**31 - 1),
           FieldDescriptor.TYPE_UINT32: ("uint32", 0, 2**32 - 1),
           FieldDescriptor.TYPE_INT64: ("int64", -(2**63), 2**63 - 1),
           FieldDescriptor.TYPE_SINT64: ("int64", -(2**63), 2**63 - 1),
           FieldDescriptor.TYPE_UINT64: ("uint64", 0, 2**64 - 1)}
_INT64 = _RANGES[FieldDescriptor.TYPE_INT64]


def integer_range_causes(api_version: str, kind: str, obj: Any) -> list[tuple[str, Any, str]]:
    """``(field path, value, message)`` for every integer of ``obj`` outside the range of its Go
    type (int32, int64...), as Kubernetes' decoder refuses them: the types come from the kind's
    protobuf message where Kubernetes has one; any other integer must fit int64."""
    try:
        descriptor: Descriptor | None = _pool().FindMessageTypeByName(f"{proto_package(api_version)}.{kind}")
    except KeyError:
        descriptor = None
    causes: list[tuple[str, Any, str]] = []
    _check_ranges(descriptor, obj, "", causes)
    return causes


def _check_ranges(descriptor: Descriptor | None, value: Any, path: str, causes: list[tuple[str, Any, str]],
                  scalar: tuple[str, int, int] = _INT64) -> None:
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        name, low, high = scalar
        if not low <= value <= high:
            causes.append((path, value, f"must be an {name} ({low} to {high})"))
        return
    if isinstance(value, list):
        for i, item in enumerate(value):
            _check_ranges(descriptor, item, f"{path}[{i}]", causes, scalar)
        return
    if not isinstance(value, dict):
        return
    for key, item in value.items():
        where = f"{path}.{key}" if path else str(key)
        field = _field_named(descriptor, str(key)) if descriptor is not None else None
        if field is None:
            _check_ranges(None, item, where, causes)
            continue
        if field.type == FieldDescriptor.TYPE_MESSAGE and field.message_type.GetOptions().map_entry:
            value_field = field.message_type.fields_by_name["value"]
            if isinstance(item, dict):
                for k, v in item.items():
                    _check_field(value_field, v, f"{where}.{k}", causes)
            continue
        if field.is_repeated and isinstance(item, list):
            for i, v in enumerate(item):
                _check_field(field, v, f"{where}[{i}]", causes)
            continue
        _check_field(field, item, where, causes)


def _check_field(field: FieldDescriptor, value: Any, path: str, causes: list[tuple[str, Any, str]]) -> None:
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        if field.message_type.full_name == "k8s.io.apimachinery.pkg.util.intstr.IntOrString":
            _check_ranges(None, value, path, causes, _RANGES[FieldDescriptor.TYPE_INT32])
        else:
            _check_ranges(field.message_type, value, path, causes)
        return
    _check_ranges(None, value, path, causes, _RANGES.get(field.type, _INT64))


def _field_named(descriptor: Descriptor, name: str) -> FieldDescriptor | None:
    """The field ``name`` of ``descriptor``, looking into its inline (embedded) structs too."""
    field = descriptor.fields_by_name.get(name)
    if field is not None:
        return field
    for inline in descriptor.fields:
        if inline.full_name in INLINE and inline.type == FieldDescriptor.TYPE_MESSAGE:
            found = _field_named(inline.message_type, name)
            if found is not None:
                return found
    return None
