"""Global options and the per-command session: kubeconfig, client and the server's discovery."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from types import TracebackType

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.resourcetypes import Registry, ResourceType
from minik8s.client.kubeconfig import ClientConfig, InvalidConfiguration, KubeconfigError, load
from minik8s.client.rest import Client
from minik8s.kubectl import resolve
from minik8s.kubectl.errors import KubectlError


@dataclass
class GlobalOptions:
    """kubectl's global flags (``--kubeconfig``, ``--context``, ``--user``, ``--cluster``, ``-n``, ``-s``,
    and the impersonation flags ``--as``, ``--as-group``, ``--as-uid``, which override the
    kubeconfig user's ``as``, ``as-groups`` and ``as-uid``)."""

    kubeconfig: str | None = None
    context: str | None = None
    namespace: str | None = None
    server: str | None = None
    request_timeout: float | None = None
    user: str | None = None
    cluster: str | None = None
    as_user: str | None = None
    as_groups: list[str] = field(default_factory=list)
    as_uid: str | None = None
    _config: ClientConfig | None = field(default=None, repr=False)

    def config(self) -> ClientConfig:
        """The client configuration: the kubeconfig, overridden by ``--server`` and the
        impersonation flags.

        Raises KubeconfigError when there is no usable kubeconfig and no ``--server``, or when it
        asks for groups or a uid without a user to impersonate.
        """
        if self._config is None:
            try:
                cfg = load(self.kubeconfig, self.context, user=self.user, cluster=self.cluster)
            except KubeconfigError:
                if not self.server or self.kubeconfig or self.context or self.user or self.cluster:
                    raise
                cfg = ClientConfig()
            if self.server:
                cfg.server = self.server.rstrip("/")
            if self.as_user:
                cfg.impersonate_user = self.as_user
            if self.as_groups:
                cfg.impersonate_groups = list(self.as_groups)
            if self.as_uid:
                cfg.impersonate_uid = self.as_uid
            try:
                cfg.impersonation_headers()
            except KubeconfigError as exc:
                if self.namespace:  # with -n, kubectl checks the whole configuration first
                    raise InvalidConfiguration(str(exc)) from None
                raise
            self._config = cfg
        return self._config

    def default_namespace(self) -> str:
        """``-n``, else the kubeconfig context's namespace, else ``default``."""
        if self.namespace:
            return self.namespace
        try:
            return self.config().namespace or "default"
        except KubeconfigError:
            return "default"

    @property
    def server_url(self) -> str:
        """The apiserver URL (for error messages); ``""`` when it cannot be known."""
        try:
            return self.config().server
        except KubeconfigError:
            return self.server or ""


def print_warning(text: str) -> None:
    """kubectl's ``Warning: <text>`` line on stderr for each warning the apiserver sends."""
    print(f"Warning: {text}", file=sys.stderr)


class Session:
    """An open client plus the server's discovery (``async with Session(opts) as s``)."""

    def __init__(self, opts: GlobalOptions, discover: bool = True) -> None:
        self.opts = opts
        self.discover = discover
        self.namespace = opts.default_namespace()
        self.registry: Registry = Registry([])  # filled from the server's discovery
        self.client = Client(opts.config(), self.registry, retries=1, backoff=0.2,
                             timeout=opts.request_timeout or 30.0, warning_handler=print_warning,
                             transport="stdlib")

    async def __aenter__(self) -> Session:
        try:
            if self.discover:
                self.registry = await resolve.discover(self.client)
                self.client.registry = self.registry
        except BaseException:
            await self.client.close()
            raise
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.client.close()

    def resource(self, name: str) -> ResourceType:
        """Resolve a resource type name through discovery (KubectlError when unknown)."""
        return resolve.resource_type(self.registry, name)

    async def get_object(self, api_version: str, kind: str, name: str) -> Obj:
        """The object ``name`` of ``kind`` in the session's namespace; KubectlError, in kubectl's
        words, when the server does not serve the kind or has no such object."""
        rt = self.registry.by_kind(api_version, kind)
        if rt is None:
            raise KubectlError(f'the server doesn\'t have a resource type "{kind.lower()}s"')
        try:
            return await self.client.get(rt, name, self.namespace)
        except errors.NotFound:
            raise KubectlError(f'{resolve.plural_ref(rt)} "{name}" not found') from None
