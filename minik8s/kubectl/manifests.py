"""Reading manifests for ``apply``, ``create`` and ``delete -f``, and resolving them against discovery.

Sources are files, directories (``*.yaml``, ``*.yml``, ``*.json``, sorted; ``-R``
recurses) and ``-`` for stdin.  A file may hold several YAML documents, a JSON
object, or a ``List`` kind whose ``items`` are objects.  Every error is a
:class:`~minik8s.kubectl.errors.KubectlError` naming the file and, for syntax
errors, the line.
"""

from __future__ import annotations

import copy
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from minik8s.api import decoding
from minik8s.api.resourcetypes import ResourceType
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.resolve import object_ref
from minik8s.kubectl.session import Session

EXTENSIONS = (".yaml", ".yml", ".json")
#: The annotation ``kubectl apply`` records the applied configuration in.
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


@dataclass
class Manifest:
    """One object read from ``source`` (a path, or ``STDIN``)."""

    source: str
    obj: dict[str, Any]

    @property
    def name(self) -> str:
        """``metadata.name`` (``""`` when unset)."""
        return str((self.obj.get("metadata") or {}).get("name") or "")

    @property
    def namespace(self) -> str:
        """``metadata.namespace`` (``""`` when unset)."""
        return str((self.obj.get("metadata") or {}).get("namespace") or "")


def expand(paths: list[str], recursive: bool = False) -> list[str]:
    """The files named by ``paths`` (directories expanded, sorted); ``-`` stays ``-``."""
    files: list[str] = []
    for raw in paths:
        if raw == "-":
            files.append("-")
            continue
        path = Path(raw)
        if path.is_dir():
            pattern = "**/*" if recursive else "*"
            found = sorted(p for p in path.glob(pattern) if p.is_file() and p.suffix.lower() in EXTENSIONS)
            files += [str(p) for p in found]
        elif path.exists():
            files.append(raw)
        else:
            raise KubectlError(f'the path "{raw}" does not exist')
    return files


def _line_of(exc: Exception) -> int | None:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    if mark is not None:
        return int(mark.line) + 1
    lineno = getattr(exc, "lineno", None)
    return int(lineno) if lineno is not None else None


def _reason(exc: Exception) -> str:
    if isinstance(exc, yaml.MarkedYAMLError):
        parts = [p for p in (exc.context, exc.problem) if p]
        return ": ".join(parts) or "invalid YAML"
    if isinstance(exc, json.JSONDecodeError):
        return exc.msg
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def parse(text: str, source: str) -> list[dict[str, Any]]:
    """The objects in one file's text (multi-document YAML or JSON; ``List`` kinds expanded).

    Raises KubectlError ``error parsing SOURCE: <reason> (line N)`` on syntax errors and
    ``error validating "SOURCE": ...`` when a document lacks ``apiVersion`` or ``kind``.
    """
    docs: list[Any]
    try:
        if source.lower().endswith(".json") or text.lstrip().startswith(("{", "[")):
            try:
                docs = [decoding.load_json(text)]
            except decoding.DecodeError as exc:
                if source.lower().endswith(".json") or not isinstance(exc.__cause__, json.JSONDecodeError):
                    raise
                docs = decoding.load_yaml_all(text)
        else:
            docs = decoding.load_yaml_all(text)
    except decoding.DecodeError as exc:
        cause = exc.__cause__ if isinstance(exc.__cause__, yaml.YAMLError | json.JSONDecodeError) else exc
        line = _line_of(cause)
        where = f" (line {line})" if line else ""
        raise KubectlError(f"error parsing {source}: {_reason(cause)}{where}") from None
    objects: list[dict[str, Any]] = []
    for index, doc in enumerate(docs):
        if doc is None:
            continue
        if isinstance(doc, list):
            raise KubectlError(f'error validating "{source}": document {index + 1} is a list, not an object')
        if not isinstance(doc, dict):
            raise KubectlError(f'error validating "{source}": document {index + 1} is not an object: {doc!r}')
        kind = doc.get("kind")
        if isinstance(kind, str) and kind.endswith("List") and isinstance(doc.get("items"), list):
            items = doc["items"]
            for item in items:
                if not isinstance(item, dict):
                    raise KubectlError(f'error validating "{source}": items of a {kind} must be objects')
            candidates = items
        else:
            candidates = [doc]
        for obj in candidates:
            missing = [f for f in ("apiVersion", "kind") if not obj.get(f)]
            if missing:
                raise KubectlError(f'error validating "{source}": error validating data: '
                                   f"[{', '.join(f'{m} not set' for m in missing)}]")
            meta = obj.get("metadata")
            if meta is not None and not isinstance(meta, dict):
                raise KubectlError(f'error validating "{source}": metadata must be an object')
            objects.append(obj)
    return objects


