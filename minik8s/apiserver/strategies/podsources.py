"""How pods refer to ConfigMaps, Secrets and their own fields: defaulting and validation of
``configMap``/``secret``/``downwardAPI``/``projected`` volumes, ``env[].valueFrom.configMapKeyRef``/
``secretKeyRef``/``fieldRef`` and ``envFrom``, as Kubernetes' ``SetDefaults_*VolumeSource``,
``validate*VolumeSource``, ``validateProjectionSources``, ``validateEnvVarValueFrom`` and
``ValidateEnvFrom`` do.  Called from the Pod strategy's defaulting and validation.
"""

from __future__ import annotations

from typing import Any

from minik8s.api import validation as v
from minik8s.api.base import Obj
from minik8s.api.quantity import parse_quantity
from minik8s.apiserver.strategies.base import unsupported

Cause = tuple[str, Any, str]
REQUIRED = "Required value"

FILE_MODE_MSG = "must be a number between 0 and 0777 (octal), both inclusive"
DEFAULT_MODE = 0o644
#: ``serviceAccountToken`` projections: default and bounds of ``expirationSeconds``
TOKEN_EXPIRATION_DEFAULT, TOKEN_EXPIRATION_MIN, TOKEN_EXPIRATION_MAX = 3600, 600, 1 << 32
#: the pod fields a downwardAPI volume file may hold (plus ``metadata.labels['k']``/``annotations['k']``)
DOWNWARD_FIELD_PATHS = ("metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace",
                        "metadata.uid")
#: the pod fields an ``env[].valueFrom.fieldRef`` may name (plus ``metadata.labels['k']``/``annotations['k']``)
ENV_FIELD_PATHS = ("metadata.name", "metadata.namespace", "metadata.uid", "spec.nodeName", "spec.serviceAccountName",
                   "status.hostIP", "status.hostIPs", "status.podIP", "status.podIPs")
#: the container resources a ``resourceFieldRef`` may name
RESOURCE_FIELD_PATHS = ("limits.cpu", "limits.ephemeral-storage", "limits.memory", "requests.cpu",
                        "requests.ephemeral-storage", "requests.memory")
CPU_DIVISORS = ("1m", "1")
BYTE_DIVISORS = ("1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei")
#: the kinds of source of one projected volume source
PROJECTIONS = ("secret", "configMap", "downwardAPI", "serviceAccountToken")


def default_volume_sources(spec: Obj) -> None:
    """``SetDefaults_{ConfigMap,Secret,DownwardAPI,Projected}VolumeSource``: ``defaultMode`` 0644;
    ``fieldRef.apiVersion`` ``v1`` (of volume files and of containers' ``env[].valueFrom``);
    ``serviceAccountToken.expirationSeconds`` 3600."""
    for vol in spec.get("volumes") or []:
        for source in ("configMap", "secret", "downwardAPI", "projected"):
            if isinstance(vol.get(source), dict):
                vol[source].setdefault("defaultMode", DEFAULT_MODE)
        downward = [vol.get("downwardAPI")]
        for src in (vol.get("projected") or {}).get("sources") or [] if isinstance(vol.get("projected"), dict) else []:
            if not isinstance(src, dict):
                continue
            downward.append(src.get("downwardAPI"))
            if isinstance(src.get("serviceAccountToken"), dict):
                src["serviceAccountToken"].setdefault("expirationSeconds", TOKEN_EXPIRATION_DEFAULT)
        for source in downward:
            for item in (source or {}).get("items") or [] if isinstance(source, dict) else []:
                if isinstance(item, dict) and isinstance(item.get("fieldRef"), dict):
                    item["fieldRef"].setdefault("apiVersion", "v1")
    for kind in ("containers", "initContainers", "ephemeralContainers"):
        for c in spec.get(kind) or []:
            for env in (c.get("env") or []) if isinstance(c, dict) else []:
                ref = ((env or {}).get("valueFrom") or {}).get("fieldRef") if isinstance(env, dict) else None
                if isinstance(ref, dict):
                    ref.setdefault("apiVersion", "v1")


