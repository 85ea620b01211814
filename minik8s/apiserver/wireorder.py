"""Objects in Kubernetes' field order: the order kube-apiserver's JSON has, so minik8s' bytes match.

kube-apiserver encodes an object from its Go struct, so its JSON lists ``kind`` and ``apiVersion``
(the inline ``TypeMeta``) first, then ``metadata``, ``spec``, ``status`` — and inside each struct the
fields in the order the Go type declares them (``ObjectMeta``: ``name, generateName, namespace,
selfLink, uid, resourceVersion, generation, creationTimestamp, ...``).  The protobuf messages of
Kubernetes' types (``k8s-api.binpb``, :mod:`minik8s.apiserver.protobuf`) declare their fields in that
same Go order (go-to-protobuf writes them from the struct), so they are the source here, with the
inline structs (``VolumeSource`` in ``Volume``, ...) flattened in place.

:func:`in_wire_order` is applied when an object is written to storage (:mod:`minik8s.apiserver.storage`),
so every later read, list and watch event has the order without any work per read.  Fields a message
does not know (minik8s' own kinds, custom resources' content) keep their own order after the known
ones; kinds without a message (Function, GPUJob, custom resources) get ``kind``, ``apiVersion``,
``metadata`` in order and the rest as given.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor

from minik8s.apiserver import protobuf

#: An object's top-level fields before its own (``TypeMeta`` inline, then ``ObjectMeta``).
HEAD = ("kind", "apiVersion", "metadata")
_OBJECT_META = "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta"
#: Messages with a JSON form of their own (a string, a number, any JSON): nothing inside to order.
_OPAQUE = frozenset({
    "k8s.io.apimachinery.pkg.api.resource.Quantity", "k8s.io.apimachinery.pkg.util.intstr.IntOrString",
    "k8s.io.apimachinery.pkg.apis.meta.v1.Time", "k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime",
    "k8s.io.apimachinery.pkg.apis.meta.v1.Duration", "k8s.io.apimachinery.pkg.runtime.RawExtension",
    "k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1",
})
_LAST = 1 << 30

class _Positions(dict[str, int]):
    """json name → position in the message; a name the message does not know comes last."""

    def __missing__(self, key: str) -> int:
        return _LAST


#: (positions of the fields, the message of each field whose value has fields of its own, the names
#: of those whose value is a map of such messages)
_Plan = tuple[_Positions, dict[str, Descriptor], frozenset[str]]


@cache
def _plan(descriptor: Descriptor) -> _Plan:
    positions, children, maps = _Positions(), {}, set()

    def add(message: Descriptor) -> None:
        for field in message.fields:
            if field.full_name in protobuf.INLINE and field.type == FieldDescriptor.TYPE_MESSAGE:
                add(field.message_type)  # an embedded struct's fields stand where it stands
                continue
            if field.name in positions:
                continue
            positions[field.name] = len(positions)
            if field.type != FieldDescriptor.TYPE_MESSAGE:
                continue
            child = field.message_type
            if child.GetOptions().map_entry:
                value = child.fields_by_name["value"]
                if value.type != FieldDescriptor.TYPE_MESSAGE:
                    continue
                child = value.message_type
                maps.add(field.name)
            if child.full_name not in _OPAQUE:
                children[field.name] = child

    add(descriptor)
    return positions, children, frozenset(maps)


def _ordered(value: Any, descriptor: Descriptor) -> Any:
    if isinstance(value, list):
        return [_ordered(item, descriptor) for item in value]
    if not isinstance(value, dict):
        return value
    positions, children, maps = _plan(descriptor)
    out: dict[str, Any] = {}
    for key in sorted(value, key=positions.__getitem__):  # stable: unknown keys keep their order
        item = value[key]
        child = children.get(key)
        if child is not None:
            if key in maps and isinstance(item, dict):
                item = {k: _ordered(v, child) for k, v in item.items()}
            else:
                item = _ordered(item, child)
        out[key] = item
    return out


@cache
def _kind_message(api_version: str, kind: str) -> Descriptor | None:
    try:
        return protobuf.body_message_class(api_version, kind).DESCRIPTOR
    except KeyError:
        return None


def in_wire_order(obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` (an object with ``apiVersion`` and ``kind``) with its fields in kube-apiserver's order,
    at every depth its kind's message describes (see the module docstring); a new dict, ``obj`` is
    left as it is.  A value that is no object (an allocator's record) is returned unchanged."""
    kind, api_version = obj.get("kind"), obj.get("apiVersion")
    if not isinstance(kind, str) or not isinstance(api_version, str):
        return obj
    message = _kind_message(api_version, kind)
    if message is not None and "metadata" in message.fields_by_name:
        body = _ordered(obj, message)
    else:
        body = dict(obj)
        if isinstance(body.get("metadata"), dict):
            body["metadata"] = _ordered(body["metadata"], protobuf.message_class(_OBJECT_META).DESCRIPTOR)
    out = {key: body[key] for key in HEAD if key in body}
    out.update((k, v) for k, v in body.items() if k not in out)
    return out


#: ObjectMeta's fields after ``resourceVersion`` (where a read puts the revision back in its place).
AFTER_RESOURCE_VERSION = frozenset({
    "generation", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
    "annotations", "ownerReferences", "finalizers", "managedFields"})


def with_resource_version(meta: dict[str, Any], resource_version: str) -> dict[str, Any]:
    """``meta`` (ObjectMeta in wire order) with ``resourceVersion`` set, in its place (after ``uid``);
    a new dict."""
    out: dict[str, Any] = {}
    for key, value in meta.items():
        if key in AFTER_RESOURCE_VERSION and "resourceVersion" not in out:
            out["resourceVersion"] = resource_version
        if key != "resourceVersion":
            out[key] = value
    out["resourceVersion"] = resource_version  # in place when set above; else last, as in ObjectMeta
    return out
