"""Defaulting and validation of the GPU-job kinds (``minik8s.io/v1`` SlurmCluster and GPUJob).

Messages and field paths read like Kubernetes' (``spec.slurm.gpus: Invalid value: -1: must be
greater than or equal to 0``); see :mod:`minik8s.api.gpujobs` for the fields.
"""

from __future__ import annotations

from typing import Any

from minik8s.api import gpujobs as g
from minik8s.api import validation as v
from minik8s.api.quantity import parse_quantity
from minik8s.apiserver.strategies.base import REQUIRED, Cause, Obj, Strategy

#: Most bytes of inline source files (the object itself must stay well under etcd's limit).
MAX_INLINE_SOURCE_BYTES = 1024 * 1024
MAX_RESULT_GLOBS = 64


def _non_negative_int(value: Any, path: str, minimum: int = 0) -> list[Cause]:
    if value is None:
        return []
    if not isinstance(value, int) or isinstance(value, bool):
        return [(path, value, "must be an integer")]
    if value < minimum:
        return [(path, value, f"must be greater than or equal to {minimum}")]
    return []


def _name_causes(value: Any, path: str, check: Any) -> list[Cause]:
    if value in (None, ""):
        return []
    if not isinstance(value, str):
        return [(path, value, "must be a string")]
    return [(path, value, m) for m in check(value)]