def _mode_errors(mode: Any, path: str) -> list[Cause]:
    if mode is not None and not 0 <= mode <= 0o777:
        return [(path, mode, FILE_MODE_MSG)]
    return []


def _local_path_errors(target: str, path: str) -> list[Cause]:
    """``ValidateLocalNonReservedPath``: relative, no ``..`` element, not starting with ``..``."""
    causes: list[Cause] = []
    if target.startswith("/"):
        causes.append((path, target, "must be a relative path"))
    if ".." in target.split("/"):
        causes.append((path, target, "must not contain '..'"))
    elif target.startswith(".."):
        causes.append((path, target, "must not start with '..'"))
    return causes


def volume_source_errors(vol: Obj, path: str) -> list[Cause]:
    """``validate{ConfigMap,Secret,DownwardAPI,Projected}VolumeSource`` for one pod volume
    (``path`` is ``spec.volumes[i]``): the object's name, ``defaultMode`` and every
    ``items[]`` entry (key or pod field, relative path, mode); projected sources."""
    causes: list[Cause] = []
    for source, name_field in (("configMap", "name"), ("secret", "secretName")):
        src = vol.get(source)
        if not isinstance(src, dict):
            continue
        sp = f"{path}.{source}"
        if not src.get(name_field):
            causes.append((f"{sp}.{name_field}", None, REQUIRED))
        causes += _mode_errors(src.get("defaultMode"), f"{sp}.defaultMode")
        for i, item in enumerate(src.get("items") or []):
            causes += _key_to_path_errors(item, f"{sp}.items[{i}]")
    downward = vol.get("downwardAPI")
    if isinstance(downward, dict):
        causes += _mode_errors(downward.get("defaultMode"), f"{path}.downwardAPI.defaultMode")
        seen: set[str] = set()
        for i, item in enumerate(downward.get("items") or []):
            causes += downward_api_file_errors(item, f"{path}.downwardAPI.items[{i}]")
            if item.get("path") in seen:
                causes.append((f"{path}.downwardAPI.items[{i}].path", item["path"], "conflicting duplicate paths"))
            seen.add(str(item.get("path") or ""))
    if isinstance(vol.get("projected"), dict):
        causes += projected_volume_errors(vol["projected"], f"{path}.projected")
    return causes


def _key_to_path_errors(item: Obj, path: str) -> list[Cause]:
    """``validateKeyToPath``: key and relative path required, mode within 0..0777."""
    causes: list[Cause] = []
    if not item.get("key"):
        causes.append((f"{path}.key", None, REQUIRED))
    if not item.get("path"):
        causes.append((f"{path}.path", None, REQUIRED))
    else:
        causes += _local_path_errors(str(item["path"]), f"{path}.path")
    causes += _mode_errors(item.get("mode"), f"{path}.mode")
    return causes


def _divisor_errors(resource: str, divisor: Any, path: str) -> list[Cause]:
    """``validateContainerResourceDivisor``: 1m or 1 for cpu, a power of 1000/1024 for bytes."""
    if divisor is None or str(divisor) == "0":
        return []
    cpu = resource.endswith(".cpu")
    allowed = CPU_DIVISORS if cpu else BYTE_DIVISORS
    try:
        ok = any(parse_quantity(str(divisor)) == parse_quantity(a) for a in allowed)
    except ValueError:
        ok = False
    if ok:
        return []
    what = "cpu" if cpu else resource.partition(".")[2]
    return [(path, divisor, f"only divisor's values {', '.join(allowed)} are supported with the {what} resource")]


