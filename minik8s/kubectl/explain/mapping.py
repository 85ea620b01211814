"""Which group/version/resource ``kubectl explain`` explains: kubectl's REST mapper, rebuilt from
the server's discovery documents.

What kubectl does, and so what this does:

* a short name (``po``, ``deploy``, ``ct``) is first expanded to its resource and group, unless
  the word is some resource's own name or singular name; a short name that several resources
  share is expanded to the first and warned about (``short name "x" could also match lower
  priority resource y``);
* the word (lowercased) then matches every group/version's resources by plural or singular name
  (a kind is matched through its singular name), and also the ``<kind>list`` and ``list``
  resources kubectl guesses for every kind's list;
* :meth:`RestMapper.resources_for` lists the matches in discovery order (core first, then each
  group's versions as listed); :meth:`RestMapper.resource_for` picks one by kubectl's priority
  (core v1, then each group's preferred version, then its other versions);
* nothing matched: ``the server doesn't have a resource type "x"``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class GVR:
    """A group/version/resource (``group`` "" for the core group)."""

    group: str
    version: str
    resource: str

    def __str__(self) -> str:
        """As client-go prints one: ``apps/v1, Resource=deployments``, ``/v1, Resource=pods``."""
        return f"{self.group}/{self.version}, Resource={self.resource}"

    @property
    def group_resource(self) -> str:
        """``deployments.apps``, ``pods``."""
        return f"{self.resource}.{self.group}" if self.group else self.resource


class NoMatch(Exception):
    """No resource of that name; ``str()`` is kubectl's message."""

    def __init__(self, resource: str, group: str = "") -> None:
        where = f" in group {go_quote(group)}" if group else ""
        super().__init__(f"the server doesn't have a resource type {go_quote(resource)}{where}")