class SlurmClusterStrategy(Strategy):
    """SlurmCluster (cluster-scoped): ``host`` (DNS name or IP), ``port`` 1-65535 (default 22),
    ``user`` (login name), ``secretRef.name`` required (``namespace`` defaults to ``default``),
    ``workDir`` (default ``minik8s-jobs``) without ``..`` or control characters,
    ``defaultPartition`` a Slurm name."""

    has_status = True
    namespace_scoped = False

    def default(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        if not isinstance(spec, dict):
            return
        spec.setdefault("port", 22)
        spec.setdefault("workDir", g.DEFAULT_WORK_DIR)
        ref = spec.get("secretRef")
        if isinstance(ref, dict):
            ref.setdefault("namespace", "default")

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return causes + [("spec", None, REQUIRED)]
        host = spec.get("host")
        if not host:
            causes.append(("spec.host", None, REQUIRED))
        elif not isinstance(host, str) or (v.dns1123_subdomain_errors(host.lower()) and not _is_ip(host)):
            causes.append(("spec.host", host, "must be a DNS name or an IP address"))
        port = spec.get("port")
        if not isinstance(port, int) or isinstance(port, bool):
            causes.append(("spec.port", port, "must be an integer"))
        else:
            causes += [("spec.port", port, m) for m in v.port_number_errors(port)]
        user = spec.get("user")
        if not user:
            causes.append(("spec.user", None, REQUIRED))
        else:
            causes += _name_causes(user, "spec.user", g.user_name_errors)
        ref = spec.get("secretRef")
        if not isinstance(ref, dict) or not ref.get("name"):
            causes.append(("spec.secretRef.name", None, REQUIRED))
        else:
            causes += _name_causes(ref.get("name"), "spec.secretRef.name", v.dns1123_subdomain_errors)
            causes += _name_causes(ref.get("namespace"), "spec.secretRef.namespace", v.dns1123_label_errors)
        work_dir = spec.get("workDir")
        if not isinstance(work_dir, str) or not work_dir:
            causes.append(("spec.workDir", None, REQUIRED))
        elif ".." in work_dir.split("/") or any(ord(ch) < 32 for ch in work_dir):
            causes.append(("spec.workDir", work_dir, "must not contain '..' or control characters"))
        causes += _name_causes(spec.get("defaultPartition"), "spec.defaultPartition", g.slurm_name_errors)
        return causes


def _is_ip(host: str) -> bool:
    import ipaddress

    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class GPUJobStrategy(Strategy):
    """GPUJob: defaults ``build`` (``nvcc -O2 -o app *.cu``), ``run.command`` (``./app``) and
    ``slurm`` (gpus 1, nodes 1, ntasks 1, cpusPerTask 1); validates the cluster name, the
    sources (inline files with relative paths, at most 1 MiB, or a ConfigMap name), the Slurm
    settings (counts, memory quantity, time limit, partition/account/qos names) and the result
    globs.  The spec is immutable once created (a submitted job cannot change), as a Job's
    template is.  GPUJob names are DNS-1123 labels (at most 63 characters)."""

    has_status = True
    name_check = staticmethod(v.dns1123_label_errors)

    def default(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        if not isinstance(spec, dict):
            return
        if spec.get("build") is None:
            spec["build"] = g.DEFAULT_BUILD
        run = spec.setdefault("run", {})
        if isinstance(run, dict) and not run.get("command"):
            run["command"] = list(g.DEFAULT_RUN_COMMAND)
        slurm = spec.setdefault("slurm", {})
        if isinstance(slurm, dict):
            for key, value in (("gpus", 1), ("nodes", 1), ("ntasks", 1), ("cpusPerTask", 1)):
                slurm.setdefault(key, value)
            if isinstance(slurm.get("memory"), int | float) and not isinstance(slurm.get("memory"), bool):
                slurm["memory"] = str(slurm["memory"])

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return causes + [("spec", None, REQUIRED)]
        if old is not None and spec != old.get("spec"):
            return causes + [("spec", None, "Forbidden: field is immutable")]
        cluster = spec.get("cluster")
        if not cluster:
            causes.append(("spec.cluster", None, REQUIRED))
        else:
            causes += _name_causes(cluster, "spec.cluster", v.dns1123_subdomain_errors)
        causes += self._sources_errors(spec.get("sources"))
        build = spec.get("build")
        if build is not None and not isinstance(build, str):
            causes.append(("spec.build", build, "must be a string"))
        causes += self._run_errors(spec.get("run"))
        causes += self._slurm_errors(spec.get("slurm"))
        globs = spec.get("resultFiles")
        if globs is not None:
            if not isinstance(globs, list):
                causes.append(("spec.resultFiles", None, "must be a list of globs"))
            else:
                if len(globs) > MAX_RESULT_GLOBS:
                    causes.append(("spec.resultFiles", None, f"Too many: {len(globs)}: must have at most "
                                                             f"{MAX_RESULT_GLOBS} items"))
                for i, glob in enumerate(globs):
                    causes += [(f"spec.resultFiles[{i}]", glob, m) for m in
                               (g.relative_path_errors(glob, glob=True) if isinstance(glob, str)
                                else ["must be a string"])]
        return causes

    @staticmethod
    def _sources_errors(sources: Any) -> list[Cause]:
        if not isinstance(sources, dict) or not (sources.get("files") or sources.get("configMapRef")):
            return [("spec.sources", None, "Required value: one of `files` or `configMapRef` must be specified")]
        causes: list[Cause] = []
        if sources.get("files") and sources.get("configMapRef"):
            causes.append(("spec.sources", None, "Invalid value: may not specify both `files` and `configMapRef`"))
        files = sources.get("files")
        if files is not None:
            if not isinstance(files, dict):
                return causes + [("spec.sources.files", None, "must be a map of file name to content")]
            total = 0
            for name, content in files.items():
                path = f"spec.sources.files[{name}]"
                causes += [(path, None, m) for m in g.relative_path_errors(name)]
                if not isinstance(content, str):
                    causes.append((path, None, "must be a string (the file's text)"))
                else:
                    total += len(content.encode())
            if total > MAX_INLINE_SOURCE_BYTES:
                causes.append(("spec.sources.files", None, f"Too long: must have at most {MAX_INLINE_SOURCE_BYTES} "
                                                           f"bytes (use a configMapRef)"))
        ref = sources.get("configMapRef")
        if ref is not None:
            if not isinstance(ref, dict) or not ref.get("name"):
                causes.append(("spec.sources.configMapRef.name", None, REQUIRED))
            else:
                causes += _name_causes(ref["name"], "spec.sources.configMapRef.name", v.dns1123_subdomain_errors)
        return causes

    @staticmethod
    def _run_errors(run: Any) -> list[Cause]:
        if run is None:
            return []
        if not isinstance(run, dict):
            return [("spec.run", None, "must be an object with command and args")]
        causes: list[Cause] = []
        for key in ("command", "args"):
            value = run.get(key)
            if value is not None and (not isinstance(value, list) or not all(isinstance(a, str) for a in value)):
                causes.append((f"spec.run.{key}", None, "must be a list of strings"))
        if not run.get("command"):
            causes.append(("spec.run.command", None, REQUIRED))
        return causes

    @staticmethod
    def _slurm_errors(slurm: Any) -> list[Cause]:
        if slurm is None:
            return []
        if not isinstance(slurm, dict):
            return [("spec.slurm", None, "must be an object")]
        causes: list[Cause] = []
        causes += _non_negative_int(slurm.get("gpus"), "spec.slurm.gpus", 0)
        for key in ("cpusPerTask", "ntasks", "nodes"):
            causes += _non_negative_int(slurm.get(key), f"spec.slurm.{key}", 1)
        memory = slurm.get("memory")
        if memory not in (None, ""):
            try:
                positive = parse_quantity(memory) > 0
            except (ValueError, TypeError) as exc:
                causes.append(("spec.slurm.memory", memory, str(exc)))
            else:
                if not positive:
                    causes.append(("spec.slurm.memory", memory, "must be greater than 0"))
        causes += _name_causes(slurm.get("timeLimit"), "spec.slurm.timeLimit", g.time_limit_errors)
        for key in ("partition", "account", "qos"):
            causes += _name_causes(slurm.get(key), f"spec.slurm.{key}", g.slurm_name_errors)
        return causes
