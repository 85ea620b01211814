"""``kubectl debug POD --image=IMAGE [-i] [-t] [--target=C] [-c NAME] [-q] [--profile=P] [-- CMD ARGS...]``:
an ephemeral container added to a running pod, as kubectl 1.32 does it.

The container (``name``, ``image``, ``command`` — or ``args`` with ``--arguments-only`` —, ``env``,
``imagePullPolicy``, ``stdin``, ``tty``, ``terminationMessagePolicy: File``, ``targetContainerName``,
and what ``--profile`` adds) goes to ``/api/v1/namespaces/{ns}/pods/{name}/ephemeralcontainers`` as a
strategic merge patch (``{"spec": {"$setElementOrder/ephemeralContainers": [...], "ephemeralContainers":
[ec]}}``, kubectl's two-way merge patch). Without ``-c`` the name is ``debugger-`` and kubectl's random
5-character suffix, announced on stdout (``Defaulting debug container name to debugger-abcde.``); with
``--target`` kubectl's ``Targeting container "c". ...`` line comes first; ``--profile=legacy``, the
default, prints kubectl 1.32's deprecation line on stderr. With ``-i`` (or ``--attach``) it waits for the
container to run (a waiting message is printed as ``Warning: container NAME: MESSAGE``) and attaches to
it (``If you don't see a command prompt, try pressing enter.``), or prints its log when it already
ended. ``-q`` silences the informational lines.

``--copy-to=NEW``: a copy of the pod instead (labels, annotations and spec; no ephemeral containers; not
bound to the node unless ``--same-node``), with the debug container added — or, with ``-c`` naming an
existing container, that one changed (image, command, env) —, ``--set-image=NAME=IMAGE`` (``*`` for
all) applied to its containers, and ``--replace`` deleting the original.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
from typing import Annotated, Any

import typer

#: kubectl's ``utilrand.String`` alphabet (no vowels, no confusable characters)
SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
PROFILES = ("legacy", "general", "baseline", "netadmin", "restricted", "sysadmin")
LEGACY_WARNING = ('--profile=legacy is deprecated and will be removed in the future. It is recommended to '
                  'explicitly specify a profile, for example "--profile=general".')
TARGETING = ('Targeting container "{}". If you don\'t see processes from this container it may be because '
             "the container runtime doesn't support this feature.")
PULL_POLICIES = ("Always", "IfNotPresent", "Never", "")


def random_suffix(n: int = 5) -> str:
    """kubectl's ``nameSuffixFunc``: ``n`` characters of :data:`SUFFIX_ALPHABET`."""
    return "".join(random.choice(SUFFIX_ALPHABET) for _ in range(n))


def container_names(pod: dict[str, Any]) -> set[str]:
    """Every container name of the pod: regular, init and ephemeral."""
    spec = pod.get("spec") or {}
    return {str(c.get("name")) for key in ("containers", "initContainers", "ephemeralContainers")
            for c in spec.get(key) or []}


def debug_container_name(pod: dict[str, Any], wanted: str | None, quiet: bool) -> str:
    """``-c NAME``, else ``debugger-xxxxx`` not used in the pod, announced on stdout unless ``quiet``
    (kubectl's ``computeDebugContainerName``)."""
    if wanted:
        return wanted
    taken, name = container_names(pod), ""
    while not name or name in taken:
        name = f"debugger-{random_suffix()}"
    if not quiet:
        print(f"Defaulting debug container name to {name}.", flush=True)
    return name