def go_quote(text: str) -> str:
    """Go's ``%q`` of a string."""
    out = ['"']
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif char == "\r":
            out.append("\\r")
        elif not char.isprintable():
            code = ord(char)
            out.append(f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def guess_resource(kind: str) -> tuple[str, str]:
    """(plural, singular) kubectl guesses from a kind (``Pod`` -> ``pods``, ``Policy`` -> ``policies``)."""
    singular = kind.lower()
    if not singular:
        return "", ""
    if singular.endswith("endpoints"):
        return singular, singular
    if singular.endswith("s"):
        return singular + "es", singular
    if singular.endswith("y"):
        return singular[:-1] + "ies", singular
    return singular + "s", singular


@dataclass
class GroupVersion:
    """One group/version's resources from discovery: plural -> (singular, kind)."""

    group: str
    version: str
    resources: dict[str, tuple[str, str]]
    #: the discovery rows (name, singularName, shortNames), for the short-name expansion
    rows: list[dict[str, Any]]


class RestMapper:
    """kubectl's resource mapping over ``versions`` (discovery order) and ``priority`` (the
    (group, version) pairs in kubectl's preference order; version None stands for any)."""

    def __init__(self, versions: list[GroupVersion], priority: list[tuple[str, str | None]],
                 warn: Callable[[str], None] | None = None) -> None:
        self.versions = versions
        self.priority = priority
        self.warn = warn

    @classmethod
    def from_discovery(cls, groups: list[tuple[str, list[str], str]], documents: dict[tuple[str, str], Any],
                       warn: Callable[[str], None] | None = None) -> RestMapper:
        """From the groups (name, versions as listed, preferred version; core first) and each
        group/version's ``APIResourceList`` (a missing one is skipped, as kubectl skips it)."""
        versions: list[GroupVersion] = []
        priority: list[tuple[str, str | None]] = [("", "v1")]
        for group, listed, preferred in groups:
            if (group, preferred) in documents:
                priority.append((group, preferred))
            for version in listed:
                doc = documents.get((group, version))
                if doc is None:
                    continue
                if version != preferred:
                    priority.append((group, version))
                resources: dict[str, tuple[str, str]] = {}
                rows = [r for r in (doc.get("resources") or []) if isinstance(r, dict)]
                for row in rows:
                    name = str(row.get("name") or "")
                    if "/" in name:
                        continue
                    kind = str(row.get("kind") or "")
                    singular = str(row.get("singularName") or "") or guess_resource(kind)[1]
                    resources[name] = (singular, kind)
                    plural, single = guess_resource(kind + "List")
                    resources[plural] = (single, kind + "List")
                resources["lists"] = ("list", "List")
                versions.append(GroupVersion(group, version, resources, rows))
        priority += [(group, None) for group, _, _ in groups]
        return cls(versions, priority, warn)

    def expand(self, name: str) -> tuple[str, str]:
        """(group, resource) of what the user typed, a short name expanded."""
        for gv in self.versions:
            for row in gv.rows:
                if name in (row.get("name"), row.get("singularName")):
                    return "", name
        found: tuple[str, str] | None = None
        warned: set[tuple[str, str]] = set()
        for gv in self.versions:
            for row in gv.rows:
                if name not in (row.get("shortNames") or []):
                    continue
                long_form = (gv.group, str(row.get("name") or ""))
                if found is None:
                    found = long_form
                elif long_form != found and long_form not in warned:
                    warned.add(long_form)
                    if self.warn is not None:
                        group_resource = f"{long_form[1]}.{long_form[0]}" if long_form[0] else long_form[1]
                        self.warn(f'short name {go_quote(name)} could also match lower priority resource '
                                  f'{group_resource}')
        return found if found is not None else ("", name)

    def resources_for(self, name: str) -> list[GVR]:
        """Every resource ``name`` may mean, in discovery order (NoMatch when none)."""
        group, resource = self.expand(name)
        wanted = resource.lower()
        found: list[GVR] = []

        def matching(gv: GroupVersion) -> list[GVR]:
            return [GVR(gv.group, gv.version, plural) for plural, (singular, _) in gv.resources.items()
                    if wanted in (plural, singular)]

        for gv in self.versions:
            if group:
                hits = matching(gv) if gv.group == group else []
                if not hits and gv.group.startswith(group):
                    hits = matching(gv)
            else:
                hits = matching(gv)
            found += [hit for hit in hits if hit not in found]
        if not found:
            raise NoMatch(resource, group)
        return found

    def resource_for(self, name: str) -> GVR:
        """The one resource ``name`` means, by kubectl's priority (NoMatch when none)."""
        remaining = self.resources_for(name)
        for group, version in self.priority:
            matched = [gvr for gvr in remaining if gvr.group == group and version in (None, gvr.version)]
            if len(matched) == 1:
                return matched[0]
            if matched:
                remaining = matched
        return remaining[0]

    def kind_for(self, gvr: GVR) -> str:
        """The kind of a resource ("" when unknown): the first group/version serving it when
        ``gvr.version`` is ""."""
        for gv in self.versions:
            if gv.group != gvr.group or (gvr.version and gv.version != gvr.version):
                continue
            for plural, (singular, kind) in gv.resources.items():
                if gvr.resource in (plural, singular):
                    return kind
        return ""


def split_with_matching_prefix(mapper: RestMapper, argument: str) -> tuple[GVR, list[str]]:
    """The resource and field path of ``RESOURCE[.GROUP][.FIELD...]``: the first resource the
    word before the first dot may mean whose ``resource.group`` begins the argument, the rest
    being the field path; else the first resource, the words after the first dot the path."""
    argument = argument.removesuffix(".")
    parts = argument.split(".")
    candidates = mapper.resources_for(parts[0])
    for gvr in candidates:
        if argument.startswith(gvr.group_resource):
            suffix = argument[len(gvr.group_resource):]
            return gvr, suffix.split(".")[1:] if suffix else []
    return candidates[0], parts[1:]


def split_plain(mapper: RestMapper, argument: str) -> tuple[GVR, list[str]]:
    """The resource (the word before the first dot, by priority) and the field path after it
    (how kubectl reads the argument with ``--api-version``)."""
    parts = argument.removesuffix(".").split(".")
    return mapper.resource_for(parts[0]), parts[1:]


def parse_group_version(text: str) -> tuple[str, str]:
    """(group, version) of ``--api-version`` (``v1``, ``apps/v1``); ValueError with kubectl's
    words for more than one ``/``."""
    if text in ("", "/"):
        return "", ""
    if text.count("/") == 0:
        return "", text
    if text.count("/") == 1:
        group, _, version = text.partition("/")
        return group, version
    raise ValueError(f"unexpected GroupVersion string: {text}")
