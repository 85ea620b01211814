"""Which objects a command acts on: ``TYPE NAME...``, ``TYPE/NAME...``, ``-f FILE``, ``-l`` or ``--all``.

kubectl's resource builder, for the verbs that act on existing objects (``delete``,
``scale``, ``rollout``, ``label``, ``annotate``): names are taken as given (the server
answers NotFound later), a type alone needs ``-l``/``--field-selector``/``--all`` and is
then listed, ``-f`` names the objects in the manifests.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from minik8s.api import errors
from minik8s.api.resourcetypes import ResourceType
from minik8s.client.rest import ServerUnavailable
from minik8s.kubectl import manifests
from minik8s.kubectl.errors import KubectlError, render
from minik8s.kubectl.resolve import object_ref, parse_targets
from minik8s.kubectl.session import Session


@dataclass
class ObjectRef:
    """One object a command names: its type, namespace (None for cluster-scoped kinds), name, uid if known."""

    rt: ResourceType
    namespace: str | None
    name: str
    uid: str | None = None

    @property
    def ref(self) -> str:
        """``deployment.apps/web``, as kubectl prints it in result lines."""
        return object_ref(self.rt, self.name)


async def select(s: Session, args: list[str], files: list[str] | None = None, recursive: bool = False,
                 selector: str = "", field_selector: str = "", all_: bool = False,
                 all_namespaces: bool = False, verb: str = "delete", kustomize: str | None = None) -> list[ObjectRef]:
    """Every object the arguments name, in order (listing the type for ``-l`` / ``--all``).

    Raises KubectlError for arguments that name nothing (no args and no file, a type
    without names or selector, names combined with a selector, files combined with
    arguments) and for unknown types; an empty list means a selector matched nothing.
    """
    if files or kustomize:
        if args:
            raise KubectlError("cannot specify both a filename (-f) and resource arguments")
        planned = manifests.plan(s, manifests.load(files or [], recursive, verb, kustomize), s.opts.namespace)
        return [ObjectRef(p.rt, p.namespace, p.name) for p in planned]
    if not args:
        raise KubectlError("You must provide one or more resources by argument or filename.")
    refs: list[ObjectRef] = []
    for t in parse_targets(s.registry, args):
        ns = s.namespace if t.rt.namespaced else None
        if t.names:
            if selector or all_:
                raise KubectlError("name cannot be provided when a selector or --all is specified")
            refs += [ObjectRef(t.rt, ns, name) for name in t.names]
            continue
        if not (selector or field_selector or all_):
            raise KubectlError("resource(s) were provided, but no name was specified")
        if all_namespaces and t.rt.namespaced:
            ns = None
        listed = await s.client.list_all(t.rt, ns, label_selector=selector or None,
                                         field_selector=field_selector or None)
        for item in listed.get("items") or []:
            meta = item.get("metadata") or {}
            refs.append(ObjectRef(t.rt, meta.get("namespace") if t.rt.namespaced else None,
                                  str(meta.get("name")), meta.get("uid")))
    return refs


def split_changes(args: list[str], is_change: Callable[[str], bool], what: str) -> tuple[list[str], list[str]]:
    """(resource arguments, change arguments) of ``label``/``annotate``/``taint`` (``GetResourcesAndPairs``).

    Every resource must come before the first change; raises KubectlError
    ``all resources must be specified before <what> changes: <arg>`` otherwise.
    """
    resources: list[str] = []
    changes: list[str] = []
    for arg in args:
        if is_change(arg):
            changes.append(arg)
        elif changes:
            raise KubectlError(f"all resources must be specified before {what} changes: {arg}")
        else:
            resources.append(arg)
    return resources, changes


async def for_each(refs: list[ObjectRef], action: Callable[[ObjectRef], Awaitable[str]]) -> int:
    """Run ``action`` on every object and print ``<type>/<name> <result>`` for each success.

    ``action`` returns the result word (``scaled``, ``labeled``, ``already cordoned``).
    A single object's failure propagates (one ``error:`` line, exit 1); with several
    objects each failure is printed on stderr and the others still run.  Returns the
    exit code: 1 when anything failed.
    """
    failed = False
    for ref in refs:
        try:
            result = await action(ref)
        except ServerUnavailable:
            raise
        except (KubectlError, errors.APIError) as exc:
            if len(refs) == 1:
                raise
            print(render(exc)[0], file=sys.stderr, flush=True)
            failed = True
            continue
        print(f"{ref.ref} {result}", flush=True)
    return 1 if failed else 0
