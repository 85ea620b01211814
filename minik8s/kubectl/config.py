"""``kubectl config``: ``view``, ``current-context``, ``get-contexts``, ``use-context`` and
``set-context`` over the kubeconfig kubectl would read (``--kubeconfig``, else ``$KUBECONFIG``'s
files merged: :func:`minik8s.client.kubeconfig.read`).

``view`` prints the merged document (``-o yaml`` keys sorted, ``-o json`` in kubectl's struct
order), secrets redacted unless ``--raw`` (``*-data``: ``DATA+OMITTED``; ``token``, ``password``:
``REDACTED``); ``--minify`` keeps the current context and what it names.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from minik8s.client.kubeconfig import Kubeconfig, read
from minik8s.kubectl import printing
from minik8s.kubectl.errors import KubectlError
from minik8s.kubectl.session import GlobalOptions

app = typer.Typer(help="Modify kubeconfig files.", no_args_is_help=True, add_completion=False)

#: Go struct field order of the kubeconfig types (``-o json`` prints them so)
_ORDER = {
    "config": ["kind", "apiVersion", "preferences", "clusters", "users", "contexts", "current-context", "extensions"],
    "cluster": ["server", "tls-server-name", "insecure-skip-tls-verify", "certificate-authority",
                "certificate-authority-data", "proxy-url", "disable-compression", "extensions"],
    "user": ["client-certificate", "client-certificate-data", "client-key", "client-key-data", "token", "tokenFile",
             "as", "as-uid", "as-groups", "as-user-extra", "username", "password", "auth-provider", "exec",
             "extensions"],
    "context": ["cluster", "user", "namespace", "extensions"],
}
_OMITTED = ("certificate-authority-data", "client-certificate-data", "client-key-data")
_REDACTED = ("token", "password")


def _ordered(body: dict[str, Any], kind: str) -> dict[str, Any]:
    order = _ORDER[kind]
    return {k: body[k] for k in sorted(body, key=lambda k: (order.index(k) if k in order else len(order), k))}


def view_document(config: Kubeconfig, *, minify: bool = False, raw: bool = False,
                  context: str | None = None) -> dict[str, Any]:
    """The document ``kubectl config view`` prints (Go struct order; lists sorted by name).

    ``minify``: only ``context`` (default: the current one), its cluster and user; KubectlError
    when there is no such context."""
    doc = copy.deepcopy(config.doc)
    current = context or doc.get("current-context") or ""
    sections: dict[str, list[dict[str, Any]]] = {}
    for section, key in (("clusters", "cluster"), ("users", "user"), ("contexts", "context")):
        entries = sorted((e for e in doc.get(section) or [] if isinstance(e, dict)), key=lambda e: str(e["name"]))
        sections[section] = [{"name": e["name"], key: _ordered(dict(e.get(key) or {}), key)} for e in entries]
    if minify:
        if not current:
            raise KubectlError("current-context must exist in order to minify")
        ctx = next((e["context"] for e in sections["contexts"] if e["name"] == current), None)
        if ctx is None:
            raise KubectlError(f"cannot locate context {current}")
        sections["contexts"] = [e for e in sections["contexts"] if e["name"] == current]
        sections["clusters"] = [e for e in sections["clusters"] if e["name"] == ctx.get("cluster")]
        sections["users"] = [e for e in sections["users"] if e["name"] == ctx.get("user")]
        doc["current-context"] = current
    if not raw:
        for entry in sections["clusters"] + sections["users"]:
            body = entry.get("cluster", entry.get("user")) or {}
            for key in _OMITTED:
                if body.get(key):
                    body[key] = "DATA+OMITTED"
            for key in _REDACTED:
                if body.get(key):
                    body[key] = "REDACTED"
    out: dict[str, Any] = {"kind": "Config", "apiVersion": "v1", "preferences": doc.get("preferences") or {}}
    for section in ("clusters", "users", "contexts"):
        out[section] = sections[section] or None
    out["current-context"] = doc.get("current-context") or ""
    return out


def _opts(ctx: typer.Context) -> GlobalOptions:
    return ctx.obj if isinstance(ctx.obj, GlobalOptions) else GlobalOptions()


def _read(opts: GlobalOptions) -> Kubeconfig:
    try:
        return read(opts.kubeconfig)
    except Exception as exc:  # noqa: BLE001 - KubeconfigError and OSError alike
        raise KubectlError(str(exc)) from None


@app.command("view")
def view(
    ctx: typer.Context,
    output: Annotated[str, typer.Option("-o", "--output", help="yaml, json or jsonpath=TEMPLATE")] = "yaml",
    minify: Annotated[bool, typer.Option("--minify", help="only the current context and what it uses")] = False,
    raw: Annotated[bool, typer.Option("--raw", help="show certificate data and tokens as they are")] = False,
) -> None:
    """Display merged kubeconfig settings or a specified kubeconfig file."""
    opts = _opts(ctx)
    doc = view_document(_read(opts), minify=minify, raw=raw, context=opts.context)
    kind, _, arg = output.partition("=")
    if kind == "yaml":
        sys.stdout.write(printing.to_yaml(doc))
    elif kind == "json":
        sys.stdout.write(printing.to_json(doc, sort_keys=False) + "\n")
    elif kind == "jsonpath" and arg:
        try:
            sys.stdout.write(printing.jsonpath(arg, doc))
        except ValueError as exc:
            raise KubectlError(f"error parsing jsonpath {arg}, {exc}") from None
    elif kind == "jsonpath":
        raise KubectlError("template format specified but no template given")
    else:
        raise KubectlError(f'unable to match a printer suitable for the output format "{output}", '
                           "allowed formats are: json,jsonpath,yaml")


@app.command("current-context")
def current_context(ctx: typer.Context) -> None:
    """Display the current-context."""
    current = _read(_opts(ctx)).doc.get("current-context")
    if not current:
        raise KubectlError("current-context is not set")
    print(current)


@app.command("get-contexts")
def get_contexts(
    ctx: typer.Context,
    names: Annotated[list[str] | None, typer.Argument(metavar="[NAME...]", help="contexts to show")] = None,
    output: Annotated[str, typer.Option("-o", "--output", help="name: names only")] = "",
    no_headers: Annotated[bool, typer.Option("--no-headers", help="print without the header")] = False,
) -> None:
    """Describe one or many contexts."""
    if output not in ("", "name"):
        raise KubectlError(f"output must be one of '' or 'name': {output}")
    config = _read(_opts(ctx))
    contexts = config.entries("contexts")
    current = config.doc.get("current-context") or ""
    wanted = names or sorted(contexts)
    rows = []
    missing = []
    for name in wanted:
        if name not in contexts:
            missing.append(name)
            continue
        body = contexts[name]
        rows.append(["*" if name == current else "", name, str(body.get("cluster") or ""),
                     str(body.get("user") or ""), str(body.get("namespace") or "")])
    if output == "name":
        printing.write_lines([r[1] for r in rows])
    else:
        head = [] if no_headers else [["CURRENT", "NAME", "CLUSTER", "AUTHINFO", "NAMESPACE"]]
        printing.write_lines(printing.tabwrite(head + rows, minwidth=6, padding=3))
    if missing:
        raise KubectlError(f"context {missing[0]} not found")


def _destination(config: Kubeconfig, opts: GlobalOptions) -> Path:
    """The file a change of current-context goes to: ``--kubeconfig``, else the first file of the
    list (as the official kubectl writes it)."""
    if opts.kubeconfig:
        return Path(opts.kubeconfig).expanduser()
    if not config.files:
        raise KubectlError("no kubeconfig file to modify")
    return config.files[0]


def _write(path: Path, change: Any) -> None:
    import yaml

    doc = yaml.safe_load(path.read_text()) if path.exists() else {}
    doc = doc if isinstance(doc, dict) else {}
    change(doc)
    path.write_text(printing.to_yaml(doc))


@app.command("use-context")
def use_context(ctx: typer.Context, name: Annotated[str, typer.Argument(metavar="CONTEXT_NAME")]) -> None:
    """Set the current-context in a kubeconfig file."""
    opts = _opts(ctx)
    config = _read(opts)
    if name not in config.entries("contexts"):
        raise KubectlError(f'no context exists with the name: "{name}"')
    _write(_destination(config, opts), lambda doc: doc.__setitem__("current-context", name))
    print(f'Switched to context "{name}".')


@app.command("set-context")
def set_context(
    ctx: typer.Context,
    name: Annotated[str | None, typer.Argument(metavar="[NAME]")] = None,
    current: Annotated[bool, typer.Option("--current", help="modify the current context")] = False,
) -> None:
    """Set a context entry in kubeconfig (``--namespace``, ``--cluster``, ``--user``)."""
    opts = _opts(ctx)
    config = _read(opts)
    if current and name:
        raise KubectlError("you cannot specify both a context name and --current")
    if current:
        name = config.doc.get("current-context") or ""
        if not name:
            raise KubectlError("no current context is set")
    if not name:
        raise KubectlError("you must specify a non-empty context name or --current")
    exists = name in config.entries("contexts")
    changes = {k: v for k, v in (("cluster", opts.cluster), ("user", opts.user), ("namespace", opts.namespace))
               if v is not None}
    path = Path(opts.kubeconfig).expanduser() if opts.kubeconfig else config.files[0] if config.files else None
    if path is None:
        raise KubectlError("no kubeconfig file to modify")

    def change(doc: dict[str, Any]) -> None:
        entries = doc.setdefault("contexts", []) or []
        doc["contexts"] = entries
        for entry in entries:
            if isinstance(entry, dict) and entry.get("name") == name:
                entry["context"] = {**(entry.get("context") or {}), **changes}
                return
        entries.append({"name": name, "context": changes})

    _write(path, change)
    print(f'Context "{name}" {"modified" if exists else "created"}.')
