"""networking.k8s.io/v1 IngressClass (``pkg/registry/networking/ingressclass``,
``ValidateIngressClass``).

- ``spec.parameters.scope`` defaults to ``Cluster`` (``SetDefaults_IngressClass``);
- ``spec.controller`` is a domain-prefixed path (``acme.io/foo``) of at most 250 characters and never
  changes;
- ``spec.parameters`` needs ``kind`` and ``name``; ``scope`` is ``Cluster`` (no ``namespace``) or
  ``Namespace`` (with one).

That an Ingress without ``ingressClassName`` gets the default class's name is the DefaultIngressClass
admission, done by the Ingress strategy (:mod:`minik8s.apiserver.strategies.ingress`).
"""

from __future__ import annotations

import re

from minik8s.api import validation as v
from minik8s.apiserver.strategies.base import REQUIRED, Cause, Obj, Strategy, unsupported

MAX_CONTROLLER_LENGTH = 250
SCOPES = ("Cluster", "Namespace")
_HTTP_PATH_FMT = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+"
_HTTP_PATH = re.compile(_HTTP_PATH_FMT)


def domain_prefixed_path_errors(value: str, path: str) -> list[Cause]:
    """``validation.IsDomainPrefixedPath``: ``<DNS-1123 subdomain>/<HTTP path>``."""
    if not value:
        return [(path, None, REQUIRED)]
    host, sep, rest = value.partition("/")
    if not sep or not host or not rest:
        return [(path, value, 'must be a domain-prefixed path (such as "acme.io/foo")')]
    causes: list[Cause] = [(path, host, m) for m in v.dns1123_subdomain_errors(host)]
    if not _HTTP_PATH.fullmatch(rest):
        causes.append((path, rest, v.regex_error("Invalid path", _HTTP_PATH_FMT)))
    return causes


class IngressClassStrategy(Strategy):
    """IngressClass: as in the module docstring."""

    namespace_scoped = False

    def default(self, obj: Obj) -> None:
        params = (obj.get("spec") or {}).get("parameters")
        if isinstance(params, dict) and not params.get("scope"):
            params["scope"] = "Cluster"

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        spec = obj.get("spec") or {}
        controller = str(spec.get("controller") or "")
        if len(controller) > MAX_CONTROLLER_LENGTH:
            causes.append(("spec.controller", None, f"Too long: may not be more than {MAX_CONTROLLER_LENGTH} bytes"))
        causes += domain_prefixed_path_errors(controller, "spec.controller")
        params = spec.get("parameters")
        if isinstance(params, dict):
            pp = "spec.parameters"
            for fld in ("kind", "name"):
                if not params.get(fld):
                    causes.append((f"{pp}.{fld}", None, REQUIRED))
            if params.get("apiGroup"):
                causes += [(f"{pp}.apiGroup", params["apiGroup"], m)
                           for m in v.dns1123_subdomain_errors(params["apiGroup"])]
            scope, namespace = params.get("scope"), params.get("namespace")
            if not scope:
                causes.append((f"{pp}.scope", None, REQUIRED))
            elif scope not in SCOPES:
                causes.append((f"{pp}.scope", None, unsupported(scope, SCOPES)))
            elif scope == "Namespace":
                if namespace is None:
                    causes.append((f"{pp}.namespace", None,
                                   "Required value: `parameters.scope` is set to 'Namespace'"))
                else:
                    causes += [(f"{pp}.namespace", namespace, m) for m in v.dns1123_label_errors(namespace)]
            elif namespace is not None:
                causes.append((f"{pp}.namespace", None, "Forbidden: `parameters.scope` is set to 'Cluster'"))
        if old is not None and spec.get("controller") != (old.get("spec") or {}).get("controller"):
            causes.append(("spec.controller", spec.get("controller"), "field is immutable"))
        return causes
