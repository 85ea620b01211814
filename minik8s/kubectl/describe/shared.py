"""What several ``kubectl describe`` printers share: the :data:`Describer` signature, the Events
lookup, the ``Controlled By`` owner, the Conditions table, and the generic rendering kubectl uses
for kinds without a printer of their own (metadata, spec, status as indented ``Title Case:`` fields).

The line-level sections (Writer, labels, annotations, events table, containers, volumes, pod
templates) live in :mod:`minik8s.kubectl.sections`, which ``kubectl rollout history`` shares too.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.kubejsonpath import go_sprint
from minik8s.api.resourcetypes import ResourceType
from minik8s.kubectl.sections import Writer, meta_of, write_annotations, write_events, write_labels
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
#: Words kubectl's ``smartLabelFor`` writes in capitals.
ACRONYMS = frozenset({"API", "URL", "UID", "OSB", "GUID"})
#: The fields the generic rendering leaves out (kubectl's skip list: shown above, or managedFields).
SKIPPED = frozenset({".metadata.managedFields", ".metadata.name", ".metadata.namespace", ".metadata.labels",
                     ".metadata.annotations"})


def _camel_split(word: str) -> list[str]:
    """Runs of one character class (lower, upper, other), an upper run giving its last letter to a
    lower run that follows (``fatih/camelcase.Split``: ``podIP`` -> pod IP, ``HTTPServer`` -> HTTP Server)."""
    def cls(ch: str) -> int:
        return 1 if ch.islower() else 2 if ch.isupper() else 3
    runs: list[list[str]] = []
    for ch in word:
        if runs and cls(runs[-1][-1]) == cls(ch):
            runs[-1].append(ch)
        else:
            runs.append([ch])
    for i in range(len(runs) - 1):
        if cls(runs[i][0]) == 2 and cls(runs[i + 1][0]) == 1:
            runs[i + 1].insert(0, runs[i].pop())
    return ["".join(r) for r in runs if r]


def smart_label(key: str) -> str:
    """kubectl's label for a field (``smartLabelFor``): ``apiVersion`` -> ``API Version``, ``podIP`` ->
    ``Pod IP``; a key with anything but letters and ``-`` (``app.kubernetes.io/name``, ``v1``) as it is."""
    if not key or any(not (ch.isalpha() or ch == "-") for ch in key):
        return key
    out = []
    for part in _camel_split(key):
        if part == "_":
            continue
        out.append(part.upper() if part.upper() in ACRONYMS else part[:1].upper() + part[1:])
    return " ".join(out)


def write_unstructured(w: Writer, level: int, content: dict[str, Any], prefix: str = "") -> None:
    """kubectl's ``printUnstructuredContent``: keys sorted, a map or list as ``Label:`` with its
    members one level deeper (a list's maps one after the other), a scalar as ``Label:  value``
    (the lines after the first of a multi-line string at the margin, as Go writes them)."""
    for key in sorted(content):
        value, path = content[key], f"{prefix}.{key}"
        if path in SKIPPED:
            continue
        label = smart_label(key)
        if isinstance(value, dict):
            w.write(level, f"{label}:")
            write_unstructured(w, level + 1, value, path)
        elif isinstance(value, list):
            w.write(level, f"{label}:")
            for item in value:
                if isinstance(item, dict):
                    write_unstructured(w, level + 1, item, path)
                else:
                    _write_text(w, level + 1, "", go_sprint(item))
        else:
            _write_text(w, level, f"{label}:\t", go_sprint(value))


def _write_text(w: Writer, level: int, lead: str, text: str) -> None:
    """``lead`` + ``text`` at ``level``; a multi-line text's further lines at the margin."""
    first, *rest = text.split("\n")
    w.write(level, lead + first)
    for line in rest:
        w.write(0, line)


async def describe_generic(s: Session, rt: ResourceType, obj: Obj) -> str:
    """Any kind without a printer of its own, as kubectl's ``GenericDescriberFor`` prints an
    unstructured object: Name, Namespace (empty for a cluster-scoped object), Labels, Annotations,
    then every field (:func:`write_unstructured`: API Version, Kind, Metadata, Spec, Status...), then Events."""
    meta = meta_of(obj)
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}")
    w.write(0, f"Namespace:\t{meta.get('namespace') or ''}")
    write_labels(w, "Labels", meta.get("labels"))
    write_annotations(w, "Annotations", meta.get("annotations"))
    write_unstructured(w, 0, obj)
    write_events(w, await fetch_events(s, obj, rt))
    return w.text()
