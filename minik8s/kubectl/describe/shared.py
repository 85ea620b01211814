"""What several ``kubectl describe`` printers share: the :data:`Describer` signature, the Events
lookup, the ``Controlled By`` owner, the Conditions table, and the generic rendering kubectl uses
for kinds without a printer of their own (metadata, spec, status as indented ``Title Case:`` fields).

The line-level sections (Writer, labels, annotations, events table, containers, volumes, pod
templates) live in :mod:`minik8s.kubectl.sections`, which ``kubectl rollout history`` shares too.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.resourcetypes import ResourceType
from minik8s.kubectl.sections import Writer, meta_of, text_of, write_annotations, write_events, write_labels
from minik8s.kubectl.session import Session

#: A printer: the session (for follow-up reads such as events), the object's kind and the object;
#: returns the description's text, ending in a newline.
Describer = Callable[[Session, ResourceType, Obj], Awaitable[str]]


async def fetch_events(s: Session, obj: Obj, rt: ResourceType) -> list[Obj] | None:
    """Events about ``obj`` (fieldSelector on involvedObject); None when events are not served."""
    try:
        ev_rt = s.registry.by_kind("v1", "Event")
        if ev_rt is None:
            return None
        meta = meta_of(obj)
        fields = [f"involvedObject.name={meta.get('name')}"]
        if rt.namespaced:
            fields.append(f"involvedObject.namespace={meta.get('namespace')}")
            if meta.get("uid"):
                fields.append(f"involvedObject.uid={meta['uid']}")
            namespace = meta.get("namespace")
        else:
            fields.append(f"involvedObject.kind={rt.kind}")
            namespace = None
        listed = await s.client.list_all(ev_rt, namespace, field_selector=",".join(fields))
        return list(listed.get("items") or [])
    except errors.APIError:
        return None


def controlled_by(obj: Obj) -> str:
    """``Kind/name`` of the object's controller owner reference (kubectl's ``Controlled By``), or ``""``."""
    for ref in meta_of(obj).get("ownerReferences") or []:
        if ref.get("controller"):
            return f"{ref.get('kind')}/{ref.get('name')}"
    return ""


def write_conditions(w: Writer, conditions: list[Obj]) -> None:
    """The Conditions table (Type Status Reason Message); nothing when there are none."""
    if not conditions:
        return
    w.write(0, "Conditions:")
    w.write(1, "Type\tStatus\tReason\tMessage")
    w.write(1, "----\t------\t------\t-------")
    for c in conditions:
        w.write(1, f"{c.get('type')}\t{c.get('status')}\t{c.get('reason') or ''}\t{c.get('message') or ''}")


# ------------------------------------------------------------------ generic
ACRONYMS = {"api", "cidr", "cpu", "dns", "fs", "gpu", "http", "https", "id", "ip", "ips", "json", "os", "tcp",
            "tls", "ttl", "udp", "uid", "uri", "url", "uuid"}


def smart_label(key: str) -> str:
    """kubectl's label for a field: ``apiVersion`` -> ``API Version``, ``podIP`` -> ``Pod IP``."""
    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+|[A-Z]", key)
    out = []
    for word in words or [key]:
        low = word.lower()
        if low in ACRONYMS:
            out.append(low.upper() if low != "ips" else "IPs")
        else:
            out.append(word[:1].upper() + word[1:])
    return " ".join(out)


#: Maps whose keys are data (label keys, resource names), shown as they are, not as ``Title Case``.
VERBATIM_MAPS = {"labels", "annotations", "matchLabels", "nodeSelector", "selector", "data", "stringData",
                 "binaryData", "capacity", "allocatable", "limits", "requests", "hard", "used"}


def write_value(w: Writer, level: int, key: str, value: Any, verbatim: bool = False) -> None:
    """One field of the generic rendering (maps and lists nest one level deeper)."""
    label = key if verbatim else smart_label(key)
    if isinstance(value, dict):
        if not value:
            return
        w.write(level, f"{label}:")
        data_map = key in VERBATIM_MAPS and not any(isinstance(v, dict | list) for v in value.values())
        for k in sorted(value):
            write_value(w, level + 1, k, value[k], verbatim=data_map)
    elif isinstance(value, list):
        if not value:
            return
        w.write(level, f"{label}:")
        for item in value:
            if isinstance(item, dict):
                for k in sorted(item):
                    write_value(w, level + 1, k, item[k])
            else:
                w.write(level + 1, text_of(item))
    else:
        text = text_of(value)
        if "\n" in text:
            w.write(level, f"{label}:")
            for line in text.splitlines():
                w.write(level + 1, line)
        else:
            w.write(level, f"{label}:\t{text}")


async def describe_generic(s: Session, rt: ResourceType, obj: Obj) -> str:
    """Any kind: Name, Namespace, Labels, Annotations, then the object's fields as ``Title Case:`` lines."""
    meta = meta_of(obj)
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}")
    if rt.namespaced:
        w.write(0, f"Namespace:\t{meta.get('namespace', '')}")
    write_labels(w, "Labels", meta.get("labels"))
    write_annotations(w, "Annotations", meta.get("annotations"))
    w.write(0, f"API Version:\t{obj.get('apiVersion') or rt.api_version}")
    w.write(0, f"Kind:\t{obj.get('kind') or rt.kind}")
    rest_meta = {k: v for k, v in meta.items()
                 if k not in ("name", "namespace", "labels", "annotations", "managedFields")}
    write_value(w, 0, "metadata", rest_meta)
    for key in obj:
        if key not in ("apiVersion", "kind", "metadata"):
            write_value(w, 0, key, obj[key])
    write_events(w, await fetch_events(s, obj, rt))
    return w.text()
