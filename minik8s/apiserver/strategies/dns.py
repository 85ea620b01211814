"""minik8s.io/v1 DNS: a host name plus paths, each forwarded to a Service."""

from __future__ import annotations

from minik8s.api import validation as v
from minik8s.api.networking import normalize_path
from minik8s.apiserver.strategies.base import REQUIRED, Cause, Obj, Strategy, host_errors, http_path_errors


class DNSStrategy(Strategy):
    """minik8s.io/v1 DNS: a host name plus paths, each forwarded to a Service of the namespace.

    Validation: ``spec.host`` is a DNS subdomain (not an IP), ``spec.paths`` is non-empty,
    every ``path`` starts with ``/`` and is unique (trailing slashes ignored),
    ``serviceName`` is a valid Service name (DNS-1035 label), ``servicePort`` is 1-65535.
    """

    has_status = True

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        spec = obj.get("spec") or {}
        causes += host_errors(spec.get("host"), "spec.host")
        paths = spec.get("paths") or []
        if not paths:
            causes.append(("spec.paths", None, REQUIRED))
        seen: set[str] = set()
        for i, p in enumerate(paths):
            pp = f"spec.paths[{i}]"
            if not isinstance(p, dict):
                causes.append((pp, None, "must be an object"))
                continue
            path_causes = http_path_errors(p.get("path"), f"{pp}.path")
            causes += path_causes
            if not path_causes:
                norm = normalize_path(p["path"])
                if norm in seen:
                    causes.append((f"{pp}.path", None, f'Duplicate value: "{p["path"]}"'))
                seen.add(norm)
            svc = p.get("serviceName")
            if not svc:
                causes.append((f"{pp}.serviceName", None, REQUIRED))
            else:
                causes += [(f"{pp}.serviceName", svc, m) for m in v.dns1035_label_errors(str(svc))]
            port = p.get("servicePort")
            if port is None:
                causes.append((f"{pp}.servicePort", None, REQUIRED))
            else:
                causes += [(f"{pp}.servicePort", port, m) for m in v.port_number_errors(port)]
        return causes
