"""Kustomize, as embedded in kubectl 1.32 (kustomize v5): ``kubectl kustomize DIR`` and ``-k DIR``.

:func:`build` turns a directory holding ``kustomization.yaml`` (or ``kustomization.yml`` or
``Kustomization``) into a list of objects (plain dicts); :func:`render` writes them as
``kubectl kustomize`` prints them: each object's YAML with keys sorted, separated by ``---``, in
kustomize's legacy order (Namespace, ResourceQuota, StorageClass, CustomResourceDefinition,
ServiceAccount, ..., ConfigMap, Secret, ..., Service, ..., Deployment, StatefulSet, CronJob,
PodDisruptionBudget, then the other kinds, the webhook configurations last; within one kind by
namespace, then name).

Supported fields: ``resources`` (files and directories with a kustomization of their own; the
legacy ``bases``), ``components`` (``kind: Component`` directories, run after the generators on
what their parent has so far), ``namespace``, ``namePrefix``/``nameSuffix``, ``commonLabels``, ``labels``
(``includeSelectors``, ``includeTemplates``), ``commonAnnotations``, ``images``, ``replicas``,
``configMapGenerator``/``secretGenerator`` (``literals``, ``files``, ``envs``/``env``,
``behavior``, ``options``, with ``generatorOptions``), ``patches``, ``patchesStrategicMerge``,
``patchesJson6902``, ``replacements`` (field paths with ``[key=value]``, indexes and ``*``; the
``delimiter``/``index``/``create`` options) and ``sortOptions`` (``fifo``, or ``legacy`` with kinds
of its own; the top kustomization's only).  Any other field is an error (:class:`KustomizeError`),
never ignored.  Files must lie in or below their kustomization's directory (kustomize's load
restriction); directories of other kustomizations may lie anywhere.

The transformers run in kustomize's order: strategic merge patches, patches, namespace, prefix,
suffix, labels, annotations, JSON 6902 patches, replicas, images, replacements.  As in kustomize, the
generated names' content hashes are added last, once, at the top kustomization, and then the
references to renamed ConfigMaps and Secrets in pod templates (env ``valueFrom``, ``envFrom``,
volumes, projected volumes, ``imagePullSecrets``) follow the new names.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer

from minik8s.kubectl.errors import KubectlError

Obj = dict[str, Any]

KUSTOMIZATION_FILES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
#: The fields a Kustomization may have that this module implements.
SUPPORTED = {"apiVersion", "kind", "metadata", "resources", "bases", "namespace", "namePrefix", "nameSuffix",
             "commonLabels", "labels", "commonAnnotations", "images", "replicas", "configMapGenerator",
             "secretGenerator", "generatorOptions", "patches", "patchesStrategicMerge", "patchesJson6902",
             "components", "sortOptions", "replacements"}
#: The Kustomization fields kustomize knows that this module does not implement.
UNSUPPORTED = {"crds", "generators", "transformers", "validators", "vars",
               "openapi", "helmCharts", "helmGlobals", "helmChartInflationGenerator", "configurations",
               "buildMetadata", "imageTags"}

ORDER_FIRST = ["Namespace", "ResourceQuota", "StorageClass", "CustomResourceDefinition", "ServiceAccount",
               "PodSecurityPolicy", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding", "ConfigMap",
               "Secret", "Endpoints", "Service", "LimitRange", "PriorityClass", "PersistentVolume",
               "PersistentVolumeClaim", "Deployment", "StatefulSet", "CronJob", "PodDisruptionBudget"]
ORDER_LAST = ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]

#: Kinds kustomize knows to be cluster-scoped (the namespace transformer leaves them alone).
CLUSTER_SCOPED = {"Namespace", "Node", "PersistentVolume", "StorageClass", "ClusterRole", "ClusterRoleBinding",
                  "CustomResourceDefinition", "PriorityClass", "APIService", "MutatingWebhookConfiguration",
                  "ValidatingWebhookConfiguration", "CertificateSigningRequest", "IngressClass", "RuntimeClass",
                  "PodSecurityPolicy", "VolumeAttachment", "CSIDriver", "CSINode", "ComponentStatus",
                  "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "FlowSchema",
                  "PriorityLevelConfiguration", "SelfSubjectReview", "TokenReview", "SubjectAccessReview"}
#: Kinds whose names prefixes and suffixes leave alone.
NO_RENAME = {"Namespace", "CustomResourceDefinition", "APIService"}
WORKLOADS = {"Deployment", "ReplicaSet", "DaemonSet", "StatefulSet", "Job", "ReplicationController"}


class KustomizeError(KubectlError):
    """A kustomization that cannot be built; the message is kustomize's."""


@dataclass
class Resource:
    """One object and the names it had (for references that follow renames)."""

    obj: Obj
    original_name: str
    hash_suffix: bool = False
    behavior: str = "create"
    previous: list[str] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return str(self.obj.get("kind") or "")

    @property
    def name(self) -> str:
        return str((self.obj.get("metadata") or {}).get("name") or "")

    @property
    def namespace(self) -> str:
        return str((self.obj.get("metadata") or {}).get("namespace") or "")

    @property
    def group(self) -> str:
        api_version = str(self.obj.get("apiVersion") or "")
        return api_version.split("/", 1)[0] if "/" in api_version else ""

    @property
    def version(self) -> str:
        return str(self.obj.get("apiVersion") or "").rsplit("/", 1)[-1]

    def rename(self, name: str) -> None:
        self.previous.append(self.name)
        self.obj.setdefault("metadata", {})["name"] = name


# ------------------------------------------------------------------ reading
def _yaml_docs(text: str, source: str) -> list[Any]:
    from minik8s.api import decoding
    try:
        return [d for d in decoding.load_yaml_all(text) if d is not None]
    except decoding.DecodeError as exc:
        raise KustomizeError(f"{source}: {exc}") from None


def _kustomization_file(directory: Path) -> Path:
    for name in KUSTOMIZATION_FILES:
        if (directory / name).is_file():
            return directory / name
    raise KustomizeError(f"unable to find one of 'kustomization.yaml', 'kustomization.yml' or 'Kustomization' "
                         f"in directory '{directory}'")


