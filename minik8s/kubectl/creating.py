"""What kubectl's generator verbs share (``create <kind>``, ``run``, ``expose``, ``autoscale``): the
``--dry-run`` and ``-o`` flags, the new object's skeleton, and sending or printing the object.

kubectl builds these objects from Go structs, so what it prints for ``--dry-run=client`` carries the
zero values a struct marshals (``creationTimestamp: null``, ``resources: {}``, ``status: {}``) and
its ``-o json`` lists the fields in the Go types' order, not sorted; the builders here lay their
dicts out in that order and :func:`print_object` keeps it for JSON (YAML is sorted, as kubectl's).
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.registry import default_registry
from minik8s.api.resourcetypes import ResourceType
from minik8s.kubectl import printing
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.resolve import object_ref
from minik8s.kubectl.session import GlobalOptions, Session
from minik8s.kubectl.structured import TEMPLATE_FORMATS, prints_object, write_object

DRY_RUN_MODES = ("none", "client", "server")
#: The output formats the generator verbs print (kubectl's printers).
OUTPUT_FORMATS = ("", "yaml", "json", "name")

DryRunOpt = Annotated[str, typer.Option("--dry-run", help="none, client (send nothing) or server (validate only)")]
OutputOpt = Annotated[str, typer.Option("-o", "--output", help="yaml, json or name")]
SaveConfigOpt = Annotated[bool, typer.Option("--save-config",
                                             help="record the configuration for later kubectl apply")]


def check_flags(dry_run: str, output: str) -> None:
    """Refuse a ``--dry-run`` or ``-o`` value kubectl refuses, in its words (KubectlError)."""
    if dry_run not in DRY_RUN_MODES:
        raise KubectlError(f'Invalid dry-run value ({dry_run}). Must be "none", "server", or "client".')
    kind, eq, template = output.partition("=")
    if kind in TEMPLATE_FORMATS and eq:
        return
    if kind in TEMPLATE_FORMATS:
        raise KubectlError("template format specified but no template given")
    if output not in OUTPUT_FORMATS:
        raise KubectlError(f'unable to match a printer suitable for the output format "{output}", '
                           "allowed formats are: go-template,go-template-file,json,jsonpath,jsonpath-as-json,"
                           "jsonpath-file,name,template,templatefile,yaml")


def new_object(api_version: str, kind: str, name: str, labels: dict[str, str] | None = None,
               annotations: dict[str, str] | None = None) -> Obj:
    """``{kind, apiVersion, metadata: {name, creationTimestamp: null, labels, annotations}}`` in Go order."""
    meta: Obj = {"name": name, "creationTimestamp": None}
    if labels:
        meta["labels"] = dict(labels)
    if annotations:
        meta["annotations"] = dict(annotations)
    return {"kind": kind, "apiVersion": api_version, "metadata": meta}


def with_namespace(obj: Obj, namespace: str) -> None:
    """Set ``metadata.namespace`` where Go's ObjectMeta has it (after name), keeping the field order."""
    meta = obj["metadata"]
    ordered = {"name": meta.pop("name"), "namespace": namespace}
    meta.pop("namespace", None)
    ordered.update(meta)
    meta.clear()
    meta.update(ordered)


def parse_labels(spec: str) -> dict[str, str]:
    """``a=b,c=d`` as kubectl's ``--labels`` of run/expose parse it (KubectlError in its words)."""
    labels: dict[str, str] = {}
    for item in spec.split(","):
        parts = item.split("=")
        if len(parts) != 2:
            raise KubectlError(f"unexpected label spec: {item}")
        if not parts[0]:
            raise KubectlError("unexpected empty label key")
        labels[parts[0]] = parts[1]
    return labels


def print_object(obj: Obj, output: str) -> None:
    """``-o yaml`` (keys sorted) or ``-o json`` (the object's own, Go, field order) of ``obj``."""
    if output == "yaml":
        print(printing.to_yaml(obj), end="")
    else:
        print(printing.to_json(obj, sort_keys=False))


def print_result(ref: str, obj: Obj, output: str, dry_run: str, verb: str = "created") -> None:
    """What a generator verb prints: the object (``-o yaml|json``), ``kind/name`` (``-o name``) or
    ``kind/name <verb>`` with `` (dry run)`` / `` (server dry run)``."""
    if output in ("yaml", "json"):
        print_object(obj, output)
    elif prints_object(output):
        write_object(output, obj)
    elif output == "name":
        print(ref)
    else:
        suffix = {"client": " (dry run)", "server": " (server dry run)"}.get(dry_run, "")
        print(f"{ref} {verb}{suffix}")


def client_type(obj: Obj) -> ResourceType:
    """The resource type of a generated object, from the built-in registry (no server needed)."""
    rt = default_registry().by_kind(obj["apiVersion"], obj["kind"])
    if rt is None:  # pragma: no cover - the generators only build built-in kinds
        raise KubectlError(f'no resource type for {obj["apiVersion"]} {obj["kind"]}')
    return rt


async def create_in(s: Session, obj: Obj, dry_run: str) -> tuple[ResourceType, Obj]:
    """Create ``obj`` through an open session (``dry_run == "server"``: validated, not stored)."""
    rt = s.registry.by_kind(obj["apiVersion"], obj["kind"])
    if rt is None:
        raise KubectlError(f'the server doesn\'t have a resource type "{obj["kind"].lower()}s"')
    body = strip_zero(obj)
    namespace = None
    if rt.namespaced:
        namespace = s.namespace
        body["metadata"]["namespace"] = namespace
    return rt, await s.client.create(rt, body, namespace, dry_run=dry_run == "server")


def strip_zero(obj: Any) -> Any:
    """A copy of ``obj`` without the zero values only Go's struct marshalling adds (``creationTimestamp:
    null``, ``status: {}``): what is sent is what kubectl sends."""
    if isinstance(obj, dict):
        return {k: strip_zero(v) for k, v in obj.items() if not (k == "creationTimestamp" and v is None)}
    if isinstance(obj, list):
        return [strip_zero(v) for v in obj]
    return obj


async def send(opts: GlobalOptions, obj: Obj, dry_run: str, output: str, verb: str = "created",
               failure: str = "") -> None:
    """Create ``obj`` (or, per ``dry_run``, only print it or have the server validate it) and print
    the result as kubectl's generator verbs do.

    ``--dry-run=client`` sends nothing and works without a server; the object gets a namespace only
    when ``-n`` was given (kubectl's ``EnforceNamespace``).  ``failure``: kubectl's prefix for a
    server error of this verb (``create deployment``: ``"failed to create deployment: "``; ``create
    secret`` has no colon), else the server error propagates as ``Error from server (...)``.
    """
    check_flags(dry_run, output)
    if dry_run == "client":
        rt = client_type(obj)
        if rt.namespaced and opts.namespace:
            with_namespace(obj, opts.namespace)
        result = obj
    else:
        async with Session(opts) as s:
            try:
                rt, result = await create_in(s, obj, dry_run)
            except errors.APIError as exc:
                if not failure:
                    raise
                raise KubectlError(f"{failure}{exc.message}") from None
        result.get("metadata", {}).pop("managedFields", None)  # kubectl's --show-managed-fields=false
    print_result(object_ref(rt, result["metadata"]["name"]), result, output, dry_run, verb)


def warn(text: str) -> None:
    """kubectl's ``Warning: <text>`` on stderr (client-side warnings)."""
    print(f"Warning: {text}", file=sys.stderr)
