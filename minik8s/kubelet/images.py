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

A pull uses the pod's ``imagePullSecrets`` (Kubernetes' ``kubernetes.io/dockerconfigjson`` and
``kubernetes.io/dockercfg`` Secrets, read from the kubelet's Secret informer): the credentials of the
entries whose registry is the image's (:func:`registry_credentials`) go to Docker as the pull's auth
config (the ``X-Registry-Auth`` header), tried in turn until one pull succeeds, as the kubelet tries
each matching credential; without a match the pull is anonymous.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import time
from collections.abc import Callable

from minik8s.api.base import Obj
from minik8s.kubelet.backoff import Backoff
from minik8s.kubelet.configsources import SECRET, Lookup
from minik8s.kubelet.runtime import DockerRuntime, RuntimeErrorBase, split_image

log = logging.getLogger("kubelet.images")

EventFn = Callable[[Obj, str, str, str, str | None], None]


#: the names Docker Hub goes by in docker config files
DOCKER_HUB = ("docker.io", "index.docker.io", "registry-1.docker.io")


def image_registry(image: str) -> str:
    """The registry host of ``image`` (``docker.io`` for a name without one, as Docker reads it)."""
    repo, _ = split_image(image)
    first, sep, _ = repo.partition("/")
    if sep and ("." in first or ":" in first or first == "localhost"):
        return first
    return "docker.io"


def _registry_host(key: str) -> str:
    """A docker config key (``https://index.docker.io/v1/``, ``registry:5000``) → its host[:port]."""
    host = key.split("://", 1)[-1].split("/", 1)[0]
    return "docker.io" if host in DOCKER_HUB else host


def registry_credentials(secret: Obj, registry: str) -> list[dict[str, str]]:
    """The Docker auth configs (``username``, ``password``, ``serveraddress``...) a pull secret holds
    for ``registry``: from ``.dockerconfigjson`` (``{"auths": {...}}``) or the older ``.dockercfg``;
    an entry's ``auth`` (base64 ``user:password``) fills in a missing username and password.
    Undecodable data gives none."""
    data = secret.get("data") or {}
    entries: dict[str, Obj] = {}
    for key, nested in ((".dockerconfigjson", True), (".dockercfg", False)):
        if key not in data:
            continue
        try:
            parsed = json.loads(base64.b64decode(data[key]))
        except (binascii.Error, ValueError):
            continue
        if isinstance(parsed, dict):
            found = parsed.get("auths") if nested else parsed
            entries.update(found if isinstance(found, dict) else {})
    out = []
    for key, entry in entries.items():
        if not isinstance(entry, dict) or _registry_host(key) != registry:
            continue
        auth: dict[str, str] = {k: str(entry[k]) for k in ("username", "password", "email", "identitytoken",
                                                            "registrytoken") if entry.get(k)}
        if entry.get("auth") and not auth.get("username"):
            try:
                user, _, password = base64.b64decode(entry["auth"]).decode().partition(":")
            except (binascii.Error, ValueError):
                continue
            auth.update(username=user, password=password)
        auth["serveraddress"] = key
        out.append(auth)
    return out


class ImagePullError(Exception):
    """The image is not available: ``reason`` is the container's waiting reason."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


class ImageManager:
    """Makes sure a container's image is on the machine before it is created."""

    def __init__(self, runtime: DockerRuntime, backoff: Backoff, event: EventFn,
                 lookup: Lookup | None = None) -> None:
        self.runtime = runtime
        self.backoff = backoff
        self.event = event
        self.lookup = lookup
        self._failed_at: dict[str, float] = {}

    def pull_credentials(self, pod: Obj, image: str) -> list[dict[str, str]]:
        """The auth configs of the pod's ``imagePullSecrets`` for ``image``'s registry, in order
        (a Secret that is missing is skipped, as the kubelet does)."""
        if self.lookup is None:
            return []
        namespace = (pod.get("metadata") or {}).get("namespace") or "default"
        registry = image_registry(image)
        out: list[dict[str, str]] = []
        for ref in (pod.get("spec") or {}).get("imagePullSecrets") or []:
            secret = self.lookup(SECRET, namespace, ref.get("name") or "") if ref.get("name") else None
            if secret is not None:
                out += registry_credentials(secret, registry)
        return out

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
            await self._pull(pod, image)
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

    async def _pull(self, pod: Obj, image: str) -> None:
        """Pull with each matching credential in turn (anonymously without one); raises the last
        failure (RuntimeErrorBase)."""
        credentials: list[dict[str, str] | None] = list(self.pull_credentials(pod, image)) or [None]
        for i, auth in enumerate(credentials):
            try:
                await self.runtime.pull(image, auth_config=auth)
                return
            except RuntimeErrorBase:
                if i == len(credentials) - 1:
                    raise

    def forget_pod(self, uid: str) -> None:
        """Drop the pull back-offs of pod ``uid``."""
        self.backoff.forget_prefix(f"{uid}/")
        for key in [k for k in self._failed_at if k.startswith(f"{uid}/")]:
            del self._failed_at[key]