def _objects_of(path: Path) -> list[Obj]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise KustomizeError(f"cannot read {path}: {exc}") from None
    out: list[Obj] = []
    for doc in _yaml_docs(text, str(path)):
        if not isinstance(doc, dict):
            raise KustomizeError(f"{path}: a resource must be an object")
        kind = doc.get("kind")
        if isinstance(kind, str) and kind.endswith("List") and isinstance(doc.get("items"), list):
            out += [item for item in doc["items"] if isinstance(item, dict)]
        else:
            if not doc.get("kind"):
                raise KustomizeError(f"missing kind in object {doc}")
            out.append(doc)
    return out


class _TargetError(KustomizeError):
    """A kustomization directory that cannot be made a target (no or a bad kustomization file)."""


def _inside(base: Path, path: Path) -> bool:
    """kustomize's load restriction (root only): files must be in or below the kustomization's directory."""
    real = Path(os.path.realpath(path))
    return real == base.resolve() or base.resolve() in real.parents


def _read_file(base: Path, rel: str) -> bytes:
    path = Path(os.path.normpath(base / rel))
    if path.exists() and not _inside(base, path):
        raise KustomizeError(f"security; file '{path}' is not in or below '{base.resolve()}'")
    try:
        return path.read_bytes()
    except OSError:
        raise KustomizeError(f"evalsymlink failure on '{path}' : lstat {path}: no such file or directory") from None


# ------------------------------------------------------------------ generators
def _go_json(value: Any) -> str:
    import json
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def content_hash(obj: Obj) -> str:
    """kustomize's name suffix for a generated ConfigMap or Secret: the SHA-256 of the JSON of
    ``kind``, ``data`` (``binaryData`` of a ConfigMap, ``type`` and ``stringData`` of a Secret, when
    present) and ``name`` (kustomize v5 looks the name up as one field ``metadata/name``, which it
    never finds, so the name is always empty), its first 10 hex digits with 0, 1, 3, a and e
    written g, h, k, m and t."""
    kind = obj.get("kind")
    data = obj.get("data")
    m: dict[str, Any] = {"kind": kind, "name": "", "data": data if isinstance(data, dict) else ""}
    if kind == "ConfigMap":
        if isinstance(obj.get("binaryData"), dict):
            m["binaryData"] = obj["binaryData"]
    else:
        m["type"] = obj.get("type", "")
        if isinstance(obj.get("stringData"), dict):
            m["stringData"] = obj["stringData"]
    digest = hashlib.sha256(_go_json(m).encode()).hexdigest()
    return digest[:10].translate(str.maketrans("013ae", "ghkmt"))


_QUOTED = re.compile(r'^(["\'])(.*)\1$', re.S)


