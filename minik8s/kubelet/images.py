"""Image pulls with Kubernetes' pull policies, back-off and events.

- ``Never``: the image must be on the machine, else ``ErrImageNeverPull``.
- ``IfNotPresent``: pull only when it is missing.  ``Always``: pull every time a
  container starts.
- A failed pull gives ``ErrImagePull``; until the back-off (per pod and image) expires
  further attempts answer ``ImagePullBackOff`` without pulling.

Events (as the kubelet records them): ``Pulled`` "Container image ... already present on
machine" / "Successfully pulled image ...", ``Pulling``, ``Failed`` "Failed to pull image
...: ..." + "Error: ErrImagePull", ``BackOff`` "Back-off pulling image ..." + ``Failed``
"Error: ImagePullBackOff", ``ErrImageNeverPull``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from minik8s.api.base import Obj
from minik8s.kubelet.backoff import Backoff
from minik8s.kubelet.runtime import DockerRuntime, RuntimeErrorBase

log = logging.getLogger("kubelet.images")

EventFn = Callable[[Obj, str, str, str, str | None], None]


class ImagePullError(Exception):
    """The image is not available: ``reason`` is the container's waiting reason."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


class ImageManager:
    """Makes sure a container's image is on the machine before it is created."""

    def __init__(self, runtime: DockerRuntime, backoff: Backoff, event: EventFn) -> None:
        self.runtime = runtime
        self.backoff = backoff
        self.event = event
        self._failed_at: dict[str, float] = {}

    async def ensure(self, pod: Obj, container: Obj) -> str:
        """Return the image id for ``container``, pulling per its ``imagePullPolicy``.

        Raises ImagePullError (``ErrImageNeverPull``, ``ErrImagePull``, ``ImagePullBackOff``).
        """
        image = container.get("image") or ""
        name = container["name"]
        policy = container.get("imagePullPolicy") or "IfNotPresent"
        present = await self.runtime.image_id(image)
        if policy == "Never" or (policy == "IfNotPresent" and present):
            if present:
                self.event(pod, "Normal", "Pulled", f'Container image "{image}" already present on machine', name)
                return present
            msg = f'Container image "{image}" is not present with pull policy of Never'
            self.event(pod, "Warning", "ErrImageNeverPull", msg, name)
            raise ImagePullError("ErrImageNeverPull", msg)
        key = f"{pod['metadata']['uid']}/{image}"
        if key in self._failed_at and self.backoff.remaining(key, self._failed_at[key]) > 0:
            msg = f'Back-off pulling image "{image}"'
            self.event(pod, "Normal", "BackOff", msg, name)
            self.event(pod, "Warning", "Failed", "Error: ImagePullBackOff", name)
            raise ImagePullError("ImagePullBackOff", msg)
        self.event(pod, "Normal", "Pulling", f'Pulling image "{image}"', name)
        started = time.monotonic()
        try:
            await self.runtime.pull(image)
            pulled = await self.runtime.image_id(image)
            if not pulled:
                raise RuntimeErrorBase(f"image {image} is missing after the pull")
        except RuntimeErrorBase as exc:
            self._failed_at[key] = time.time()
            self.backoff.next(key, self._failed_at[key])
            msg = f'Failed to pull image "{image}": {exc.message}'
            log.info("kubelet pod=%s/%s container=%s %s", pod["metadata"].get("namespace"),
                     pod["metadata"].get("name"), name, msg)
            self.event(pod, "Warning", "Failed", msg[:1024], name)
            self.event(pod, "Warning", "Failed", "Error: ErrImagePull", name)
            raise ImagePullError("ErrImagePull", msg) from exc
        self.backoff.forget(key)
        self._failed_at.pop(key, None)
        self.event(pod, "Normal", "Pulled",
                   f'Successfully pulled image "{image}" in {time.monotonic() - started:.3f}s', name)
        return pulled

    def forget_pod(self, uid: str) -> None:
        """Drop the pull back-offs of pod ``uid``."""
        self.backoff.forget_prefix(f"{uid}/")
        for key in [k for k in self._failed_at if k.startswith(f"{uid}/")]:
            del self._failed_at[key]
