"""``kubectl get``: tables, ``-o wide|yaml|json|name|jsonpath=``, selectors, ``-A`` and ``-w``."""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass, field
from typing import Annotated, Any

import typer

from minik8s.api import columns as cols
from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.resourcetypes import ResourceType
from minik8s.kubectl import customcolumns, printing, sorting
from minik8s.kubectl.customcolumns import read_template
from minik8s.kubectl.errors import GENERIC_MESSAGES, KubectlError, server_error
from minik8s.kubectl.options import FilesOpt, KustomizeOpt, RecursiveOpt
from minik8s.kubectl.resolve import Target, object_ref, parse_targets
from minik8s.kubectl.session import GlobalOptions, Session
from minik8s.kubectl.structured import TEMPLATE_FORMATS, structured

#: the ``-o`` formats, as kubectl lists them in its error
ALLOWED = ("custom-columns", "custom-columns-file", "go-template", "go-template-file", "json", "jsonpath",
           "jsonpath-as-json", "jsonpath-file", "name", "template", "templatefile", "wide", "yaml")
FORMATS = ALLOWED
#: kubectl's default ``--chunk-size``
CHUNK_SIZE = 500


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
        # a boolean cell prints as Go's %v does (PriorityClass' GLOBAL-DEFAULT)
        row += [str(cell).lower() if isinstance(cell, bool) else str(cell)
                for cell in cols.cells(self.columns(rt), obj, at)]
        labels = meta.get("labels") or {}
        row += [str(labels.get(key, "")) for key in self.label_columns]
        if self.show_labels:
            row.append(cols.join_labels(labels))
        return row

    def table(self, rt: ResourceType, objs: list[Obj], no_headers: bool = False) -> list[str]:
        """The whole table (header and rows; rows only, aligned among themselves, with ``no_headers``)."""
        rows = [self.row(rt, o) for o in objs]
        if no_headers:
            return printing.tabwrite(rows, minwidth=6, padding=3, trim=False)
        return printing.table(self.header(rt), rows, trim=False)


def check_output(output: str) -> str:
    """Validate ``-o``; returns the format name (``jsonpath`` for ``jsonpath=...``)."""
    kind, eq, arg = output.partition("=")
    if output and kind not in FORMATS:
        raise KubectlError(f'unable to match a printer suitable for the output format "{output}", '
                           f"allowed formats are: {','.join(ALLOWED)}")
    if kind in TEMPLATE_FORMATS and not arg:
        raise KubectlError("template format specified but no template given")
    if kind in ("custom-columns", "custom-columns-file") and not arg:
        raise KubectlError("custom-columns format specified but no custom columns given")
    return kind




async def _fetch(s: Session, target: Target, namespace: str | None, selector: str, field_selector: str,
                 failures: list[str], chunk_size: int = CHUNK_SIZE) -> tuple[list[Obj], str]:
    """The objects of ``target`` (named, or listed in pages of ``chunk_size``; 0: one request) and the
    list's resourceVersion; a named object that does not exist adds its error line to ``failures``."""
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
    if chunk_size > 0:
        listed = await s.client.list_all(rt, ns, label_selector=selector or None,
                                         field_selector=field_selector or None, page_size=chunk_size)
    else:
        listed = await s.client.list(rt, ns, label_selector=selector or None, field_selector=field_selector or None)
    items = list(listed.get("items") or [])
    if rt.kind == "Event":
        items.sort(key=cols.event_sort_key)
    return items, str((listed.get("metadata") or {}).get("resourceVersion") or "")


@dataclass
class GetOptions:
    """``kubectl get``'s printing and listing flags."""

    output: str = ""
    selector: str = ""
    field_selector: str = ""
    all_namespaces: bool = False
    watch: bool = False
    watch_only: bool = False
    show_labels: bool = False
    label_columns: list[str] = field(default_factory=list)
    no_headers: bool = False
    sort_by: str = ""
    chunk_size: int = CHUNK_SIZE
    files: list[str] = field(default_factory=list)
    recursive: bool = False
    kustomize: str | None = None


