"""apps/v1 ControllerRevision: validation (``pkg/apis/apps/validation`` ``ValidateControllerRevision`` and
``ValidateControllerRevisionUpdate``).

- ``data`` is mandatory and, once created, immutable; it is a RawExtension, kept as it came;
- ``revision`` is non-negative; it may change (the DaemonSet and StatefulSet controllers raise an old
  revision's number when a rollback returns to its template).
"""

from __future__ import annotations

from minik8s.apiserver.strategies.base import Cause, Obj, Strategy


class ControllerRevisionStrategy(Strategy):
    """ControllerRevision: as in the module docstring."""

    def generation_changed(self, new: Obj, old: Obj) -> bool:
        return False

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = self.validate_metadata(obj)
        if obj.get("data") is None:
            causes.append(("data", None, "Required value: data is mandatory"))
        revision = obj.get("revision")
        if isinstance(revision, int) and revision < 0:
            causes.append(("revision", revision, "must be greater than or equal to 0"))
        if old is not None and obj.get("data") != old.get("data"):
            causes.append(("data", obj.get("data"), "field is immutable"))
        return causes