def apply_profile(container: dict[str, Any], profile: str, ephemeral: bool) -> None:
    """kubectl's debugging profiles, as they change the debug container (``legacy`` changes nothing):
    ``general`` adds ``SYS_PTRACE`` (an ephemeral container), ``baseline`` nothing, ``restricted``
    runs as non-root without capabilities, ``netadmin`` adds ``NET_ADMIN`` and ``NET_RAW``,
    ``sysadmin`` is privileged."""
    sc: dict[str, Any] = {}
    if profile == "general" and ephemeral:
        sc = {"capabilities": {"add": ["SYS_PTRACE"]}}
    elif profile == "restricted":
        sc = {"runAsNonRoot": True, "allowPrivilegeEscalation": False,
              "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}}
    elif profile == "netadmin":
        sc = {"capabilities": {"add": ["NET_ADMIN", "NET_RAW"]}}
    elif profile == "sysadmin":
        sc = {"privileged": True}
    if sc:
        container["securityContext"] = sc


def ephemeral_patch(pod: dict[str, Any], ec: dict[str, Any]) -> dict[str, Any]:
    """kubectl's two-way strategic merge patch from ``pod`` to ``pod`` with ``ec`` appended."""
    existing = (pod.get("spec") or {}).get("ephemeralContainers") or []
    spec: dict[str, Any] = {}
    if existing:
        spec["$setElementOrder/ephemeralContainers"] = [{"name": c.get("name")} for c in existing] + \
            [{"name": ec["name"]}]
    spec["ephemeralContainers"] = [ec]
    return {"spec": spec}


def _state(pod: dict[str, Any], name: str) -> dict[str, Any] | None:
    status = pod.get("status") or {}
    for key in ("initContainerStatuses", "containerStatuses", "ephemeralContainerStatuses"):
        for st in status.get(key) or []:
            if st.get("name") == name:
                return st.get("state") or {}
    return None


def debug(
    ctx: typer.Context,
    pod: Annotated[str, typer.Argument(metavar="(POD | TYPE/NAME)", help="the pod to debug")],
    command: Annotated[list[str] | None, typer.Argument(metavar="-- COMMAND [ARGS...]",
                                                        help="the debug container's command")] = None,
    image: Annotated[str, typer.Option("--image", help="the debug container's image")] = "",
    container: Annotated[str | None, typer.Option("-c", "--container", help="the debug container's name")] = None,
    target: Annotated[str, typer.Option("--target", help="share the processes of this container")] = "",
    stdin: Annotated[bool, typer.Option("-i", "--stdin", help="keep stdin open on the container")] = False,
    tty: Annotated[bool, typer.Option("-t", "--tty", help="allocate a TTY for the debugging container")] = False,
    attach_flag: Annotated[bool | None, typer.Option("--attach/--no-attach",
                                                     help="wait for the container and attach")] = None,
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="suppress informational messages")] = False,
    profile: Annotated[str, typer.Option("--profile", help="legacy, general, baseline, netadmin, "
                                                           "restricted or sysadmin")] = "legacy",
    env: Annotated[list[str] | None, typer.Option("--env", help="KEY=VALUE for the debug container")] = None,
    image_pull_policy: Annotated[str, typer.Option("--image-pull-policy", help="the image pull policy")] = "",
    arguments_only: Annotated[bool, typer.Option("--arguments-only",
                                                 help="the arguments are args, not the command")] = False,
    copy_to: Annotated[str, typer.Option("--copy-to", help="debug a copy of the pod with this name")] = "",
    replace: Annotated[bool, typer.Option("--replace", help="delete the original pod (with --copy-to)")] = False,
    same_node: Annotated[bool, typer.Option("--same-node", help="the copy on the same node")] = False,
    share_processes: Annotated[bool | None, typer.Option("--share-processes/--no-share-processes",
                                                         help="process namespace sharing in the copy")] = None,
    keep_labels: Annotated[bool, typer.Option("--keep-labels", help="keep the copy's labels")] = False,
    keep_annotations: Annotated[bool, typer.Option("--keep-annotations", help="keep its annotations")] = False,
    keep_liveness: Annotated[bool, typer.Option("--keep-liveness", help="keep liveness probes")] = False,
    keep_readiness: Annotated[bool, typer.Option("--keep-readiness", help="keep readiness probes")] = False,
    keep_startup: Annotated[bool, typer.Option("--keep-startup", help="keep startup probes")] = False,
    set_image: Annotated[list[str] | None, typer.Option("--set-image",
                                                        help="NAME=IMAGE for the copy's containers")] = None,
) -> None:
    """Create debugging sessions for troubleshooting workloads."""
    from minik8s.kubectl.errors import KubectlError

    args = list(command or [])
    images = _pairs(set_image or [], "--set-image")
    attach = stdin if attach_flag is None else attach_flag
    if attach and attach_flag is not None and not image and not container:
        raise KubectlError("you must specify --container or create a new container using --image in order to attach.")
    if copy_to:
        if not image and not images and not args:
            raise KubectlError("you must specify --image, --set-image or command arguments.")
        if args and not container and not image:
            raise KubectlError("you must specify an existing container or a new image when specifying args.")
    elif replace:
        raise KubectlError("--replace may only be used with --copy-to.")
    elif same_node:
        raise KubectlError("--same-node may only be used with --copy-to.")
    elif images:
        raise KubectlError("--set-image may only be used with --copy-to.")
    elif not image:
        raise KubectlError("you must specify --image when not using --copy-to.")
    if image_pull_policy not in PULL_POLICIES:
        raise KubectlError(f"invalid image pull policy: {image_pull_policy}")
    if target:
        if copy_to:
            raise KubectlError("--target is incompatible with --copy-to. Use --share-processes instead.")
        if not quiet:
            print(TARGETING.format(target), flush=True)
    if tty and not stdin:
        raise KubectlError("-i/--stdin is required for containers with -t/--tty=true")
    if profile not in PROFILES:
        raise KubectlError(f"unknown profile: {profile}")
    if profile == "legacy":
        print(LEGACY_WARNING, file=sys.stderr, flush=True)

    ec: dict[str, Any] = {"name": "", "image": image}
    if args:
        ec["args" if arguments_only else "command"] = args
    if env:
        ec["env"] = [{"name": k, "value": v} for k, v in _pairs(env, "--env").items()]
    if image_pull_policy:
        ec["imagePullPolicy"] = image_pull_policy
    if stdin:
        ec["stdin"] = True
    ec["terminationMessagePolicy"] = "File"
    if tty:
        ec["tty"] = True
    opts = ctx.obj
    if copy_to:
        keep = {"labels": keep_labels, "annotations": keep_annotations, "livenessProbe": keep_liveness,
                "readinessProbe": keep_readiness, "startupProbe": keep_startup}
        namespace, name, debug_name = asyncio.run(_copy(opts, pod, copy_to, ec, container, images, replace,
                                                        same_node, share_processes, profile, keep, quiet))
    else:
        if target:
            ec["targetContainerName"] = target
        namespace, name, debug_name = asyncio.run(_add_ephemeral(opts, pod, ec, container, profile, quiet))
    if attach and debug_name:
        _attach(opts, namespace, name, debug_name, stdin, tty, quiet)