async def _fetch_manifests(s: Session, o: GetOptions, failures: list[str],
                           ) -> tuple[list[Target], list[tuple[ResourceType, list[Obj], str]]]:
    """``get -f``/``-k``: each object of the files (or of the kustomization) fetched by name, in their
    order, consecutive objects of one type in one group; a missing one adds its error to ``failures``."""
    from minik8s.kubectl import manifests

    planned = manifests.plan(s, manifests.load(o.files, o.recursive, "get", o.kustomize), s.opts.namespace)
    targets: list[Target] = []
    results: list[tuple[ResourceType, list[Obj], str]] = []
    for p in planned:
        if not targets or targets[-1].rt != p.rt:
            targets.append(Target(p.rt, []))
            results.append((p.rt, [], ""))
        targets[-1].names.append(p.name)
        try:
            results[-1][1].append(await s.client.get(p.rt, p.name, p.namespace))
        except errors.NotFound as exc:
            failures.append(server_error(exc))
    return targets, results


def _no_sort_field(sort_by: str) -> KubectlError:
    return KubectlError(f'couldn\'t find any field with path "{sort_by}" in the list of objects')


def _sorted_results(results: list[tuple[ResourceType, list[Obj], str]], sort_by: str,
                    table: bool) -> list[tuple[ResourceType, list[Obj], str]]:
    """The results ordered by ``--sort-by``, as kubectl orders them (see :mod:`minik8s.kubectl.sorting`).

    kubectl sorts a table's rows per resource type, and drops every row when the path names nothing
    in any of them (or cannot be parsed); it refuses several types' tables at once, and other formats
    whose objects all lack the field."""
    try:
        spec = sorting.check(sort_by)
    except KubectlError:
        if table and len(results) == 1:
            return [(rt, [], rv) for rt, _, rv in results]
        raise
    if table:
        if len(results) > 1:
            raise _no_sort_field(spec)
        rt, objs, rv = results[0]
        if objs and not any(sorting.values(o, spec) for o in objs):
            return [(rt, [], rv)]
        return [(rt, sorting.sort_objects(objs, sort_by), rv)]
    everything = [o for _, objs, _ in results for o in objs]
    if everything and not any(sorting.values(o, spec) for o in everything):
        raise _no_sort_field(spec)
    return results


async def run_get(opts: GlobalOptions, args: list[str], o: GetOptions) -> int:
    """Fetch and print; returns the exit code (1 when a named object was not found)."""
    fmt = check_output(o.output)
    columns = None
    if fmt == "custom-columns":
        columns = customcolumns.parse_spec(o.output.partition("=")[2])
    elif fmt == "custom-columns-file":
        columns = customcolumns.parse_file_text(read_template(o.output.partition("=")[2]))
    table = fmt in ("", "wide")
    async with Session(opts) as s:
        failures: list[str] = []
        results: list[tuple[ResourceType, list[Obj], str]] = []
        namespace: str | None
        if o.files or o.kustomize:
            if args:
                raise KubectlError("when paths, URLs, or stdin is provided as input, you may not specify resource "
                                   "arguments as well")
            targets, results = await _fetch_manifests(s, o, failures)
            namespace = s.namespace
            printer = Printer(o.output, False, o.show_labels, o.label_columns,
                              len({(t.rt.group, t.rt.plural) for t in targets}) > 1)
            for target in targets if table else []:
                await printer.learn(s, target.rt)
        else:
            targets = parse_targets(s.registry, args)
            if o.all_namespaces and any(t.names for t in targets):
                raise KubectlError("a resource cannot be retrieved by name across all namespaces")
            if (o.watch or o.watch_only) and len(targets) > 1:
                raise KubectlError("you may only specify a single resource type")
            namespace = None if o.all_namespaces else s.namespace
            multi = len(targets) > 1 or any(t.lower() == "all" for t in args[0].split(","))
            printer = Printer(o.output, o.all_namespaces, o.show_labels, o.label_columns, multi)
            for target in targets:
                if table:
                    await printer.learn(s, target.rt)
                objs, rv = await _fetch(s, target, namespace, o.selector, o.field_selector, failures, o.chunk_size)
                results.append((target.rt, objs, rv))
        if (o.watch or o.watch_only) and not (o.files or o.kustomize):
            rt, objs, rv = results[0]
            await _watch(s, printer, fmt, rt, objs, rv, namespace, targets[0].names, o.selector, o.field_selector,
                         o.watch_only)
            return 0
        if o.sort_by:
            results = _sorted_results(results, o.sort_by, table)
        total = sum(len(objs) for _, objs, _ in results)
        everything = [o for _, objs, _ in results for o in objs]
        if o.sort_by and not table:
            everything = sorting.sort_objects(everything, o.sort_by)
        if table:
            first = True
            for rt, objs, _ in results:
                if not objs:
                    continue
                if not first and not o.no_headers:
                    print()
                printing.write_lines(printer.table(rt, objs, o.no_headers))
                first = False
        elif fmt == "name":
            names = {id(obj): object_ref(rt, obj["metadata"]["name"]) for rt, objs, _ in results for obj in objs}
            printing.write_lines([names[id(obj)] for obj in everything])
        elif columns is not None:
            try:
                printing.write_lines(customcolumns.render(columns, everything, o.no_headers))
            except customcolumns.PartialOutput as partial:
                printing.write_lines(partial.lines)
                raise partial.error from None
        else:
            single = len(targets) == 1 and len(targets[0].names) == 1 and total == 1
            if everything or fmt not in TEMPLATE_FORMATS:
                data = everything[0] if single else printing.as_list(everything)
                text = structured(o.output, data)
                sys.stdout.write(text + ("\n" if fmt not in TEMPLATE_FORMATS else ""))
                sys.stdout.flush()
        for line in failures:
            print(line, file=sys.stderr)
        if total == 0 and not failures and table:
            namespaced = any(t.rt.namespaced for t in targets)
            # kubectl: "... in NS namespace." for namespaced kinds, a bare "No resources found" else
            print(f"No resources found in {namespace} namespace." if namespaced and namespace
                  else "No resources found", file=sys.stderr)
        return 1 if failures else 0


