"""``coordination.k8s.io/v1`` Lease: node heartbeats live in namespace ``kube-node-lease``."""

from __future__ import annotations

from minik8s.api.meta import TypedObject
from minik8s.api.model import Model


class LeaseSpec(Model):
    holder_identity: str | None = None
    lease_duration_seconds: int | None = None
    acquire_time: str | None = None
    renew_time: str | None = None  # MicroTime, RFC 3339 with microseconds
    lease_transitions: int | None = None


class Lease(TypedObject):
    spec: LeaseSpec | None = None