def field_ref_errors(field_ref: Obj, fp: str, allowed: tuple[str, ...]) -> list[Cause]:
    """``validateObjectFieldSelector`` (``fp`` is the ``fieldRef``'s path): apiVersion and fieldPath
    required, version ``v1``, a path of ``allowed`` or a label / annotation subscript."""
    field_path = str(field_ref.get("fieldPath") or "")
    if not field_ref.get("apiVersion"):
        return [(f"{fp}.apiVersion", None, REQUIRED)]
    if not field_path:
        return [(f"{fp}.fieldPath", None, REQUIRED)]
    if field_ref["apiVersion"] != "v1":
        return [(f"{fp}.fieldPath", field_path,
                 f'error converting fieldPath: unsupported pod version: {field_ref["apiVersion"]}')]
    if field_path.endswith("']") and "['" in field_path:
        base, _, subscript = field_path[:-2].partition("['")
        if base == "metadata.labels":
            return [(fp, subscript, m) for m in v.qualified_name_errors(subscript)]
        if base == "metadata.annotations":
            return [(fp, subscript, m) for m in v.qualified_name_errors(subscript.lower())]
        return [(fp, base, "does not support subscript")]
    if field_path not in allowed:
        return [(f"{fp}.fieldPath", None, unsupported(field_path, allowed))]
    return []


def downward_api_file_errors(item: Obj, path: str) -> list[Cause]:
    """``validateDownwardAPIVolumeFile`` for one item (``path`` is ``...items[j]``): a relative
    ``path``, exactly one of ``fieldRef`` (a supported pod field) and ``resourceFieldRef``
    (``containerName`` required, a supported resource and divisor), ``mode`` within 0..0777."""
    causes: list[Cause] = []
    if not item.get("path"):
        causes.append((f"{path}.path", None, REQUIRED))
    else:
        causes += _local_path_errors(str(item["path"]), f"{path}.path")
    field_ref, resource_ref = item.get("fieldRef"), item.get("resourceFieldRef")
    if isinstance(field_ref, dict):
        causes += field_ref_errors(field_ref, f"{path}.fieldRef", DOWNWARD_FIELD_PATHS)
        if resource_ref is not None:
            causes.append((path, "resource", "fieldRef and resourceFieldRef can not be specified simultaneously"))
    elif isinstance(resource_ref, dict):
        rp = f"{path}.resourceFieldRef"
        resource = str(resource_ref.get("resource") or "")
        if not resource_ref.get("containerName"):
            causes.append((f"{rp}.containerName", None, REQUIRED))
        if not resource:
            causes.append((f"{rp}.resource", None, REQUIRED))
        elif resource not in RESOURCE_FIELD_PATHS:
            causes.append((f"{rp}.resource", None, unsupported(resource, RESOURCE_FIELD_PATHS)))
        else:
            causes += _divisor_errors(resource, resource_ref.get("divisor"), f"{rp}.divisor")
    else:
        causes.append((path, None, "Required value: one of fieldRef and resourceFieldRef is required"))
    causes += _mode_errors(item.get("mode"), f"{path}.mode")
    return causes