def _pair(text: str, what: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep:
        raise KustomizeError(f"invalid literal source {text}, expected key=value")
    if what == "literal":
        m = _QUOTED.match(value)
        if m:
            value = m.group(2)
    return key, value


def _env_pairs(content: str, path: str) -> list[tuple[str, str]]:
    pairs = []
    for number, raw in enumerate(content.splitlines(), 1):
        line = raw.lstrip("\ufeff").lstrip() if number == 1 else raw.lstrip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not key or not re.fullmatch(r"[-._a-zA-Z0-9]+", key):
            raise KustomizeError(f'"{key}" is not a valid key name: a valid environment variable name must '
                                 f"consist of alphabetic characters, digits, '_', '-', or '.', and must not start "
                                 f"with a digit")
        if not sep:
            if key in os.environ:
                pairs.append((key, os.environ[key]))
            continue
        pairs.append((key, value))
    return pairs


def _generate(base: Path, spec: Obj, kind: str, options: Obj) -> Resource:
    name = spec.get("name")
    if not name:
        raise KustomizeError(f"a {kind}Generator entry needs a name")
    pairs: list[tuple[str, str | bytes]] = []
    for lit in spec.get("literals") or []:
        pairs.append(_pair(str(lit), "literal"))
    for file in spec.get("files") or []:
        key, sep, rel = str(file).partition("=")
        if not sep:
            key, rel = Path(str(file)).name, str(file)
        pairs.append((key, _read_file(base, rel)))
    envs = list(spec.get("envs") or [])
    if spec.get("env"):
        envs.append(spec["env"])
    for env in envs:
        raw = _read_file(base, str(env))
        pairs += _env_pairs(raw.decode("utf-8", "replace"), str(env))
    data: dict[str, str] = {}
    binary: dict[str, str] = {}
    for key, value in pairs:
        if key in data or key in binary:
            raise KustomizeError(f"cannot add key {key}, another key by that name already exists in "
                                 f"{kind.lower() if kind == 'ConfigMap' else kind}")
        if kind == "Secret":
            raw_bytes = value if isinstance(value, bytes) else value.encode()
            data[key] = base64.b64encode(raw_bytes).decode()
        elif isinstance(value, bytes):
            try:
                data[key] = value.decode("utf-8")
            except UnicodeDecodeError:
                binary[key] = base64.b64encode(value).decode()
        else:
            data[key] = value
    merged = dict(options)
    for key, value in (spec.get("options") or {}).items():
        if key in ("labels", "annotations"):
            merged[key] = {**(merged.get(key) or {}), **(value or {})}
        elif key in ("disableNameSuffixHash", "immutable"):  # true in either place wins
            merged[key] = bool(merged.get(key)) or bool(value)
        else:
            merged[key] = value
    meta: Obj = {"name": name}
    if spec.get("namespace"):
        meta["namespace"] = spec["namespace"]
    if merged.get("labels"):
        meta["labels"] = {str(k): str(v) for k, v in merged["labels"].items()}
    if merged.get("annotations"):
        meta["annotations"] = {str(k): str(v) for k, v in merged["annotations"].items()}
    obj: Obj = {"apiVersion": "v1", "kind": kind, "metadata": meta}
    if data or not binary:
        obj["data"] = data
    if binary:
        obj["binaryData"] = binary
    if kind == "Secret":
        obj["type"] = spec.get("type") or "Opaque"
    if merged.get("immutable"):
        obj["immutable"] = True
    behavior = spec.get("behavior") or "create"
    if behavior not in ("create", "merge", "replace"):
        raise KustomizeError(f"unknown generation behavior '{behavior}'")
    return Resource(obj, name, hash_suffix=not merged.get("disableNameSuffixHash"), behavior=behavior)


def _add_generated(resources: list[Resource], new: Resource) -> None:
    same = [r for r in resources if r.kind == new.kind and r.original_name == new.original_name
            and (not new.namespace or r.namespace == new.namespace)]
    if new.behavior == "create":
        if same:
            raise KustomizeError(f"may not add resource with an already registered id: "
                                 f"{new.kind}.v1.[noGrp]/{new.original_name}.{new.namespace or '[noNs]'}")
        resources.append(new)
        return
    if not same:
        raise KustomizeError(f"id resid.ResId{{Gvk:{new.kind}.v1.[noGrp], Name:{new.original_name}, "
                             f"Namespace:{new.namespace}}} does not exist; cannot merge or replace")
    old = same[0]
    if new.behavior == "replace":
        for key in ("data", "binaryData"):
            old.obj.pop(key, None)
            if key in new.obj:
                old.obj[key] = new.obj[key]
    else:
        for key in ("data", "binaryData"):
            if key in new.obj:
                old.obj[key] = {**(old.obj.get(key) or {}), **new.obj[key]}
    meta, new_meta = old.obj.setdefault("metadata", {}), new.obj["metadata"]
    for key in ("labels", "annotations"):
        if new_meta.get(key):
            meta[key] = {**(meta.get(key) or {}), **new_meta[key]}
    old.hash_suffix = old.hash_suffix and new.hash_suffix


# ------------------------------------------------------------------ field paths
def _set_map(obj: Any, path: list[str], values: dict[str, str], create: bool) -> None:
    """Merge ``values`` into the map at ``path`` (``x[]`` steps into every item of list ``x``)."""
    if not isinstance(obj, dict):
        return
    head, rest = path[0], path[1:]
    if head.endswith("[]"):
        items = obj.get(head[:-2])
        if isinstance(items, list):
            for item in items:
                if rest:
                    _set_map(item, rest, values, create)
        return
    if not rest:
        if head not in obj or obj[head] is None:
            if not create:
                return
            obj[head] = {}
        if isinstance(obj[head], dict):
            obj[head].update(values)
        return
    if head not in obj or obj[head] is None:
        if not create:
            return
        obj[head] = {}
    _set_map(obj[head], rest, values, create)


# (kind, group or None for any, path, create, role): role "selector", "template" or "meta"
_LABEL_PATHS: list[tuple[str, str | None, str, bool, str]] = [
    ("Service", "", "spec/selector", True, "selector"),
    ("ReplicationController", "", "spec/selector", True, "selector"),
    ("ReplicationController", "", "spec/template/metadata/labels", True, "template"),
    ("Deployment", None, "spec/selector/matchLabels", True, "selector"),
    ("Deployment", None, "spec/template/metadata/labels", True, "template"),
    ("ReplicaSet", None, "spec/selector/matchLabels", True, "selector"),
    ("ReplicaSet", None, "spec/template/metadata/labels", True, "template"),
    ("DaemonSet", None, "spec/selector/matchLabels", True, "selector"),
    ("DaemonSet", None, "spec/template/metadata/labels", True, "template"),
    ("StatefulSet", "apps", "spec/selector/matchLabels", True, "selector"),
    ("StatefulSet", "apps", "spec/template/metadata/labels", True, "template"),
    ("StatefulSet", "apps", "spec/volumeClaimTemplates[]/metadata/labels", True, "selector"),
    ("Job", "batch", "spec/selector/matchLabels", False, "selector"),
    ("Job", "batch", "spec/template/metadata/labels", True, "template"),
    ("CronJob", "batch", "spec/jobTemplate/spec/selector/matchLabels", False, "selector"),
    ("CronJob", "batch", "spec/jobTemplate/metadata/labels", True, "template"),
    ("CronJob", "batch", "spec/jobTemplate/spec/template/metadata/labels", True, "template"),
    ("PodDisruptionBudget", "policy", "spec/selector/matchLabels", False, "selector"),
    ("NetworkPolicy", "networking.k8s.io", "spec/podSelector/matchLabels", False, "selector"),
]
_ANNOTATION_PATHS: list[tuple[str, str | None, str]] = [
    ("ReplicationController", "", "spec/template/metadata/annotations"),
    ("Deployment", None, "spec/template/metadata/annotations"),
    ("ReplicaSet", None, "spec/template/metadata/annotations"),
    ("DaemonSet", None, "spec/template/metadata/annotations"),
    ("StatefulSet", "apps", "spec/template/metadata/annotations"),
    ("Job", "batch", "spec/template/metadata/annotations"),
    ("CronJob", "batch", "spec/jobTemplate/metadata/annotations"),
    ("CronJob", "batch", "spec/jobTemplate/spec/template/metadata/annotations"),
]


def _labels(resources: list[Resource], values: dict[str, str], selectors: bool, templates: bool) -> None:
    for r in resources:
        _set_map(r.obj, ["metadata", "labels"], values, True)
        for kind, group, path, create, role in _LABEL_PATHS:
            if r.kind != kind or (group is not None and r.group != group):
                continue
            if selectors or (templates and role == "template"):
                _set_map(r.obj, path.split("/"), values, create)


def _annotations(resources: list[Resource], values: dict[str, str]) -> None:
    for r in resources:
        _set_map(r.obj, ["metadata", "annotations"], values, True)
        for kind, group, path in _ANNOTATION_PATHS:
            if r.kind == kind and (group is None or r.group == group):
                _set_map(r.obj, path.split("/"), values, True)


def _string_map(value: Any, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise KustomizeError(f"invalid Kustomization: {what} must be a map of strings")
    return {str(k): _scalar(v) for k, v in value.items()}


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


# ------------------------------------------------------------------ images, replicas
def _split_image(image: str) -> tuple[str, str, str]:
    """(name, ":tag" or "", "@digest" or "")."""
    name, digest = image, ""
    if "@" in image:
        name, at, rest = image.partition("@")
        digest = at + rest
    tag = ""
    colon = name.rfind(":")
    if colon > name.rfind("/"):
        name, tag = name[:colon], name[colon:]
    return name, tag, digest


def _update_images(value: Any, images: list[Obj]) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ("containers", "initContainers") and isinstance(item, list):
                for container in item:
                    if isinstance(container, dict) and isinstance(container.get("image"), str):
                        container["image"] = _new_image(container["image"], images)
            else:
                _update_images(item, images)
    elif isinstance(value, list):
        for item in value:
            _update_images(item, images)


def _new_image(image: str, images: list[Obj]) -> str:
    name, tag, digest = _split_image(image)
    for rule in images:
        if rule.get("name") != name:
            continue
        new_name = str(rule.get("newName") or name)
        if rule.get("digest"):
            return f"{new_name}@{rule['digest']}"
        if rule.get("newTag") is not None and str(rule.get("newTag")) != "":
            return f"{new_name}:{_scalar(rule['newTag'])}"
        return new_name + tag + digest
    return image


# ------------------------------------------------------------------ patches
def _matches(r: Resource, target: Obj) -> bool:
    from minik8s.api.selectors import LabelSelector
    if target.get("kind") and r.kind != target["kind"]:
        return False
    if target.get("group") is not None and target.get("group") != "" and r.group != target["group"]:
        return False
    if target.get("version") and r.version != target["version"]:
        return False
    if target.get("name") and not any(re.fullmatch(str(target["name"]), n) for n in [r.name, r.original_name]):
        return False
    if target.get("namespace") and not re.fullmatch(str(target["namespace"]), r.namespace):
        return False
    meta = r.obj.get("metadata") or {}
    try:
        if target.get("labelSelector") and not LabelSelector.parse(str(target["labelSelector"])).matches(
                meta.get("labels") or {}):
            return False
        return not (target.get("annotationSelector") and not LabelSelector.parse(
            str(target["annotationSelector"])).matches(meta.get("annotations") or {}))
    except ValueError as exc:
        raise KustomizeError(f"invalid patch target selector: {exc}") from None


def _patch_docs(base: Path, entry: Any) -> tuple[str, list[Any]]:
    if isinstance(entry, str):
        text = entry if "\n" in entry or not (base / entry).is_file() else _read_file(base, entry).decode()
        source = entry
    else:
        if entry.get("path"):
            text = _read_file(base, str(entry["path"])).decode()
            source = str(entry["path"])
        elif entry.get("patch"):
            text, source = str(entry["patch"]), "patch"
        else:
            raise KustomizeError("must specify one of patch and path in patches")
    return source, _yaml_docs(text, source)


def _smp(r: Resource, patch: Obj) -> Obj:
    from minik8s.api.k8sopenapi import PatchSchema
    from minik8s.api.patch import strategic_merge_patch
    body = copy.deepcopy(patch)
    body.pop("apiVersion", None)
    body.pop("kind", None)
    meta = body.get("metadata")
    if isinstance(meta, dict):
        meta.pop("name", None)
        meta.pop("namespace", None)
    try:
        return strategic_merge_patch(r.obj, body, PatchSchema.of_kind(str(r.obj.get("apiVersion") or ""), r.kind))
    except ValueError as exc:
        raise KustomizeError(f"failed to apply patch to {r.kind}/{r.name}: {exc}") from None


def _json6902(r: Resource, ops: Any) -> None:
    """Apply a JSON 6902 patch as kustomize does: ``replace`` of a missing member of an object adds it."""
    from minik8s.api.patch import json_patch
    if not isinstance(ops, list):
        raise KustomizeError(f"a JSON 6902 patch must be a list of operations, got {ops!r}")
    try:
        for op in ops:
            if isinstance(op, dict) and op.get("op") == "replace" and isinstance(op.get("path"), str):
                op = _replace_or_add(r.obj, op)
            r.obj = json_patch(r.obj, [op])
    except ValueError as exc:
        raise KustomizeError(f"failed to apply json patch to {r.kind}/{r.name}: {exc}") from None


def _apply_patch(resources: list[Resource], docs: list[Any], target: Obj | None, source: str) -> None:
    if docs and isinstance(docs[0], list):  # JSON 6902
        if target is None:
            raise KustomizeError(f"unable to apply JSON patch {source}: a target is required")
        for r in [r for r in resources if _matches(r, target)]:
            _json6902(r, docs[0])
        return
    for doc in docs:
        if not isinstance(doc, dict):
            raise KustomizeError(f"{source}: a patch must be an object")
        if target is not None:
            chosen = [r for r in resources if _matches(r, target)]
        else:
            name = (doc.get("metadata") or {}).get("name")
            ns = (doc.get("metadata") or {}).get("namespace")
            chosen = [r for r in resources if r.kind == doc.get("kind") and name in (r.name, r.original_name)
                      and (not ns or ns == r.namespace)]
            if not chosen:
                raise KustomizeError(f"no resource matches strategic merge patch \"{doc.get('kind')}.[noGrp]/"
                                     f"{name}.[noNs]\": no matches for Id {doc.get('kind')}.[noVer].[noGrp]/"
                                     f"{name}.[noNs]; failed to find unique target for patch "
                                     f"{doc.get('kind')}.[noVer].[noGrp]/{name}.[noNs]")
        for r in chosen:
            if doc.get("$patch") == "delete":
                resources.remove(r)
            else:
                r.obj = _smp(r, doc)


def _replace_or_add(obj: Obj, op: Obj) -> Obj:
    parts = [p.replace("~1", "/").replace("~0", "~") for p in str(op["path"]).split("/")[1:]]
    parent: Any = obj
    for part in parts[:-1]:
        if isinstance(parent, dict):
            parent = parent.get(part)
        elif isinstance(parent, list) and part.isdigit() and int(part) < len(parent):
            parent = parent[int(part)]
        else:
            return op
    if parts and isinstance(parent, dict) and parts[-1] not in parent:
        return {**op, "op": "add"}
    return op


# ------------------------------------------------------------------ replacements
def _path_parts(path: str) -> list[str]:
    """A replacement's field path (``spec.containers.[name=web].image``, ``a.0.b``, ``a.*.b``,
    ``metadata.annotations.[dotted.key]``) split into its steps."""
    parts: list[str] = []
    current, depth = "", 0
    for ch in path:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "." and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return [p[1:-1] if p.startswith("[") and p.endswith("]") and "=" not in p else p for p in parts]


def _lookup(node: Any, parts: list[str], create: bool) -> list[tuple[Any, Any]]:
    """The (container, key) pairs ``parts`` reach in ``node`` (maps created on the way with ``create``)."""
    if not parts:
        return []
    head, rest = parts[0], parts[1:]
    found: list[tuple[Any, Any]] = []
    if isinstance(node, list):
        if head == "*":
            keys: list[Any] = list(range(len(node)))
        elif head.startswith("[") and "=" in head:
            field_name, _, value = head[1:-1].partition("=")
            keys = [i for i, item in enumerate(node) if isinstance(item, dict) and str(item.get(field_name)) == value]
        elif head.lstrip("-").isdigit() and -len(node) <= int(head) < len(node):
            keys = [int(head)]
        else:
            keys = []
    elif isinstance(node, dict):
        if head == "*":
            keys = list(node)
        elif head in node:
            keys = [head]
        elif create and not head.startswith("["):
            node[head] = {} if rest else None
            keys = [head]
        else:
            keys = []
    else:
        return []
    for key in keys:
        if rest:
            child = node[key]
            if child is None and create and isinstance(node, dict):
                node[key] = child = {}
            found += _lookup(child, rest, create)
        else:
            found.append((node, key))
    return found


def _coerce(value: Any, old: Any) -> Any:
    """The source value as the target's type, when the target holds a number or a boolean."""
    if isinstance(value, str) and old is not None and not isinstance(old, str | dict | list):
        import yaml
        try:
            parsed = yaml.safe_load(value)
        except yaml.YAMLError:
            return value
        if type(parsed) is type(old):
            return parsed
    return value


def _replace(resources: list[Resource], spec: Obj) -> None:
    """One ``replacements`` entry: the source's field, copied into every selected target's fields."""
    if not isinstance(spec, dict):
        raise KustomizeError("invalid Kustomization: replacements entries must be objects")
    source = spec.get("source") or {}
    selector = {k: v for k, v in source.items() if k in ("group", "version", "kind", "name", "namespace")}
    matched = [r for r in resources if _matches(r, selector)]
    if len(matched) != 1:
        what = "multiple matches" if matched else "nothing selected"
        raise KustomizeError(f"{what} for source selector {selector}")
    field_path = str(source.get("fieldPath") or "metadata.name")
    values = _lookup(matched[0].obj, _path_parts(field_path), False)
    if not values:
        raise KustomizeError(f"fieldPath `{field_path}` is missing for replacement source {selector}")
    holder, key = values[0]
    value = holder[key]
    options = source.get("options") or {}
    if options.get("delimiter") and isinstance(value, str):
        pieces = value.split(str(options["delimiter"]))
        index = int(options.get("index") or 0)
        if not 0 <= index < len(pieces):
            raise KustomizeError(f"options.index {index} is out of bounds for value {value}")
        value = pieces[index]
    for target in spec.get("targets") or []:
        chosen = [r for r in resources if _matches(r, target.get("select") or {})
                  and not any(_matches(r, reject) for reject in target.get("reject") or [])]
        topts = target.get("options") or {}
        for r in chosen:
            for path in target.get("fieldPaths") or []:
                reached = _lookup(r.obj, _path_parts(str(path)), bool(topts.get("create")))
                if not reached:
                    raise KustomizeError(f'unable to find field "{path}" in replacement target')
                for node, field_key in reached:
                    new = copy.deepcopy(value)
                    old = node[field_key]
                    if topts.get("delimiter") and isinstance(old, str):
                        pieces = old.split(str(topts["delimiter"]))
                        index = int(topts.get("index") or 0)
                        if 0 <= index < len(pieces):
                            pieces[index] = str(new)
                        elif index < 0:
                            pieces.insert(0, str(new))
                        else:
                            pieces.append(str(new))
                        new = str(topts["delimiter"]).join(pieces)
                    node[field_key] = _coerce(new, old)


# ------------------------------------------------------------------ name references
def _pod_specs(obj: Obj) -> list[Obj]:
    spec = obj.get("spec") or {}
    kind = obj.get("kind")
    found: list[Any] = []
    if kind == "Pod":
        found.append(spec)
    elif kind == "CronJob":
        found.append((((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or {}).get("spec"))
    elif kind in WORKLOADS or kind == "PodTemplate":
        found.append((spec.get("template") or {}).get("spec") if kind != "PodTemplate"
                     else (obj.get("template") or {}).get("spec"))
    return [s for s in found if isinstance(s, dict)]


def _fix_references(resources: list[Resource]) -> None:
    """Point references at renamed objects to their new names, as kustomize's name reference
    transformer does for the everyday cases: ConfigMaps and Secrets in pod specs (env ``valueFrom``,
    ``envFrom``, volumes, projected volumes, ``imagePullSecrets``) and in Ingress TLS; a pod spec's
    ServiceAccount and PersistentVolumeClaims; a StatefulSet's ``serviceName`` and Ingress backends'
    Services; RoleBinding and ClusterRoleBinding ``roleRef`` and ServiceAccount subjects.  A
    reference follows a rename only to an object of the referrer's namespace (cluster-scoped objects:
    any)."""
    renamed: dict[tuple[str, str, str], str] = {}
    for r in resources:
        scope = "" if r.kind in CLUSTER_SCOPED else r.namespace
        for old in {r.original_name, *r.previous}:
            if old != r.name:
                renamed.setdefault((r.kind, old, scope), r.name)
    if not renamed:
        return

    def fix(kind: str, holder: Any, key: str, ns: str) -> None:
        if isinstance(holder, dict) and isinstance(holder.get(key), str):
            scope = "" if kind in CLUSTER_SCOPED else ns
            holder[key] = renamed.get((kind, holder[key], scope), holder[key])

    for r in resources:
        ns = r.namespace
        for spec in _pod_specs(r.obj):
            for secret in spec.get("imagePullSecrets") or []:
                fix("Secret", secret, "name", ns)
            fix("ServiceAccount", spec, "serviceAccountName", ns)
            fix("ServiceAccount", spec, "serviceAccount", ns)
            for group in ("containers", "initContainers", "ephemeralContainers"):
                for c in spec.get(group) or []:
                    for env in c.get("env") or []:
                        source = env.get("valueFrom") or {}
                        fix("ConfigMap", source.get("configMapKeyRef"), "name", ns)
                        fix("Secret", source.get("secretKeyRef"), "name", ns)
                    for env_from in c.get("envFrom") or []:
                        fix("ConfigMap", env_from.get("configMapRef"), "name", ns)
                        fix("Secret", env_from.get("secretRef"), "name", ns)
            for volume in spec.get("volumes") or []:
                fix("ConfigMap", volume.get("configMap"), "name", ns)
                fix("Secret", volume.get("secret"), "secretName", ns)
                fix("PersistentVolumeClaim", volume.get("persistentVolumeClaim"), "claimName", ns)
                for source in (volume.get("projected") or {}).get("sources") or []:
                    fix("ConfigMap", source.get("configMap"), "name", ns)
                    fix("Secret", source.get("secret"), "name", ns)
        top = r.obj.get("spec")
        if r.kind == "StatefulSet" and isinstance(top, dict):
            fix("Service", top, "serviceName", ns)
        if r.kind == "Ingress" and isinstance(top, dict):
            fix("Service", (top.get("defaultBackend") or {}).get("service"), "name", ns)
            for rule in top.get("rules") or []:
                for path in ((rule or {}).get("http") or {}).get("paths") or []:
                    fix("Service", ((path or {}).get("backend") or {}).get("service"), "name", ns)
            for tls in top.get("tls") or []:
                fix("Secret", tls, "secretName", ns)
        if r.kind in ("RoleBinding", "ClusterRoleBinding"):
            ref = r.obj.get("roleRef")
            if isinstance(ref, dict) and ref.get("kind") in ("Role", "ClusterRole"):
                fix(str(ref["kind"]), ref, "name", ns)
            for subject in r.obj.get("subjects") or []:
                if isinstance(subject, dict) and subject.get("kind") == "ServiceAccount":
                    fix("ServiceAccount", subject, "name", str(subject.get("namespace") or ns))


# ------------------------------------------------------------------ the build
#: The keys of the entries of a Kustomization's lists (and of generatorOptions) that kustomize knows,
#: and those of them this module does not implement.
_ENTRY_KEYS = {
    "configMapGenerator": {"name", "namespace", "behavior", "literals", "files", "envs", "env", "options"},
    "secretGenerator": {"name", "namespace", "behavior", "literals", "files", "envs", "env", "options", "type"},
    "patches": {"path", "patch", "target", "options"},
    "patchesJson6902": {"path", "patch", "target"},
    "images": {"name", "newName", "newTag", "digest", "tagSuffix"},
    "replicas": {"name", "count"},
    "labels": {"pairs", "includeSelectors", "includeTemplates", "fields"},
    "replacements": {"source", "targets", "path"},
}
_OPTION_KEYS = {"labels", "annotations", "disableNameSuffixHash", "immutable"}
_UNSUPPORTED_ENTRY_KEYS = {"options": "patches", "tagSuffix": "images", "fields": "labels"}
_STRING_FIELDS = ("namespace", "namePrefix", "nameSuffix")


def _check_entries(k: Obj) -> None:
    """kustomize's strict decoding of the fields' entries: unknown keys are errors, and so are the
    known ones this module does not implement."""
    for name in _STRING_FIELDS:
        if name in k and not isinstance(k[name], str | None):
            kind = "array" if isinstance(k[name], list) else "object" if isinstance(k[name], dict) else "number"
            raise KustomizeError(f"invalid Kustomization: json: cannot unmarshal {kind} into Go struct field "
                                 f"Kustomization.{name} of type string")
    for field_name, allowed in _ENTRY_KEYS.items():
        entries = k.get(field_name) or []
        if not isinstance(entries, list):
            raise KustomizeError(f"invalid Kustomization: json: cannot unmarshal object into Go struct field "
                                 f"Kustomization.{field_name} of type []")
        for entry in entries:
            if not isinstance(entry, dict):
                if field_name == "patches" or not isinstance(entry, str):
                    raise KustomizeError(f"invalid Kustomization: {field_name} entries must be objects")
                continue
            for key in entry:
                if key not in allowed:
                    raise KustomizeError(f'invalid Kustomization: json: unknown field "{key}"')
                if _UNSUPPORTED_ENTRY_KEYS.get(key) == field_name:
                    raise KustomizeError(f"the kustomization field '{field_name}.{key}' is not supported by "
                                         f"minik8s' kubectl")
            for key in entry.get("options") or {} if field_name.endswith("Generator") else {}:
                if key not in _OPTION_KEYS:
                    raise KustomizeError(f'invalid Kustomization: json: unknown field "{key}"')
    for key in k.get("generatorOptions") or {}:
        if key not in _OPTION_KEYS:
            raise KustomizeError(f'invalid Kustomization: json: unknown field "{key}"')


def _load(directory: Path, stack: tuple[Path, ...], start: list[Resource] | None = None,
          expect: str = "") -> list[Resource]:
    """The resources of the kustomization in ``directory``, built.  A component (``expect``
    ``Component``) starts from ``start``, the resources its parent has so far, and builds on them."""
    directory = directory.resolve()
    if directory in stack:
        raise KustomizeError(f"cycle detected: candidate root '{directory}' contains visited root "
                             f"'{stack[-1]}'")
    try:
        file = _kustomization_file(directory)
        docs = _yaml_docs(file.read_text(encoding="utf-8"), str(file))
        k = docs[0] if docs else {}
        if not isinstance(k, dict):
            raise KustomizeError("invalid Kustomization: the kustomization must be an object")
        for key in k:
            if key in UNSUPPORTED:
                raise KustomizeError(f"the kustomization field '{key}' is not supported by minik8s' kubectl")
            if key not in SUPPORTED:
                raise KustomizeError(f'invalid Kustomization: json: unknown field "{key}"')
        _check_entries(k)
    except KustomizeError as exc:
        raise _TargetError(exc.message) from None
    kind = str(k.get("kind") or "Kustomization")
    if expect == "Component" and kind != "Component":
        raise KustomizeError(f"accumulating components: accumulateDirectory: \"expected kind 'Component' for path "
                             f"'{directory}' but got '{kind}'\"")
    if expect != "Component" and kind == "Component" and stack:
        raise KustomizeError(f"expected kind != 'Component' for path '{directory}'")
    deprecated = {"bases": "resources", "commonLabels": "labels", "patchesJson6902": "patches",
                  "patchesStrategicMerge": "patches"}
    for key in sorted(key for key in k if key in deprecated):
        print(f"# Warning: '{key}' is deprecated. Please use '{deprecated[key]}' instead. Run 'kustomize edit fix' "
              "to update your Kustomization automatically.", file=sys.stderr)
    resources: list[Resource] = start if start is not None else []
    for entry in [*(k.get("resources") or []), *(k.get("bases") or [])]:
        path = Path(os.path.normpath(directory / str(entry)))  # Go's filepath.Join cleans the path
        if path.is_dir():
            try:
                resources += _load(path, (*stack, directory))
            except KustomizeError as exc:
                if "is not supported by minik8s' kubectl" in exc.message:
                    raise
                if isinstance(exc, _TargetError):
                    why = f"couldn't make target for path '{path}': {exc.message}"
                elif exc.message.startswith("expected kind != 'Component'"):
                    why = exc.message
                else:
                    why = f"recursed accumulation of path '{path}': {exc.message}"
                raise KustomizeError(f"accumulating resources: accumulation err='accumulating resources from "
                                     f"'{entry}': '{path}' must resolve to a file': {why}") from None
        elif path.is_file():
            if not _inside(directory, path):
                raise KustomizeError(f"accumulating resources: accumulation err='accumulating resources from "
                                     f"'{entry}': security; file '{path}' is not in or below '{directory}'': must "
                                     f"build at directory: '{path}': file is not directory")
            resources += [Resource(o, str((o.get("metadata") or {}).get("name") or "")) for o in _objects_of(path)]
        elif re.match(r"^(https?://|github\.com/|git@|ssh://)", str(entry)):
            raise KustomizeError(f"remote resources are not supported by minik8s' kubectl: {entry}")
        else:
            raise KustomizeError(f"accumulating resources: accumulation err='accumulating resources from "
                                 f"'{entry}': evalsymlink failure on '{path}' : lstat {path}: no such file or "
                                 f"directory': must build at directory: not a valid directory: evalsymlink "
                                 f"failure on '{path}' : lstat {path}: no such file or directory")
    options = k.get("generatorOptions") or {}
    for spec in k.get("configMapGenerator") or []:
        _add_generated(resources, _generate(directory, spec, "ConfigMap", options))
    for spec in k.get("secretGenerator") or []:
        _add_generated(resources, _generate(directory, spec, "Secret", options))
    # components run after the generators, before the transformers (as in kustomize v5)
    for entry in k.get("components") or []:
        path = Path(os.path.normpath(directory / str(entry)))
        if not path.is_dir():
            raise KustomizeError(f"accumulating components: accumulateDirectory: \"'{path}' must be a directory "
                                 f"so that it can used as a build root\"")
        resources = _load(path, (*stack, directory), resources, "Component")

    for entry in k.get("patchesStrategicMerge") or []:
        source, pdocs = _patch_docs(directory, entry)
        _apply_patch(resources, pdocs, None, source)
    for entry in k.get("patches") or []:
        source, pdocs = _patch_docs(directory, entry)
        target = entry.get("target") if isinstance(entry, dict) else None
        _apply_patch(resources, pdocs, target, source)
    namespace = k.get("namespace")
    if namespace:
        for r in resources:
            if r.kind not in CLUSTER_SCOPED:
                r.obj.setdefault("metadata", {})["namespace"] = str(namespace)
            if r.kind in ("RoleBinding", "ClusterRoleBinding"):
                for subject in r.obj.get("subjects") or []:
                    if isinstance(subject, dict) and subject.get("kind") == "ServiceAccount" \
                            and subject.get("name") == "default":
                        subject["namespace"] = str(namespace)
    prefix, suffix = str(k.get("namePrefix") or ""), str(k.get("nameSuffix") or "")
    if prefix or suffix:
        for r in resources:
            if r.kind not in NO_RENAME:
                r.rename(prefix + r.name + suffix)
    if k.get("commonLabels"):
        _labels(resources, _string_map(k["commonLabels"], "commonLabels"), True, True)
    for entry in k.get("labels") or []:
        _labels(resources, _string_map(entry.get("pairs"), "labels"), bool(entry.get("includeSelectors")),
                bool(entry.get("includeTemplates")))
    if k.get("commonAnnotations"):
        _annotations(resources, _string_map(k["commonAnnotations"], "commonAnnotations"))
    for entry in k.get("patchesJson6902") or []:
        source, pdocs = _patch_docs(directory, entry)
        ops = pdocs[0] if pdocs else []
        for r in [r for r in resources if _matches(r, entry.get("target") or {})]:
            _json6902(r, ops)
    for entry in k.get("replicas") or []:
        for r in resources:
            if entry.get("name") in (r.name, r.original_name) and r.kind in (
                    "Deployment", "ReplicaSet", "StatefulSet", "ReplicationController"):
                r.obj.setdefault("spec", {})["replicas"] = int(entry.get("count") or 0)
    if k.get("images"):
        for r in resources:
            _update_images(r.obj, list(k["images"]))
    for entry in k.get("replacements") or []:
        if isinstance(entry, dict) and set(entry) == {"path"}:
            for doc in _yaml_docs(_read_file(directory, str(entry["path"])).decode(), str(entry["path"])):
                for replacement in doc if isinstance(doc, list) else [doc]:
                    _replace(resources, replacement)
        else:
            _replace(resources, entry)
    return resources


def _order(r: Resource, first: list[str] = ORDER_FIRST, last: list[str] = ORDER_LAST) -> tuple[int, str, str, str]:
    kind = r.kind
    if kind in first:
        rank = -len(first) + first.index(kind)
    elif kind in last:
        rank = 1 + last.index(kind)
    else:
        rank = 0
    gvk = "_".join([r.group or "~G", r.version or "~V", kind or "~K"])
    return rank, gvk, r.namespace or "~X", r.name  # no namespace sorts last, as kustomize's "~X"


def build(directory: str) -> list[Obj]:
    """The objects of the kustomization in ``directory``, in kustomize's legacy order.

    Raises KustomizeError (kustomize's message) for a missing directory or kustomization file, an
    unknown or unsupported field, a missing file, or a patch that matches nothing.
    """
    path = Path(directory)
    if not path.is_dir():
        absolute = Path(os.path.abspath(directory))
        if path.exists():
            raise KustomizeError(f"must build at directory: '{directory}': file is not directory")
        raise KustomizeError(f"must build at directory: not a valid directory: evalsymlink failure on "
                             f"'{directory}' : lstat {absolute}: no such file or directory")
    resources = _load(path, ())
    for r in resources:
        if r.hash_suffix and r.kind in ("ConfigMap", "Secret"):
            r.rename(f"{r.name}-{content_hash(r.obj)}")
    _fix_references(resources)
    sort = _sort_options(path)
    if sort.get("order") == "fifo":
        return [r.obj for r in resources]
    legacy = sort.get("legacySortOptions") or {}
    first = [str(k) for k in legacy.get("orderFirst") or []] if legacy else ORDER_FIRST
    last = [str(k) for k in legacy.get("orderLast") or []] if legacy else ORDER_LAST
    return [r.obj for r in sorted(resources, key=lambda r: _order(r, first, last))]


def _sort_options(directory: Path) -> Obj:
    """The top kustomization's ``sortOptions`` (those of the kustomizations below it do not count):
    ``order`` ``legacy`` (the default) or ``fifo`` (as accumulated), ``legacySortOptions``' own
    ``orderFirst``/``orderLast`` kinds in place of kustomize's."""
    file = _kustomization_file(directory.resolve())
    docs = _yaml_docs(file.read_text(encoding="utf-8"), str(file))
    sort = (docs[0] if docs and isinstance(docs[0], dict) else {}).get("sortOptions") or {}
    if not isinstance(sort, dict):
        raise KustomizeError("invalid Kustomization: sortOptions must be an object")
    for key in sort:
        if key not in ("order", "legacySortOptions"):
            raise KustomizeError(f'invalid Kustomization: json: unknown field "{key}"')
    if sort.get("order", "legacy") not in ("legacy", "fifo"):
        raise KustomizeError(f"the sort order is set to an unknown value: {sort.get('order')}")
    return sort


#: The scalars Go's YAML (v2, YAML 1.1) reads as booleans or null besides those PyYAML knows: quoted when strings.
_GO_YAML_SPECIAL = {"y", "Y", "n", "N"}
_GO_INT = re.compile(r"[-+]?(0[xX][0-9a-fA-F]+|0[bB][01]+|0[oO]?[0-7]+|[0-9]+)")


def _go_reads_as_number(value: str) -> bool:
    """Whether Go's YAML resolver reads the plain scalar ``value`` as an int or a float
    (``strconv.ParseInt(s, 0, 64)``/``ParseFloat`` of it without underscores, for scalars that begin
    with a digit, a sign or a dot)."""
    if not value or value[0] not in "+-.0123456789" or any(c.isspace() for c in value):
        return False
    plain = value.replace("_", "")
    if _GO_INT.fullmatch(plain):
        return True
    try:
        float(plain)
    except ValueError:
        return False
    return True


def _yaml_dumper() -> type:
    import yaml

    class Dumper(yaml.SafeDumper):
        """kustomize's YAML (Go's yaml.v2): block style, lists not indented under their key, lines folded at
        80 columns, strings Go would read as something else double-quoted."""

    def represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
        tag = "tag:yaml.org,2002:str"
        if "\n" in value:
            return dumper.represent_scalar(tag, value, style="|")
        if (value == "" or value in _GO_YAML_SPECIAL or _go_reads_as_number(value)
                or dumper.resolve(yaml.ScalarNode, value, (True, False)) != tag):
            return dumper.represent_scalar(tag, value, style='"')
        return dumper.represent_scalar(tag, value)

    def write_double_quoted(self: yaml.SafeDumper, text: str, split: bool = True) -> None:
        """Go's yaml.v2 double-quoted scalar: escapes as Go writes them, a long line broken at a space
        once past 80 columns (the space dropped, a backslash kept only before a second space)."""
        self.write_indicator('"', True)
        spaces = False
        out: list[str] = []

        def flush() -> None:
            if out:
                data = "".join(out)
                self.column += len(data)
                self.stream.write(data)
                out.clear()

        for i, ch in enumerate(text):
            if not _go_printable(ch) or ch in '"\\\n\ufeff':
                out.append("\\" + _go_escape(ch))
                spaces = False
            elif ch == " ":
                flush()
                if split and not spaces and self.column > self.best_width and 0 < i < len(text) - 1:
                    self.write_indent()
                    if text[i + 1] == " ":
                        out.append("\\")
                else:
                    out.append(ch)
                spaces = True
            else:
                out.append(ch)
                spaces = False
        flush()
        self.write_indicator('"', False)

    Dumper.add_representer(str, represent_str)
    Dumper.write_double_quoted = write_double_quoted  # type: ignore[assignment]
    return Dumper


_GO_ESCAPES = {"\0": "0", "\a": "a", "\b": "b", "\t": "t", "\n": "n", "\v": "v", "\f": "f", "\r": "r",
               "\x1b": "e", '"': '"', "\\": "\\", "\x85": "N", "\xa0": "_", "\u2028": "L", "\u2029": "P"}


def _go_printable(ch: str) -> bool:
    code = ord(ch)
    return (0x20 <= code <= 0x7E or 0xA0 <= code <= 0xD7FF or (0xE000 <= code <= 0xFFFD and code != 0xFEFF)
            or code == 0x0A)


def _go_escape(ch: str) -> str:
    if ch in _GO_ESCAPES:
        return _GO_ESCAPES[ch]
    code = ord(ch)
    if code <= 0xFF:
        return f"x{code:02X}"
    return f"u{code:04X}" if code <= 0xFFFF else f"U{code:08X}"


def render(objects: list[Obj]) -> str:
    """``kubectl kustomize``'s output: each object's YAML as kustomize writes it (keys sorted, Go's
    yaml.v2 style, lines folded at 80 columns), separated by ``---``."""
    import yaml

    dumper = _yaml_dumper()
    return "---\n".join(yaml.dump(o, Dumper=dumper, sort_keys=True, default_flow_style=False, allow_unicode=True,
                                  width=80) for o in objects)


def kustomize_command(directory: Annotated[str, typer.Argument(metavar="DIR", help="a kustomization directory")] = ".",
                      ) -> None:
    """Build a kustomization target from a directory and print its YAML (kubectl kustomize)."""
    sys.stdout.write(render(build(directory)))
