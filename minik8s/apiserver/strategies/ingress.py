"""networking.k8s.io/v1 Ingress: validation, and the DefaultIngressClass admission (an Ingress created
without ``spec.ingressClassName`` gets the default IngressClass's name)."""

from __future__ import annotations

from typing import Any

from minik8s.api import validation as v
from minik8s.api.networking import default_ingress_class
from minik8s.apiserver.strategies.base import REQUIRED, Cause, Obj, Strategy, host_errors, http_path_errors, unsupported

INGRESS_PATH_TYPES = ("Exact", "Prefix", "ImplementationSpecific")


class IngressStrategy(Strategy):
    """networking.k8s.io/v1 Ingress, validated like Kubernetes' ``ValidateIngressSpec``.

    ``rules`` or ``defaultBackend`` is required; rule hosts are (wildcard) DNS subdomains;
    every HTTP path has a ``pathType`` (Exact, Prefix, ImplementationSpecific) and an absolute
    ``path``; a backend names a Service (DNS-1035 label) and exactly one of ``port.number``
    (1-65535) or ``port.name`` (IANA service name).
    """

    has_status = True

    async def allocate(self, store: Any, obj: Obj, old: Obj | None) -> list[str]:
        """The DefaultIngressClass admission (Kubernetes' ``plugin/pkg/admission/network/defaultingressclass``):
        a new Ingress without ``spec.ingressClassName`` (absent, not ``""``) nor the legacy
        ``kubernetes.io/ingress.class`` annotation gets the name of the
        IngressClass annotated ``ingressclass.kubernetes.io/is-default-class: "true"`` (the newest of
        several); nothing when there is none."""
        spec = obj.setdefault("spec", {})
        annotations = (obj.get("metadata") or {}).get("annotations") or {}
        if old is None and spec.get("ingressClassName") is None and "kubernetes.io/ingress.class" not in annotations:
            classes, _, _ = await store.list("/registry/ingressclasses/")
            chosen = default_ingress_class(classes)
            if chosen is not None:
                spec["ingressClassName"] = chosen["metadata"]["name"]
        return []

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        spec = obj.get("spec") or {}
        rules = spec.get("rules") or []
        if not rules and not spec.get("defaultBackend"):
            causes.append(("spec", None, "either `defaultBackend` or `rules` must be specified"))
        cls = spec.get("ingressClassName")
        if cls:
            causes += [("spec.ingressClassName", cls, m) for m in v.dns1123_subdomain_errors(str(cls))]
        if spec.get("defaultBackend"):
            causes += self._backend_errors(spec["defaultBackend"], "spec.defaultBackend")
        for i, rule in enumerate(rules):
            rp = f"spec.rules[{i}]"
            if rule.get("host"):
                causes += host_errors(rule["host"], f"{rp}.host", wildcard=True)
            http = rule.get("http")
            if http is None:
                continue
            if not http.get("paths"):
                causes.append((f"{rp}.http.paths", None, REQUIRED))
            for j, path in enumerate(http.get("paths") or []):
                pp = f"{rp}.http.paths[{j}]"
                path_type = path.get("pathType")
                if not path_type:
                    causes.append((f"{pp}.pathType", None, "Required value: pathType must be specified"))
                elif path_type not in INGRESS_PATH_TYPES:
                    causes.append((f"{pp}.pathType", None, unsupported(path_type, INGRESS_PATH_TYPES)))
                causes += http_path_errors(path.get("path"), f"{pp}.path")
                causes += self._backend_errors(path.get("backend"), f"{pp}.backend")
        return causes

    @staticmethod
    def _backend_errors(backend: Any, path: str) -> list[Cause]:
        if not isinstance(backend, dict) or not (backend.get("service") or backend.get("resource")):
            return [(path, None, "Required value: one of `service` or `resource` must be specified")]
        if backend.get("service") and backend.get("resource"):
            return [(path, None, "Invalid value: cannot set both `resource` and `service` backends")]
        service = backend.get("service")
        if not service:
            return []
        causes: list[Cause] = []
        if not service.get("name"):
            causes.append((f"{path}.service.name", None, REQUIRED))
        else:
            causes += [(f"{path}.service.name", service["name"], m)
                       for m in v.dns1035_label_errors(str(service["name"]))]
        port = service.get("port") or {}
        number, name = port.get("number"), port.get("name")
        if number is not None and name:
            causes.append((f"{path}.service.port", None, "Invalid value: cannot set both port name & port number"))
        elif number is not None:
            causes += [(f"{path}.service.port.number", number, m) for m in v.port_number_errors(number)]
        elif name:
            causes += [(f"{path}.service.port.name", name, m) for m in v.iana_svc_name_errors(str(name))]
        else:
            causes.append((f"{path}.service.port", None, "Required value: port name or number is required"))
        return causes