def _pairs(items: list[str], flag: str) -> dict[str, str]:
    from minik8s.kubectl.errors import KubectlError

    out: dict[str, str] = {}
    for item in items:
        for part in item.split(","):
            key, sep, value = part.partition("=")
            if not sep or not key:
                raise KubectlError(f'invalid argument "{item}" for "{flag}" flag: '
                                   f"{part} must be formatted as key=value")
            out[key] = value
    return out


async def _get_pod(s: Any, arg: str) -> dict[str, Any]:
    from minik8s.kubectl.errors import KubectlError

    kind, sep, name = arg.partition("/")
    if sep and kind not in ("pod", "pods", "po"):
        raise KubectlError(f'"{kind}" not supported by debug')
    return await s.client.get(_pods_type(), name if sep else arg, s.namespace)  # type: ignore[no-any-return]


async def _add_ephemeral(opts: Any, arg: str, ec: dict[str, Any], wanted: str | None, profile: str,
                         quiet: bool) -> tuple[str, str, str]:
    from minik8s.api import errors
    from minik8s.kubectl.errors import KubectlError
    from minik8s.kubectl.session import Session

    async with Session(opts) as s:
        pod = await _get_pod(s, arg)
        ec["name"] = debug_container_name(pod, wanted, quiet)
        apply_profile(ec, profile, ephemeral=True)
        meta = pod["metadata"]
        rt = _pods_type()
        try:
            await s.client.patch(rt, meta["name"], ephemeral_patch(pod, ec), meta["namespace"],
                                 patch_type="strategic", subresource="ephemeralcontainers")
        except errors.NotFound as exc:
            if not exc.details.get("name"):
                raise KubectlError("ephemeral containers are disabled for this cluster "
                                   f'(error from server: "{exc.message}")') from None
            raise
        return str(meta["namespace"]), str(meta["name"]), ec["name"]


def copy_profile(pod: dict[str, Any], container: str, profile: str, keep: dict[str, bool]) -> None:
    """A profile's changes to a pod copy (kubectl's ``profiles.go``): every profile but ``legacy``
    removes labels, annotations and probes (unless ``keep`` says otherwise, ``--keep-*``) and turns
    ``shareProcessNamespace`` on where it is unset; ``general`` adds ``SYS_PTRACE`` to the debug
    container, ``netadmin``, ``restricted`` and ``sysadmin`` as for an ephemeral container."""
    if profile == "legacy":
        return
    meta, spec = pod["metadata"], pod["spec"]
    for key in ("labels", "annotations"):
        if not keep.get(key):
            meta.pop(key, None)
    for c in spec.get("containers") or []:
        for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
            if not keep.get(probe):
                c.pop(probe, None)
    spec.setdefault("shareProcessNamespace", True)
    for c in spec.get("containers") or []:
        if c.get("name") == container:
            apply_profile(c, profile, ephemeral=profile == "general")


