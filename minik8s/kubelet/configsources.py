"""ConfigMaps and Secrets as the pods on this node use them: volume payloads and env values.

The kubelet keeps both kinds in informers (:class:`ConfigSources`); a ConfigMap or Secret
that is added, changed or deleted queues the pods that reference it, so a missing object
that appears lets the pod start and a changed one reaches mounted volumes at once (the
periodic pod sync catches anything missed).  Lookups never go to the apiserver.

Kubernetes' behaviour and messages (``pkg/volume/configmap``, ``pkg/volume/secret``,
``kubelet_pods.go``):

- volume of a missing object: ``configmap "x" not found`` / ``secret "x" not found`` (the
  pod waits in ContainerCreating with a FailedMount event) unless ``optional: true`` (the
  volume is empty); ``items`` naming a missing key: ``configmap references non-existent
  config key: k`` / ``references non-existent secret key: k`` unless optional;
- env ``valueFrom.configMapKeyRef``/``secretKeyRef`` and ``envFrom`` of a missing object or
  key: the container is not created, its waiting reason is ``CreateContainerConfigError``
  (``couldn't find key k in ConfigMap ns/x``) unless optional (the variable is left out);
- file modes: ``items[].mode``, else ``defaultMode``, else 0644.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from minik8s.api.base import Obj, object_key
from minik8s.api.config import decoded_data
from minik8s.api.validation import env_var_name_errors
from minik8s.client.informer import NAMESPACE_INDEX, Informer, by_namespace
from minik8s.client.rest import Client
from minik8s.kubelet.atomic_writer import FileProjection

CONFIG_MAP, SECRET = "ConfigMap", "Secret"
DEFAULT_MODE = 0o644

#: ``(kind, namespace, name)`` → the cached object, or None when it does not exist.
Lookup = Callable[[str, str, str], Obj | None]


class ConfigError(Exception):
    """A ConfigMap/Secret a pod needs is missing (the message is Kubernetes' own)."""


class ContainerConfigError(ConfigError):
    """A container's env cannot be built: its waiting reason is ``CreateContainerConfigError``."""


def not_found(kind: str, name: str) -> str:
    """``configmap "x" not found`` / ``secret "x" not found``."""
    return f'{kind.lower()} "{name}" not found'


def _data(kind: str, obj: Obj, error: type[ConfigError] = ConfigError) -> dict[str, bytes]:
    """Every key's bytes; ``error`` for a value the apiserver would never have stored."""
    try:
        return decoded_data(obj)
    except ValueError as exc:
        meta = obj.get("metadata") or {}
        raise error(f"{kind} {meta.get('namespace')}/{meta.get('name')}: {exc}") from None


def volume_reference(vol: Obj) -> tuple[str, str] | None:
    """``(kind, name)`` of a ``configMap`` or ``secret`` volume, else None."""
    if vol.get("configMap") is not None:
        return CONFIG_MAP, str(vol["configMap"].get("name") or "")
    if vol.get("secret") is not None:
        return SECRET, str(vol["secret"].get("secretName") or "")
    return None


def projection_reference(source: Obj) -> tuple[str, str] | None:
    """``(kind, name)`` of a projected volume's ``configMap`` or ``secret`` source, else None."""
    if source.get("configMap") is not None:
        return CONFIG_MAP, str(source["configMap"].get("name") or "")
    if source.get("secret") is not None:
        return SECRET, str(source["secret"].get("name") or "")
    return None


def references(pod: Obj) -> set[tuple[str, str]]:
    """Every ``(kind, name)`` the pod reads: volumes (projected sources too), env ``valueFrom``
    and ``envFrom`` of all containers."""
    spec = pod.get("spec") or {}
    refs = {ref for vol in spec.get("volumes") or [] if (ref := volume_reference(vol)) is not None}
    for vol in spec.get("volumes") or []:
        for source in (vol.get("projected") or {}).get("sources") or []:
            if (ref := projection_reference(source)) is not None:
                refs.add(ref)
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        for item in c.get("env") or []:
            source = item.get("valueFrom") or {}
            if source.get("configMapKeyRef"):
                refs.add((CONFIG_MAP, str(source["configMapKeyRef"].get("name") or "")))
            if source.get("secretKeyRef"):
                refs.add((SECRET, str(source["secretKeyRef"].get("name") or "")))
        for item in c.get("envFrom") or []:
            if item.get("configMapRef"):
                refs.add((CONFIG_MAP, str(item["configMapRef"].get("name") or "")))
            if item.get("secretRef"):
                refs.add((SECRET, str(item["secretRef"].get("name") or "")))
    return refs


def volume_payload(namespace: str, vol: Obj, lookup: Lookup) -> dict[str, FileProjection]:
    """The files of a ``configMap``/``secret`` volume (Kubernetes' ``MakePayload``).

    Without ``items`` every key becomes a file; with ``items`` only those keys, at their
    ``path`` and ``mode``.  Raises ConfigError for a missing object or key unless optional.
    """
    ref = volume_reference(vol)
    if ref is None:
        raise ValueError("not a configMap or secret volume")
    source = vol["configMap"] if ref[0] == CONFIG_MAP else vol["secret"]
    default_mode = source.get("defaultMode")
    return object_payload(namespace, ref, source, DEFAULT_MODE if default_mode is None else int(default_mode), lookup)


def object_payload(namespace: str, ref: tuple[str, str], source: Obj, default_mode: int,
                   lookup: Lookup) -> dict[str, FileProjection]:
    """The files of ConfigMap/Secret ``ref`` as ``source`` (a volume or a projected volume's
    source: ``items``, ``optional``) selects them, ``default_mode`` for items without ``mode``.

    Raises ConfigError for a missing object or key unless optional.
    """
    kind, name = ref
    optional = bool(source.get("optional"))
    obj = lookup(kind, namespace, name)
    if obj is None:
        if optional:
            return {}
        raise ConfigError(not_found(kind, name))
    data = _data(kind, obj)
    items = source.get("items") or []
    if not items:
        return {key: FileProjection(value, default_mode) for key, value in data.items()}
    payload: dict[str, FileProjection] = {}
    for item in items:
        key = str(item.get("key") or "")
        if key not in data:
            if optional:
                continue
            what = "configmap references non-existent config key" if kind == CONFIG_MAP else \
                "references non-existent secret key"
            raise ConfigError(f"{what}: {key}")
        mode = item.get("mode")
        payload[str(item.get("path") or key)] = FileProjection(data[key], default_mode if mode is None else int(mode))
    return payload


def _text(value: bytes) -> str:
    return value.decode("utf-8", "replace")


def env_from(pod: Obj, container: Obj, lookup: Lookup) -> tuple[dict[str, str], list[str]]:
    """The variables of ``envFrom`` (in order; later sources win) and warnings for skipped keys.

    Keys that are not valid variable names are skipped (Kubernetes' InvalidEnvironmentVariableNames
    event).  Raises ContainerConfigError for a missing object unless optional.
    """
    namespace = (pod.get("metadata") or {}).get("namespace") or ""
    env: dict[str, str] = {}
    warnings: list[str] = []
    for item in container.get("envFrom") or []:
        if item.get("configMapRef"):
            kind, ref = CONFIG_MAP, item["configMapRef"]
        elif item.get("secretRef"):
            kind, ref = SECRET, item["secretRef"]
        else:
            continue
        name = str(ref.get("name") or "")
        obj = lookup(kind, namespace, name)
        if obj is None:
            if ref.get("optional"):
                continue
            raise ContainerConfigError(not_found(kind, name))
        prefix = str(item.get("prefix") or "")
        invalid = []
        for key, value in sorted(_data(kind, obj, ContainerConfigError).items()):
            if env_var_name_errors(prefix + key):
                invalid.append(prefix + key)
                continue
            env[prefix + key] = _text(value)
        if invalid:
            what = "configMap" if kind == CONFIG_MAP else "secret"
            warnings.append(f"Keys [{', '.join(invalid)}] from the EnvFrom {what} {namespace}/{name} were skipped "
                            "since they are considered invalid environment variable names.")
    return env, warnings


def key_ref_value(pod: Obj, source: Obj, lookup: Lookup) -> str | None:
    """The value of ``valueFrom.configMapKeyRef``/``secretKeyRef`` (None: optional and missing).

    Raises ContainerConfigError for a missing object or key unless optional.
    """
    namespace = (pod.get("metadata") or {}).get("namespace") or ""
    kind, ref = (CONFIG_MAP, source["configMapKeyRef"]) if source.get("configMapKeyRef") else \
        (SECRET, source["secretKeyRef"])
    name, key = str(ref.get("name") or ""), str(ref.get("key") or "")
    obj = lookup(kind, namespace, name)
    if obj is None:
        if ref.get("optional"):
            return None
        raise ContainerConfigError(not_found(kind, name))
    data = _data(kind, obj, ContainerConfigError)
    if key not in data:
        if ref.get("optional"):
            return None
        raise ContainerConfigError(f"couldn't find key {key} in {kind} {namespace}/{name}")
    return _text(data[key])


class ConfigSources:
    """Informers of every ConfigMap and Secret; ``on_change(kind, namespace, name)`` runs
    (on the event loop) whenever one is added, changed or deleted.  Also every Service, for the
    containers' Service variables (:meth:`services`; a change reaches containers started later,
    as in Kubernetes)."""

    def __init__(self, client: Client, on_change: Callable[[str, str, str], None]) -> None:
        self.informers = {kind: Informer(client, client.kind("v1", kind)) for kind in (CONFIG_MAP, SECRET)}
        self.service_informer = Informer(client, client.kind("v1", "Service"),
                                         indexers={NAMESPACE_INDEX: by_namespace})
        for kind, informer in self.informers.items():
            def changed(obj: Obj, kind: str = kind) -> None:
                meta = obj.get("metadata") or {}
                on_change(kind, meta.get("namespace") or "", meta.get("name") or "")

            def updated(old: Obj, new: Obj, kind: str = kind) -> None:
                if {k: v for k, v in old.items() if k != "metadata"} != \
                        {k: v for k, v in new.items() if k != "metadata"}:
                    changed(new, kind)

            informer.add_handler(on_add=changed, on_update=updated, on_delete=changed)

    def get(self, kind: str, namespace: str, name: str) -> Obj | None:
        """The cached ConfigMap/Secret ``namespace/name`` (a :data:`Lookup`)."""
        return self.informers[kind].get(object_key({"metadata": {"namespace": namespace, "name": name}}))

    def services(self, namespace: str) -> list[Obj]:
        """The cached Services of ``namespace`` and of ``default`` (where ``kubernetes`` is)."""
        found = list(self.service_informer.by_index(NAMESPACE_INDEX, namespace))
        if namespace != "default":
            found += self.service_informer.by_index(NAMESPACE_INDEX, "default")
        return found

    def has_synced(self) -> bool:
        return all(i.has_synced() for i in self.informers.values()) and self.service_informer.has_synced()

    async def run(self) -> None:
        """Run the informers (forever)."""
        await asyncio.gather(*(i.run() for i in self.informers.values()), self.service_informer.run())
