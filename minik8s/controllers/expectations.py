"""Controller expectations: creates and deletes a controller has asked for but not yet seen.

Kubernetes' ``ControllerExpectations`` / ``UIDTrackingControllerExpectations``
(``pkg/controller/controller_utils.go``).  Before a ReplicaSet sync creates N pods it
records "expect N creations"; each pod ADDED event the informer delivers lowers the count.
While a controller key has unmet expectations its sync does not create or delete again
(the cache is known to be behind its own writes), so a slow watch never makes it create
extra pods or delete too many.  Expectations older than :data:`EXPECTATIONS_TIMEOUT`
seconds count as met, so a lost event cannot wedge a controller for ever.

Deletions are tracked by pod key, not only counted: a pod is first seen terminating
(deletionTimestamp set) and later deleted, and only the first sighting may lower the count.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

#: Seconds after which unmet expectations are considered expired (Kubernetes: 5 minutes).
EXPECTATIONS_TIMEOUT = 300.0


@dataclass
class Expectation:
    """Outstanding creations ``add`` and deletions ``delete`` of one controller, set at ``timestamp``."""

    add: int = 0
    delete: int = 0
    timestamp: float = 0.0
    deleting: set[str] = field(default_factory=set)

    def fulfilled(self) -> bool:
        return self.add <= 0 and self.delete <= 0


class Expectations:
    """Per-controller-key expectations; ``clock`` (seconds, monotonic) is injectable for tests.

    Not thread-safe; meant for one asyncio event loop (no awaits inside any method).
    """

    def __init__(self, timeout: float = EXPECTATIONS_TIMEOUT, clock: Callable[[], float] = time.monotonic) -> None:
        self.timeout = timeout
        self.clock = clock
        self._records: dict[str, Expectation] = {}

    def get(self, key: str) -> Expectation | None:
        return self._records.get(key)

    def satisfied(self, key: str) -> bool:
        """True when ``key`` may act: no record, every expected event seen, or the record expired."""
        record = self._records.get(key)
        if record is None:
            return True
        if record.fulfilled():
            return True
        return self.clock() - record.timestamp > self.timeout

    def expect_creations(self, key: str, count: int) -> None:
        """Record that ``count`` creations are about to be sent (replaces any previous record)."""
        self._records[key] = Expectation(add=count, timestamp=self.clock())

    def expect_deletions(self, key: str, pod_keys: Iterable[str]) -> None:
        """Record that the pods ``pod_keys`` (``namespace/name``) are about to be deleted."""
        keys = set(pod_keys)
        self._records[key] = Expectation(delete=len(keys), timestamp=self.clock(), deleting=keys)

    def expect(self, key: str, creations: int, pod_keys: Iterable[str]) -> None:
        """Record ``creations`` creations and the deletions of ``pod_keys`` at once (Kubernetes'
        ``SetExpectations``: a DaemonSet sync may create on some nodes and delete on others)."""
        keys = set(pod_keys)
        self._records[key] = Expectation(add=creations, delete=len(keys), timestamp=self.clock(), deleting=keys)

    def creation_observed(self, key: str) -> None:
        """One pod created by ``key`` was seen (or one create failed and will never be seen)."""
        record = self._records.get(key)
        if record is not None and record.add > 0:
            record.add -= 1

    def deletion_observed(self, key: str, pod_key: str) -> None:
        """Pod ``pod_key`` of ``key`` was seen terminating or gone (counted once per pod)."""
        record = self._records.get(key)
        if record is not None and pod_key in record.deleting:
            record.deleting.discard(pod_key)
            record.delete -= 1

    def forget(self, key: str) -> None:
        """Drop ``key``'s record (its controller object was deleted)."""
        self._records.pop(key, None)