def projected_volume_errors(projected: Obj, path: str) -> list[Cause]:
    """``validateProjectedVolumeSource`` (``path`` is ``spec.volumes[i].projected``): ``defaultMode``;
    each ``sources[k]`` holds exactly one of secret/configMap/downwardAPI/serviceAccountToken,
    validated as in their own volumes; ``serviceAccountToken`` needs a relative ``path`` and
    ``expirationSeconds`` of at least 10 minutes; the same file path from two items is
    ``conflicting duplicate paths``."""
    causes = _mode_errors(projected.get("defaultMode"), f"{path}.defaultMode")
    seen: set[str] = set()

    def claim(file_path: Any, value: Any) -> None:
        if not file_path:
            return
        if file_path in seen:
            causes.append((path, value, "conflicting duplicate paths"))
        seen.add(str(file_path))

    sources = projected.get("sources")
    for k, src in enumerate(sources if isinstance(sources, list) else []):
        sp = f"{path}.sources[{k}]"
        if not isinstance(src, dict):
            causes.append((sp, None, REQUIRED))
            continue
        given = [kind for kind in PROJECTIONS if src.get(kind) is not None]
        if not given:
            causes.append((sp, None, "Required value: must specify one of: "
                           + ", ".join(f"`{g}`" for g in PROJECTIONS)))
        elif len(given) > 1:
            causes.append((sp, None, "Forbidden: may not specify more than 1 volume type"))
        for kind in ("secret", "configMap"):
            obj = src.get(kind)
            if not isinstance(obj, dict):
                continue
            if not obj.get("name"):
                causes.append((f"{sp}.{kind}.name", None, REQUIRED))
            for j, item in enumerate(obj.get("items") or []):
                causes += _key_to_path_errors(item, f"{sp}.{kind}.items[{j}]")
                claim(item.get("path"), obj.get("name"))
        downward = src.get("downwardAPI")
        if isinstance(downward, dict):
            for j, item in enumerate(downward.get("items") or []):
                causes += downward_api_file_errors(item, f"{sp}.downwardAPI.items[{j}]")
                claim(item.get("path"), item.get("path"))
        token = src.get("serviceAccountToken")
        if isinstance(token, dict):
            tp = f"{sp}.serviceAccountToken"
            seconds = token.get("expirationSeconds")
            if isinstance(seconds, int) and seconds < TOKEN_EXPIRATION_MIN:
                causes.append((f"{tp}.expirationSeconds", seconds, "may not specify a duration less than 10 minutes"))
            elif isinstance(seconds, int) and seconds > TOKEN_EXPIRATION_MAX:
                causes.append((f"{tp}.expirationSeconds", seconds,
                               "may not specify a duration larger than 2^32 seconds"))
            if not token.get("path"):
                causes.append((f"{tp}.path", None, REQUIRED))
            else:
                causes += _local_path_errors(str(token["path"]), f"{tp}.path")
                claim(token["path"], token["path"])
    return causes


def env_source_errors(container: Obj, path: str) -> list[Cause]:
    """``validateEnvVarValueFrom`` (key references, ``fieldRef`` on :data:`ENV_FIELD_PATHS`) and
    ``ValidateEnvFrom`` for one container
    (``path`` is ``spec.containers[i]``)."""
    causes: list[Cause] = []
    for j, item in enumerate(container.get("env") or []):
        source = item.get("valueFrom")
        if not isinstance(source, dict):
            continue
        vp = f"{path}.env[{j}].valueFrom"
        given = [k for k in ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef")
                 if source.get(k) is not None]
        if not given:
            causes.append((vp, "", "must specify one of: `fieldRef`, `resourceFieldRef`, "
                                     "`configMapKeyRef` or `secretKeyRef`"))
        elif len(given) > 1:
            causes.append((vp, "", "may not have more than one field specified at a time"))
        if item.get("value"):
            causes.append((vp, "", "may not be specified when `value` is not empty"))
        if isinstance(source.get("fieldRef"), dict):
            # apiVersion defaults to v1 (a container validated without the pod defaults: a Function's)
            causes += field_ref_errors({"apiVersion": "v1", **source["fieldRef"]}, f"{vp}.fieldRef", ENV_FIELD_PATHS)
        for ref_field in ("configMapKeyRef", "secretKeyRef"):
            ref = source.get(ref_field)
            if not isinstance(ref, dict):
                continue
            rp = f"{vp}.{ref_field}"
            if not ref.get("name"):
                causes.append((f"{rp}.name", None, REQUIRED))
            if not ref.get("key"):
                causes.append((f"{rp}.key", None, REQUIRED))
            else:
                causes += [(f"{rp}.key", ref["key"], m) for m in v.config_map_key_errors(str(ref["key"]))]
    for j, item in enumerate(container.get("envFrom") or []):
        ep = f"{path}.envFrom[{j}]"
        if item.get("prefix"):
            causes += [(f"{ep}.prefix", item["prefix"], m) for m in v.env_var_name_errors(str(item["prefix"]))]
        refs = [k for k in ("configMapRef", "secretRef") if item.get(k) is not None]
        if not refs:
            causes.append((ep, "", "must specify one of: `configMapRef` or `secretRef`"))
        elif len(refs) > 1:
            causes.append((ep, "", "may not have more than one field specified at a time"))
        for ref_field in refs:
            if not (item[ref_field] or {}).get("name"):
                causes.append((f"{ep}.{ref_field}.name", None, REQUIRED))
    return causes
