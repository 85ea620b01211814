"""A container's probes, lifecycle hooks and restart rules, validated as Kubernetes 1.32's
``validateProbe``, ``validateLifecycle``, ``validateHandler`` (``validateExecAction``,
``validateHTTPGetAction``, ``validateTCPSocketAction``, ``validateGRPCAction``,
``validateSleepAction``), ``validateInitContainers`` and ``validateContainers`` do:

* a probe or hook names exactly one handler (probes: exec, httpGet, tcpSocket, grpc; hooks:
  exec, httpGet, tcpSocket, sleep); ``exec.command`` is required; ``httpGet`` has a path (defaulted
  to ``/``), a port number or IANA port name, scheme HTTP or HTTPS and header names of letters,
  digits and ``-``; ``tcpSocket``'s port likewise; ``grpc.port`` a port number;
  ``sleep.seconds`` above 0 and at most the pod's ``terminationGracePeriodSeconds``;
* probe timings not negative; a probe's ``terminationGracePeriodSeconds`` above 0 and never on a
  readiness probe; liveness and startup probes' ``successThreshold`` 1;
* ``terminationMessagePolicy`` File or FallbackToLogsOnError;
* ``restartPolicy`` on a container: only ``Always`` and only on an init container (a sidecar);
  an init container that is not a sidecar has no lifecycle hooks nor probes.

Causes are ``(field path, bad value or None, message)``; ``path`` is the container's.
"""

from __future__ import annotations

import re
from typing import Any

from minik8s.api import validation as v
from minik8s.api.base import Obj
from minik8s.apiserver.strategies.base import REQUIRED, Cause, unsupported

PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
PROBE_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")
HOOK_HANDLERS = ("exec", "httpGet", "tcpSocket", "sleep")
HTTP_SCHEMES = ("HTTP", "HTTPS")
MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")
_HEADER_FMT = "[-A-Za-z0-9]+"
_HEADER_RE = re.compile(_HEADER_FMT)
NOT_SIDECAR = "Forbidden: may not be set for init containers without restartPolicy=Always"


def default_hooks(container: Obj) -> None:
    """``SetDefaults_HTTPGetAction`` for lifecycle hooks: path ``/``, scheme ``HTTP``."""
    for hook in ("postStart", "preStop"):
        handler = (container.get("lifecycle") or {}).get(hook)
        if isinstance(handler, dict) and isinstance(handler.get("httpGet"), dict):
            handler["httpGet"].setdefault("path", "/")
            handler["httpGet"].setdefault("scheme", "HTTP")


def port_num_or_name_errors(port: Any, path: str) -> list[Cause]:
    """``ValidatePortNumOrName``: a port number, or an IANA service name."""
    if isinstance(port, str):
        return [(path, port, m) for m in v.iana_svc_name_errors(port)]
    return [(path, port if port is not None else 0, m) for m in v.port_number_errors(port or 0)]