async def _copy(opts: Any, arg: str, copy_to: str, ec: dict[str, Any], wanted: str | None,
                images: dict[str, str], replace: bool, same_node: bool, share: bool | None, profile: str,
                keep: dict[str, bool], quiet: bool) -> tuple[str, str, str]:
    """kubectl's ``debugByCopy``: create the copy (then delete the original with ``replace``)."""
    from minik8s.kubectl.errors import KubectlError
    from minik8s.kubectl.session import Session

    async with Session(opts) as s:
        pod = await _get_pod(s, arg)
        meta = pod["metadata"]
        spec = json.loads(json.dumps(pod.get("spec") or {}))
        spec.pop("ephemeralContainers", None)
        if share is not None:
            spec["shareProcessNamespace"] = share
        if not same_node:
            spec.pop("nodeName", None)
        for c in spec.get("containers") or []:
            override = images.get(c.get("name"), images.get("*"))
            if override:
                c["image"] = override
        copy_meta = {"name": copy_to, "namespace": meta["namespace"]}
        for key in ("labels", "annotations"):
            if meta.get(key):
                copy_meta[key] = meta[key]
        name = wanted or ""
        c = next((x for x in (spec.get("containers") or []) + (spec.get("initContainers") or [])
                  if x.get("name") == name), None) if name else None
        if c is None:
            if not ec.get("image"):
                if images:
                    name = ""
                else:
                    raise KubectlError("you must specify image when creating new container")
            else:
                if not name:
                    copy_for_names = {"spec": spec}
                    name = debug_container_name(copy_for_names, None, quiet)
                c = {"name": name, "terminationMessagePolicy": "File"}
                spec.setdefault("containers", []).append(c)
        if c is not None:
            for key in ("command", "args"):
                if key in ec:
                    c[key] = ec[key]
                    if key == "command":
                        c.pop("args", None)
            for key in ("env", "image", "imagePullPolicy"):
                if ec.get(key):
                    c[key] = ec[key]
            c["stdin"], c["tty"] = bool(ec.get("stdin")), bool(ec.get("tty"))
            if not c["stdin"]:
                c.pop("stdin")
            if not c["tty"]:
                c.pop("tty")
        copied = {"apiVersion": "v1", "kind": "Pod", "metadata": copy_meta, "spec": spec}
        copy_profile(copied, name, profile, keep)
        rt = _pods_type()
        created = await s.client.create(rt, copied, meta["namespace"])
        if replace:
            await s.client.delete(rt, meta["name"], meta["namespace"], grace_period_seconds=0)
        return str(meta["namespace"]), str(created["metadata"]["name"]), name


async def _wait_running(opts: Any, namespace: str, name: str, container: str, quiet: bool) -> dict[str, Any]:
    """kubectl's ``waitForContainer``: the pod once ``container`` runs or ended; a waiting message is
    printed as a warning each time it changes."""
    from minik8s.api import errors
    from minik8s.kubectl.session import Session

    shown = ""
    async with Session(opts, discover=False) as s:
        rt = _pods_type()
        while True:
            try:
                pod = await s.client.get(rt, name, namespace)
            except errors.NotFound:
                raise errors.NotFound('pods "" not found', {"kind": "pods"}) from None
            state = _state(pod, container)
            if state is not None:
                if "running" in state or "terminated" in state:
                    return pod  # type: ignore[no-any-return]
                message = (state.get("waiting") or {}).get("message") or ""
                if message and message != shown and not quiet:
                    print(f"Warning: container {container}: {message}", file=sys.stderr, flush=True)
                    shown = message
            await asyncio.sleep(0.5)


def _pods_type() -> Any:
    from minik8s.api.registry import default_registry

    return default_registry().by_kind("v1", "Pod")


def _attach(opts: Any, namespace: str, name: str, container: str, stdin: bool, tty: bool, quiet: bool) -> None:
    """kubectl's ``handleAttachPod``: attach once the container runs; its log when it already ended."""
    from minik8s.kubectl.attach import attach_url
    from minik8s.kubectl.channels import raw_terminal, run_stream

    pod = asyncio.run(_wait_running(opts, namespace, name, container, quiet))
    if "terminated" in (_state(pod, container) or {}):
        asyncio.run(_print_log(opts, namespace, name, container))
        return
    config = opts.config()
    raw = tty and stdin and os.isatty(sys.stdin.fileno())
    if not quiet:
        print("If you don't see a command prompt, try pressing enter.", file=sys.stderr, flush=True)
    url = attach_url(config.server, namespace, name, container, stdin, tty)
    with raw_terminal(sys.stdin.fileno() if stdin else -1, raw):
        asyncio.run(run_stream(config, url, stdin, raw))
    if raw and not quiet and (pod.get("spec") or {}).get("restartPolicy", "Always") == "Always":
        # kubectl attach's reattachMessage (stdout; only after a raw terminal session)
        if any(c.get("name") == container for c in (pod.get("spec") or {}).get("ephemeralContainers") or []):
            print(f"Session ended, the ephemeral container will not be restarted but may be reattached using "
                  f"'kubectl attach {name} -c {container} -i -t' if it is still running")
        else:
            print(f"Session ended, resume using 'kubectl attach {name} -c {container} -i -t' command when the pod "
                  "is running")


async def _print_log(opts: Any, namespace: str, name: str, container: str) -> None:
    from minik8s.kubectl.session import Session

    async with Session(opts, discover=False) as s:
        text = await s.client.request("GET", f"/api/v1/namespaces/{namespace}/pods/{name}/log",
                                      params={"container": container})
    sys.stdout.write(text if isinstance(text, str) else str(text))
    sys.stdout.flush()
