"""flowcontrol.apiserver.k8s.io/v1 FlowSchema and PriorityLevelConfiguration: defaults
(``SetDefaults_*``) and the main rules of ``pkg/apis/flowcontrol/validation`` with its messages.

- FlowSchema: ``matchingPrecedence`` defaults to 1000 and is 1..10000; the priority level's name is
  required; ``distinguisherMethod.type`` is ``ByUser`` or ``ByNamespace``; each rule has subjects
  (``User``/``Group``/``ServiceAccount`` with their member) and resource or non-resource rules;
- PriorityLevelConfiguration: ``type`` ``Exempt`` (the ``exempt`` level, and only it) or
  ``Limited`` with ``limited`` (``nominalConcurrencyShares`` defaults to 30, ``lendablePercent``
  0..100, ``limitResponse`` ``Reject`` or ``Queue`` with ``queuing`` defaulted to 64 queues, hand
  size 8, queue length 50; the hand size at most the queues); ``catch-all`` stays ``Limited``.
"""

from __future__ import annotations

from typing import Any

from minik8s.api import flowcontrol as fc
from minik8s.apiserver.strategies.base import Cause, Obj, Strategy, unsupported


def _invalid(path: str, value: Any, message: str) -> Cause:
    return (path, value, message)


class FlowSchemaStrategy(Strategy):
    """FlowSchema: as in the module docstring."""

    namespace_scoped = False
    has_status = True

    def default(self, obj: Obj) -> None:
        spec = obj.setdefault("spec", {})
        if isinstance(spec, dict):
            spec.setdefault("matchingPrecedence", 1000)

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        spec = obj.get("spec") or {}
        name = (obj.get("metadata") or {}).get("name")
        precedence = spec.get("matchingPrecedence")
        if isinstance(precedence, int):
            if precedence <= 0:
                causes.append(_invalid("spec.matchingPrecedence", precedence, "must be a positive value"))
            elif precedence > fc.MAX_MATCHING_PRECEDENCE:
                causes.append(_invalid("spec.matchingPrecedence", precedence,
                                       f"must not be greater than {fc.MAX_MATCHING_PRECEDENCE}"))
            elif name == "exempt" and precedence != 1:
                causes.append(_invalid("spec.matchingPrecedence", precedence,
                                       "only the schema named 'exempt' may have matching precedence 1"))
        if not (spec.get("priorityLevelConfiguration") or {}).get("name"):
            causes.append(("spec.priorityLevelConfiguration.name", None,
                           "Required value: must reference a priority level"))
        method = (spec.get("distinguisherMethod") or {}).get("type")
        if spec.get("distinguisherMethod") is not None and method not in fc.DISTINGUISHER_METHODS:
            causes.append(("spec.distinguisherMethod.type", None, unsupported(method, fc.DISTINGUISHER_METHODS)))
        for i, rule in enumerate(spec.get("rules") or []):
            causes += _rule_errors(rule or {}, f"spec.rules[{i}]")
        return causes


def _rule_errors(rule: Obj, path: str) -> list[Cause]:
    causes: list[Cause] = []
    subjects = rule.get("subjects") or []
    if not subjects:
        causes.append((f"{path}.subjects", None, "Required value: subjects must contain at least one value"))
    for i, subject in enumerate(subjects):
        spath, kind = f"{path}.subjects[{i}]", (subject or {}).get("kind")
        member = {"User": "user", "Group": "group", "ServiceAccount": "serviceAccount"}.get(kind or "")
        if member is None:
            causes.append((f"{spath}.kind", None, unsupported(kind, fc.SUBJECT_KINDS)))
            continue
        body = subject.get(member) or {}
        if not subject.get(member):
            causes.append((f"{spath}.{member}", None, f"Required value: {member} is required when subject kind "
                                                      f"is '{kind}'"))
        elif not body.get("name"):
            causes.append((f"{spath}.{member}.name", None, f"Required value: {member} name must not be empty"))
        elif kind == "ServiceAccount" and not body.get("namespace"):
            causes.append((f"{spath}.serviceAccount.namespace", None,
                           "Required value: must specify namespace for service account"))
    resource_rules = rule.get("resourceRules") or []
    non_resource_rules = rule.get("nonResourceRules") or []
    if not resource_rules and not non_resource_rules:
        causes.append((path, None, "Required value: at least one of resourceRules and nonResourceRules has to be "
                                   "non-empty"))
    for i, r in enumerate(resource_rules):
        rpath = f"{path}.resourceRules[{i}]"
        for field, message in (("verbs", "verbs must contain at least one value"),
                               ("apiGroups", "resource rules must supply at least one api group"),
                               ("resources", "resource rules must supply at least one resource")):
            if not r.get(field):
                causes.append((f"{rpath}.{field}", None, f"Required value: {message}"))
        if not r.get("namespaces") and not r.get("clusterScope"):
            causes.append((f"{rpath}.namespaces", None,
                           "Required value: resource rules that are not cluster scoped must supply at least "
                           "one namespace"))
    for i, r in enumerate(non_resource_rules):
        npath = f"{path}.nonResourceRules[{i}]"
        if not r.get("verbs"):
            causes.append((f"{npath}.verbs", None, "Required value: verbs must contain at least one value"))
        urls = r.get("nonResourceURLs") or []
        if not urls:
            causes.append((f"{npath}.nonResourceURLs", None,
                           "Required value: nonResourceURLs must contain at least one value"))
        for j, url in enumerate(urls):
            if url != fc.ALL and not str(url).startswith("/"):
                causes.append((f"{npath}.nonResourceURLs[{j}]", url, "must start with slash"))
    return causes