async def run_raw(opts: GlobalOptions, path: str) -> int:
    """``get --raw PATH``: GET the path and write the body as it came (no newline added)."""
    async with Session(opts, discover=False) as s:
        resp = await s.client.send("GET", path)
        if resp.status_code >= 400:
            try:
                body: Any = resp.json()
            except ValueError:
                body = resp.text
            if not (isinstance(body, dict) and body.get("kind") == "Status"):
                body = {"kind": "Status", "code": resp.status_code,
                        "message": GENERIC_MESSAGES.get(resp.status_code,
                                                        f"the server answered HTTP {resp.status_code}")}
            raise errors.from_status(resp.status_code, body)
        sys.stdout.buffer.write(resp.content)
        sys.stdout.flush()
    return 0


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
                                        help="wide, yaml, json, name, jsonpath=TEMPLATE, jsonpath-file=FILE, "
                                             "custom-columns=SPEC or custom-columns-file=FILE")] = "",
    selector: Annotated[str, typer.Option("-l", "--selector", help="label selector (a=b,c!=d)")] = "",
    field_selector: Annotated[str, typer.Option("--field-selector", help="field selector")] = "",
    all_namespaces: Annotated[bool, typer.Option("-A", "--all-namespaces", help="list across namespaces")] = False,
    watch: Annotated[bool, typer.Option("-w", "--watch/--no-watch", help="after listing, watch for changes")] = False,
    watch_only: Annotated[bool, typer.Option("--watch-only", help="watch without listing first")] = False,
    show_labels: Annotated[bool, typer.Option("--show-labels", help="add a LABELS column")] = False,
    label_columns: Annotated[list[str] | None, typer.Option("-L", "--label-columns",
                                                            help="a column per label key")] = None,
    no_headers: Annotated[bool, typer.Option("--no-headers", help="print tables without their header")] = False,
    sort_by: Annotated[str, typer.Option("--sort-by", help="order by this JSONPath (.metadata.name)")] = "",
    chunk_size: Annotated[int, typer.Option("--chunk-size", help="list in pages of this many (0: one request)")]
    = CHUNK_SIZE,
    raw: Annotated[str, typer.Option("--raw", help="GET this server path and print the body as it is")] = "",
    filename: FilesOpt = None,
    recursive: RecursiveOpt = False,
    kustomize: KustomizeOpt = None,
) -> None:
    """Display one or many resources."""
    if raw:
        if args:
            raise KubectlError("arguments may not be passed when --raw is specified")
        code = asyncio.run(run_raw(ctx.obj, raw))
    else:
        keys = [k for value in label_columns or [] for k in value.split(",") if k]
        code = asyncio.run(run_get(ctx.obj, args or [], GetOptions(
            output=output, selector=selector, field_selector=field_selector, all_namespaces=all_namespaces,
            watch=watch, watch_only=watch_only, show_labels=show_labels, label_columns=keys, no_headers=no_headers,
            sort_by=sort_by, chunk_size=chunk_size, files=filename or [], recursive=recursive, kustomize=kustomize)))
    if code:
        raise typer.Exit(code)
