"""``kubectl get``: tables, ``-o wide|yaml|json|name|jsonpath=``, selectors, ``-A`` and ``-w``."""

from __future__ import annotations

import asyncio
import sys
from typing import Annotated, Any

import typer

from minik8s.api import columns as cols
from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.registry import ResourceType
from minik8s.kubectl import printing
from minik8s.kubectl.errors import KubectlError, server_error
from minik8s.kubectl.resolve import Target, object_ref, parse_targets
from minik8s.kubectl.session import GlobalOptions, Session

FORMATS = ("json", "name", "wide", "yaml", "jsonpath")


class Printer:
    """Renders objects of one type in the requested output format."""

    def __init__(self, output: str, all_namespaces: bool, show_labels: bool, label_columns: list[str],
                 prefix_names: bool) -> None:
        self.output = output
        self.wide = output == "wide"
        self.all_namespaces = all_namespaces
        self.show_labels = show_labels
        self.label_columns = label_columns
        self.prefix_names = prefix_names
        #: the columns of custom resources (from their CRDs' ``additionalPrinterColumns``)
        self.custom: dict[ResourceType, list[cols.Column]] = {}

    def columns(self, rt: ResourceType) -> list[cols.Column]:
        """The columns after NAME of ``rt`` (``-o wide`` included when asked)."""
        if rt in self.custom:
            return [c for c in self.custom[rt] if self.wide or not c.wide]
        return cols.columns_for(rt.kind, self.wide)

    async def learn(self, s: Session, rt: ResourceType) -> None:
        """Read the printer columns of ``rt`` from its CRD when it is a custom resource."""
        if rt.kind in cols.COLUMNS or "." not in rt.group or rt in self.custom:
            return
        try:
            crd = await s.client.request("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                                                f"{rt.plural}.{rt.group}")
        except errors.APIError:
            return
        for ver in (crd.get("spec") or {}).get("versions") or []:
            if ver.get("name") == rt.version:
                self.custom[rt] = cols.printer_columns(list(ver.get("additionalPrinterColumns") or []))

    def header(self, rt: ResourceType) -> list[str]:
        """The table header of ``rt``."""
        head = []
        if self.all_namespaces and rt.namespaced:
            head.append("NAMESPACE")
        if rt.kind not in cols.NO_NAME_COLUMN:
            head.append("NAME")
        head += [c.header for c in self.columns(rt)]
        head += [key.rsplit("/", 1)[-1].upper() for key in self.label_columns]
        if self.show_labels:
            head.append("LABELS")
        return head

    def row(self, rt: ResourceType, obj: Obj) -> list[str]:
        """One table row of ``obj``."""
        at = printing.now()
        meta = obj.get("metadata") or {}
        row = []
        if self.all_namespaces and rt.namespaced:
            row.append(str(meta.get("namespace") or ""))
        if rt.kind not in cols.NO_NAME_COLUMN:
            name = str(meta.get("name") or "")
            shown = cols.name_cell(rt.kind, obj)  # "local-path (default)" for the default StorageClass
            row.append(object_ref(rt, name) + shown[len(name):] if self.prefix_names else shown)
        row += [str(cell) for cell in cols.cells(self.columns(rt), obj, at)]
        labels = meta.get("labels") or {}
        row += [str(labels.get(key, "")) for key in self.label_columns]
        if self.show_labels:
            row.append(cols.join_labels(labels))
        return row

    def table(self, rt: ResourceType, objs: list[Obj]) -> list[str]:
        """The whole table (header and rows)."""
        return printing.table(self.header(rt), [self.row(rt, o) for o in objs])


def check_output(output: str) -> str:
    """Validate ``-o``; returns the format name (``jsonpath`` for ``jsonpath=...``)."""
    kind = output.split("=", 1)[0]
    if output and kind not in FORMATS or (kind == "jsonpath" and "=" not in output):
        raise KubectlError(f'unable to match a printer suitable for the output format "{output}", '
                           "allowed formats are: json,jsonpath,name,wide,yaml")
    return kind


def without_managed_fields(data: Any) -> Any:
    """``data`` (an object or a list of them) without ``metadata.managedFields``, as kubectl prints
    objects unless ``--show-managed-fields`` is given."""
    if not isinstance(data, dict):
        return data
    if isinstance(data.get("items"), list):
        data = dict(data, items=[without_managed_fields(item) for item in data["items"]])
    meta = data.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        data = dict(data, metadata={k: v for k, v in meta.items() if k != "managedFields"})
    return data


def structured(output: str, data: Any) -> str:
    """``data`` rendered as yaml, json or jsonpath output (without managedFields)."""
    kind = output.split("=", 1)[0]
    data = without_managed_fields(data)
    if kind == "yaml":
        return printing.to_yaml(data).rstrip("\n")
    if kind == "json":
        return printing.to_json(data)
    try:
        return printing.jsonpath(output.split("=", 1)[1], data)
    except ValueError as exc:
        raise KubectlError(f"error parsing jsonpath {output.split('=', 1)[1]}: {exc}") from None


async def _fetch(s: Session, target: Target, namespace: str | None, selector: str, field_selector: str,
                 failures: list[str]) -> tuple[list[Obj], str]:
    rt = target.rt
    ns = namespace if rt.namespaced else None
    if target.names:
        objs: list[Obj] = []
        for name in target.names:
            try:
                objs.append(await s.client.get(rt, name, ns))
            except errors.NotFound as exc:
                failures.append(server_error(exc))
        return objs, ""
    listed = await s.client.list_all(rt, ns, label_selector=selector or None, field_selector=field_selector or None)
    items = list(listed.get("items") or [])
    if rt.kind == "Event":
        items.sort(key=cols.event_sort_key)
    return items, str((listed.get("metadata") or {}).get("resourceVersion") or "")


async def run_get(opts: GlobalOptions, args: list[str], output: str, selector: str, field_selector: str,
                  all_namespaces: bool, watch: bool, watch_only: bool, show_labels: bool,
                  label_columns: list[str]) -> int:
    """Fetch and print; returns the exit code (1 when a named object was not found)."""
    fmt = check_output(output)
    async with Session(opts) as s:
        targets = parse_targets(s.registry, args)
        if all_namespaces and any(t.names for t in targets):
            raise KubectlError("a resource cannot be retrieved by name across all namespaces")
        if (watch or watch_only) and len(targets) > 1:
            raise KubectlError("you may only specify a single resource type")
        namespace = None if all_namespaces else s.namespace
        multi = len(targets) > 1 or any(t.lower() == "all" for t in args[0].split(","))
        printer = Printer(output, all_namespaces, show_labels, label_columns or [], multi)
        failures: list[str] = []
        results: list[tuple[ResourceType, list[Obj], str]] = []
        for target in targets:
            if fmt in ("", "wide"):
                await printer.learn(s, target.rt)
            objs, rv = await _fetch(s, target, namespace, selector, field_selector, failures)
            results.append((target.rt, objs, rv))
        if watch or watch_only:
            rt, objs, rv = results[0]
            await _watch(s, printer, fmt, rt, objs, rv, namespace, targets[0].names, selector, field_selector,
                         watch_only)
            return 0
        total = sum(len(objs) for _, objs, _ in results)
        if fmt in ("", "wide"):
            first = True
            for rt, objs, _ in results:
                if not objs:
                    continue
                if not first:
                    print()
                printing.write_lines(printer.table(rt, objs))
                first = False
        elif fmt == "name":
            printing.write_lines([object_ref(rt, o["metadata"]["name"]) for rt, objs, _ in results for o in objs])
        else:
            single = len(targets) == 1 and len(targets[0].names) == 1 and total == 1
            everything = [o for _, objs, _ in results for o in objs]
            if everything or fmt != "jsonpath":
                data = everything[0] if single else printing.as_list(everything)
                text = structured(output, data)
                sys.stdout.write(text + ("\n" if fmt != "jsonpath" else ""))
                sys.stdout.flush()
        for line in failures:
            print(line, file=sys.stderr)
        if total == 0 and not failures and fmt not in ("json", "yaml"):
            namespaced = any(t.rt.namespaced for t in targets)
            where = f" in {namespace} namespace" if namespaced and namespace else ""
            print(f"No resources found{where}.", file=sys.stderr)
        return 1 if failures else 0


async def _watch(s: Session, printer: Printer, fmt: str, rt: ResourceType, objs: list[Obj], rv: str,
                 namespace: str | None, names: list[str], selector: str, field_selector: str,
                 watch_only: bool) -> None:
    rows = printing.RowPrinter(printer.header(rt))

    def emit(batch: list[Obj]) -> None:
        if not batch:
            return
        if fmt in ("", "wide"):
            rows.print_rows([printer.row(rt, o) for o in batch])
        elif fmt == "name":
            printing.write_lines([object_ref(rt, o["metadata"]["name"]) for o in batch])
        else:
            printing.write_lines([structured(printer.output, o) for o in batch])

    if not watch_only:
        emit(objs)
    if names:
        field_selector = ",".join(filter(None, [field_selector, f"metadata.name={names[0]}"]))
    ns = namespace if rt.namespaced else None
    while True:
        try:
            async for event in s.client.watch(rt, ns, resource_version=rv or None,
                                              label_selector=selector or None,
                                              field_selector=field_selector or None):
                etype = event.get("type")
                obj = event.get("object") or {}
                if etype == "ERROR":
                    raise errors.from_status(int(obj.get("code") or 500), obj)
                rv = str((obj.get("metadata") or {}).get("resourceVersion") or rv)
                if etype == "BOOKMARK":
                    continue
                emit([obj])
        except errors.Gone:
            listed = await s.client.list_all(rt, ns, label_selector=selector or None,
                                             field_selector=field_selector or None)
            rv = str((listed.get("metadata") or {}).get("resourceVersion") or "")
        await asyncio.sleep(0)


def get(
    ctx: typer.Context,
    args: Annotated[list[str] | None, typer.Argument(metavar="TYPE[,TYPE...] [NAME...] | TYPE/NAME...",
                                                     help="what to show")] = None,
    output: Annotated[str, typer.Option("-o", "--output",
                                        help="wide, yaml, json, name or jsonpath=TEMPLATE")] = "",
    selector: Annotated[str, typer.Option("-l", "--selector", help="label selector (a=b,c!=d)")] = "",
    field_selector: Annotated[str, typer.Option("--field-selector", help="field selector")] = "",
    all_namespaces: Annotated[bool, typer.Option("-A", "--all-namespaces", help="list across namespaces")] = False,
    watch: Annotated[bool, typer.Option("-w", "--watch/--no-watch", help="after listing, watch for changes")] = False,
    watch_only: Annotated[bool, typer.Option("--watch-only", help="watch without listing first")] = False,
    show_labels: Annotated[bool, typer.Option("--show-labels", help="add a LABELS column")] = False,
    label_columns: Annotated[list[str] | None, typer.Option("-L", "--label-columns",
                                                            help="a column per label key")] = None,
) -> None:
    """Display one or many resources."""
    keys = [k for value in label_columns or [] for k in value.split(",") if k]
    code = asyncio.run(run_get(ctx.obj, args or [], output, selector, field_selector, all_namespaces, watch,
                               watch_only, show_labels, keys))
    if code:
        raise typer.Exit(code)