class PriorityLevelConfigurationStrategy(Strategy):
    """PriorityLevelConfiguration: as in the module docstring."""

    namespace_scoped = False
    has_status = True

    def default(self, obj: Obj) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        if spec.get("type") == fc.EXEMPT and isinstance(spec.get("exempt", {}), dict):
            exempt = spec.setdefault("exempt", {})
            exempt.setdefault("nominalConcurrencyShares", 0)
            exempt.setdefault("lendablePercent", 0)
        limited = spec.get("limited")
        if isinstance(limited, dict):
            limited.setdefault("nominalConcurrencyShares", 30)
            limited.setdefault("lendablePercent", 0)
            response = limited.get("limitResponse")
            if isinstance(response, dict) and response.get("type") == "Queue":
                queuing = response.setdefault("queuing", {})
                if isinstance(queuing, dict):
                    queuing.setdefault("queues", 64)
                    queuing.setdefault("handSize", 8)
                    queuing.setdefault("queueLengthLimit", 50)

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        name = (obj.get("metadata") or {}).get("name")
        spec = obj.get("spec") or {}
        kind = spec.get("type")
        if kind not in fc.PRIORITY_LEVEL_TYPES:
            causes.append(("spec.type", None, unsupported(kind, fc.PRIORITY_LEVEL_TYPES)))
        elif (name == "exempt") != (kind == fc.EXEMPT):
            causes.append(("spec.type", kind, "type must be 'Exempt' if and only if name is 'exempt'"))
        limited = spec.get("limited")
        if kind == fc.LIMITED and limited is None:
            causes.append(("spec.limited", None, "Required value: must not be empty when type is Limited"))
        elif kind == fc.EXEMPT and limited is not None:
            causes.append(("spec.limited", None, "Forbidden: must be nil if the type is not Limited"))
        if kind == fc.LIMITED and spec.get("exempt") is not None:
            causes.append(("spec.exempt", None, "Forbidden: must be nil if the type is Limited"))
        if isinstance(limited, dict):
            causes += _limited_errors(limited, "spec.limited")
        return causes


def _limited_errors(limited: Obj, path: str) -> list[Cause]:
    causes: list[Cause] = []
    shares = limited.get("nominalConcurrencyShares")
    if isinstance(shares, int) and shares < 0:
        causes.append((f"{path}.nominalConcurrencyShares", shares, "must be a non-negative integer"))
    lendable = limited.get("lendablePercent")
    if isinstance(lendable, int) and not 0 <= lendable <= 100:
        causes.append((f"{path}.lendablePercent", lendable, "must be between 0 and 100, inclusive"))
    response = limited.get("limitResponse") or {}
    rtype = response.get("type")
    rpath = f"{path}.limitResponse"
    if rtype not in fc.LIMIT_RESPONSE_TYPES:
        causes.append((f"{rpath}.type", None, unsupported(rtype, fc.LIMIT_RESPONSE_TYPES)))
    queuing = response.get("queuing")
    if rtype == "Queue" and not queuing:
        causes.append((f"{rpath}.queuing", None, "Required value: must not be empty if type is Queue"))
    elif rtype == "Reject" and queuing:
        causes.append((f"{rpath}.queuing", None, "Forbidden: must be nil if limited.limitResponse.type is not Limited"))
    if isinstance(queuing, dict) and rtype == "Queue":
        qpath = f"{rpath}.queuing"
        queues, hand = queuing.get("queues"), queuing.get("handSize")
        for field in ("queueLengthLimit", "queues", "handSize"):
            value = queuing.get(field)
            if isinstance(value, int) and value <= 0:
                causes.append((f"{qpath}.{field}", value, "must be positive"))
        if isinstance(queues, int) and isinstance(hand, int) and 0 < queues < hand:
            causes.append((f"{qpath}.handSize", hand, f"should not be greater than queues ({queues})"))
    return causes
