"""apps/v1 Deployment: a ReplicaSet's rules plus the rollout ``strategy``."""

from __future__ import annotations

from minik8s.apiserver.strategies.base import Cause, Obj, unsupported
from minik8s.apiserver.strategies.replicaset import ReplicaSetStrategy


class DeploymentStrategy(ReplicaSetStrategy):
    """apps/v1 Deployment: RollingUpdate 25%/25% by default, history limit 10, deadline 600 s."""

    def default(self, obj: Obj) -> None:
        super().default(obj)
        spec = obj["spec"]
        strategy = spec.setdefault("strategy", {})
        strategy.setdefault("type", "RollingUpdate")
        if strategy["type"] == "RollingUpdate":
            ru = strategy.setdefault("rollingUpdate", {})
            ru.setdefault("maxUnavailable", "25%")
            ru.setdefault("maxSurge", "25%")
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = super().validate(obj, old)
        strategy = (obj.get("spec") or {}).get("strategy") or {}
        if strategy.get("type") not in ("RollingUpdate", "Recreate"):
            causes.append(("spec.strategy.type", None,
                           unsupported(strategy.get("type"), ("Recreate", "RollingUpdate"))))
        if strategy.get("type") == "Recreate" and strategy.get("rollingUpdate"):
            causes.append(("spec.strategy.rollingUpdate", None,
                           "Forbidden: may not be specified when strategy `type` is 'Recreate'"))
        ru = strategy.get("rollingUpdate") or {}
        for fld in ("maxSurge", "maxUnavailable"):
            val = ru.get(fld)
            if isinstance(val, str) and not (val.endswith("%") and val[:-1].isdigit()):
                causes.append((f"spec.strategy.rollingUpdate.{fld}", val,
                               "a valid percent string must be a numeric string followed by an ending '%'"))
            elif isinstance(val, int) and val < 0:
                causes.append((f"spec.strategy.rollingUpdate.{fld}", val, "must be greater than or equal to 0"))
        if str(ru.get("maxSurge", "")).strip("%") in ("0", "") and str(ru.get("maxUnavailable", "")).strip("%") == "0" \
                and strategy.get("type") == "RollingUpdate":
            causes.append(("spec.strategy.rollingUpdate.maxUnavailable", ru.get("maxUnavailable"),
                           "may not be 0 when `maxSurge` is 0"))
        return causes
