"""How pods refer to ConfigMaps and Secrets: defaulting and validation of ``configMap``/``secret``
volumes, ``env[].valueFrom.configMapKeyRef``/``secretKeyRef`` and ``envFrom``, as Kubernetes'
``SetDefaults_*VolumeSource``, ``validate*VolumeSource``, ``validateEnvVarValueFrom`` and
``ValidateEnvFrom`` do.  Called from the Pod strategy's defaulting and validation.
"""

from __future__ import annotations

from typing import Any

from minik8s.api import validation as v

Cause = tuple[str, Any, str]
Obj = dict[str, Any]
REQUIRED = "Required value"

FILE_MODE_MSG = "must be a number between 0 and 0777 (octal), both inclusive"
DEFAULT_MODE = 0o644


def default_volume_sources(spec: Obj) -> None:
    """``SetDefaults_ConfigMapVolumeSource``/``SetDefaults_SecretVolumeSource``: ``defaultMode`` 0644."""
    for vol in spec.get("volumes") or []:
        for source in ("configMap", "secret"):
            if isinstance(vol.get(source), dict):
                vol[source].setdefault("defaultMode", DEFAULT_MODE)


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
    """``validateConfigMapVolumeSource``/``validateSecretVolumeSource`` for one pod volume
    (``path`` is ``spec.volumes[i]``): the object's name, ``defaultMode`` and every
    ``items[]`` entry (key, relative path, mode)."""
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
            ip = f"{sp}.items[{i}]"
            if not item.get("key"):
                causes.append((f"{ip}.key", None, REQUIRED))
            if not item.get("path"):
                causes.append((f"{ip}.path", None, REQUIRED))
            else:
                causes += _local_path_errors(str(item["path"]), f"{ip}.path")
            causes += _mode_errors(item.get("mode"), f"{ip}.mode")
    return causes


def env_source_errors(container: Obj, path: str) -> list[Cause]:
    """``validateEnvVarValueFrom`` (key references) and ``ValidateEnvFrom`` for one container
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