def _handler_errors(handler: Obj, kinds: tuple[str, ...], grace: Any, path: str) -> list[Cause]:
    """``validateHandler``: exactly one of ``kinds`` (each further one is refused), checked."""
    given = [k for k in kinds if handler.get(k) is not None]
    if not given:
        return [(path, None, f"{REQUIRED}: must specify a handler type")]
    causes: list[Cause] = [(f"{path}.{kind}", None, "Forbidden: may not specify more than 1 handler type")
                           for kind in given[1:]]
    for kind in given[:1]:  # only the first is checked further
        action, ap = handler[kind] if isinstance(handler[kind], dict) else {}, f"{path}.{kind}"
        if kind == "exec" and not action.get("command"):
            causes.append((f"{ap}.command", None, REQUIRED))
        elif kind == "httpGet":
            if not action.get("path"):
                causes.append((f"{ap}.path", None, REQUIRED))
            causes += port_num_or_name_errors(action.get("port"), f"{ap}.port")
            scheme = action.get("scheme")
            if scheme not in HTTP_SCHEMES:
                causes.append((f"{ap}.scheme", None, unsupported(scheme or "", HTTP_SCHEMES)))
            for header in action.get("httpHeaders") or []:
                name = str((header or {}).get("name") or "")
                if not _HEADER_RE.fullmatch(name):
                    causes.append((f"{ap}.httpHeaders", name, v.regex_error(
                        "a valid HTTP header must consist of alphanumeric characters or '-'", _HEADER_FMT,
                        "X-Header-Name")))
        elif kind == "tcpSocket":
            causes += port_num_or_name_errors(action.get("port"), f"{ap}.port")
        elif kind == "grpc":
            port = action.get("port")
            causes += [(f"{ap}.port", port, m) for m in v.port_number_errors(port if isinstance(port, int) else 0)]
        elif kind == "sleep":
            seconds = action.get("seconds")
            if isinstance(grace, int) and isinstance(seconds, int) and not 0 < seconds <= grace:
                causes.append((ap, seconds, f"must be greater than 0 and less than terminationGracePeriodSeconds "
                                            f"({grace}). Enable AllowPodLifecycleSleepActionZeroValue feature "
                                            "gate for zero sleep."))
    return causes


def probe_errors(probe: Any, path: str) -> list[Cause]:
    """``validateProbe``: one handler, timings not negative, ``terminationGracePeriodSeconds`` > 0."""
    if not isinstance(probe, dict) or not probe:
        return []
    causes = _handler_errors(probe, PROBE_HANDLERS, None, path)
    for fld in ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"):
        val = probe.get(fld)
        if isinstance(val, int) and val < 0:
            causes.append((f"{path}.{fld}", val, "must be greater than or equal to 0"))
    grace = probe.get("terminationGracePeriodSeconds")
    if isinstance(grace, int) and grace <= 0:
        causes.append((f"{path}.terminationGracePeriodSeconds", grace, "must be greater than 0"))
    return causes


def container_lifecycle_errors(c: Obj, path: str, grace: Any, init: bool) -> list[Cause]:
    """The module docstring's checks for one container (``init``: an init container)."""
    causes: list[Cause] = []
    for probe in PROBES:
        causes += probe_errors(c.get(probe), f"{path}.{probe}")
    for probe in ("livenessProbe", "startupProbe"):
        threshold = (c.get(probe) or {}).get("successThreshold") if isinstance(c.get(probe), dict) else None
        if threshold is not None and threshold != 1:
            causes.append((f"{path}.{probe}.successThreshold", threshold, "must be 1"))
    ready = c.get("readinessProbe")
    if isinstance(ready, dict) and ready.get("terminationGracePeriodSeconds") is not None:
        causes.append((f"{path}.readinessProbe.terminationGracePeriodSeconds",
                       ready["terminationGracePeriodSeconds"], "must not be set for readinessProbes"))
    lifecycle = c.get("lifecycle")
    if isinstance(lifecycle, dict):
        for hook in ("postStart", "preStop"):
            if isinstance(lifecycle.get(hook), dict):
                causes += _handler_errors(lifecycle[hook], HOOK_HANDLERS, grace, f"{path}.lifecycle.{hook}")
    policy = c.get("terminationMessagePolicy")
    if policy == "":
        causes.append((f"{path}.terminationMessagePolicy", None, REQUIRED))
    elif policy is not None and policy not in MESSAGE_POLICIES:
        causes.append((f"{path}.terminationMessagePolicy", None, unsupported(policy, MESSAGE_POLICIES)))
    restart = c.get("restartPolicy")
    if not init:
        if restart is not None:
            causes.append((f"{path}.restartPolicy", None, "Forbidden: may not be set for non-init containers"))
    elif restart is not None and restart != "Always":
        causes.append((f"{path}.restartPolicy", None, unsupported(restart, ("Always",))))
    elif restart is None:
        for fld in ("lifecycle", *PROBES):
            if c.get(fld) is not None:
                causes.append((f"{path}.{fld}", None, NOT_SIDECAR))
    return causes