def load(paths: list[str], recursive: bool = False, verb: str = "apply",
         kustomize: str | None = None) -> list[Manifest]:
    """Every object in ``paths`` (``-f``) or built from the kustomization directory ``kustomize``
    (``-k``, :mod:`minik8s.kubectl.kustomize`), in order.  Raises KubectlError (both or neither
    given: kubectl's messages); an empty result is an error too."""
    if paths and kustomize:
        raise KubectlError("only one of -f or -k can be specified")
    if kustomize:
        from minik8s.kubectl import kustomize as kustomization
        built = [Manifest(kustomize, obj) for obj in kustomization.build(kustomize)]
        if not built:
            raise KubectlError(f"no objects passed to {verb}")
        return built
    if not paths:
        raise KubectlError("must specify one of -f and -k")
    manifests: list[Manifest] = []
    for file in expand(paths, recursive):
        if file == "-":
            text, source = sys.stdin.read(), "STDIN"
        else:
            source = file
            try:
                text = Path(file).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise KubectlError(f"cannot read {file}: {exc}") from None
        manifests += [Manifest(source, obj) for obj in parse(text, source)]
    if not manifests:
        raise KubectlError(f"no objects passed to {verb}")
    return manifests


@dataclass
class Planned:
    """A manifest resolved against discovery: its type and the namespace it goes to."""

    manifest: Manifest
    rt: ResourceType
    namespace: str | None

    @property
    def name(self) -> str:
        """The object's ``metadata.name``."""
        return self.manifest.name

    @property
    def ref(self) -> str:
        """``pod/web``, as printed in ``created`` / ``configured`` lines."""
        return object_ref(self.rt, self.name)


def plan(s: Session, items: list[Manifest], explicit_namespace: str | None,
         need_name: bool = True) -> list[Planned]:
    """Resolve every manifest's kind and namespace before anything is sent.

    Raises KubectlError for an unknown kind (``resource mapping not found ...``), a
    missing name, or an object whose namespace contradicts ``-n``.
    """
    planned = []
    for m in items:
        api_version, kind = str(m.obj.get("apiVersion")), str(m.obj.get("kind"))
        rt = s.registry.by_kind(api_version, kind)
        if rt is None:
            raise KubectlError(f'resource mapping not found for name: "{m.name}" namespace: "{m.namespace}" '
                               f'from "{m.source}": no matches for kind "{kind}" in version "{api_version}"')
        if need_name and not m.name:
            if (m.obj.get("metadata") or {}).get("generateName"):
                raise KubectlError(f"from {m.source}: cannot use generate name with apply")
            raise KubectlError(f'error when retrieving current configuration of "{m.source}": '
                               "resource name may not be empty")
        namespace = None
        if rt.namespaced:
            if explicit_namespace and m.namespace and m.namespace != explicit_namespace:
                raise KubectlError(f'the namespace from the provided object "{m.namespace}" does not match the '
                                   f'namespace "{explicit_namespace}". You must pass '
                                   f"'--namespace={m.namespace}' to perform this operation.")
            namespace = m.namespace or s.namespace
        planned.append(Planned(m, rt, namespace))
    return planned


def applied_config(p: Planned) -> dict[str, Any]:
    """The manifest as kubectl records it: namespace filled in, our annotation left out."""
    obj = copy.deepcopy(p.manifest.obj)
    meta = obj.setdefault("metadata", {})
    if p.namespace:
        meta["namespace"] = p.namespace
    annotations = dict(meta.get("annotations") or {})
    annotations.pop(LAST_APPLIED, None)
    meta["annotations"] = annotations
    return obj


def encode(obj: dict[str, Any]) -> str:
    """The annotation value: compact JSON with sorted keys and a final newline (kubectl encodes it with
    its JSON serializer, Go's ``json.Encoder``, which ends what it writes with ``\\n``)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":")) + "\n"
