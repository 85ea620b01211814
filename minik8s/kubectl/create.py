"""``kubectl create``: from files (``-f``), or by generator: ``namespace NAME``,
``configmap NAME``, ``secret generic NAME``, ``job NAME`` and ``cronjob NAME``.

The generators build the object from ``--from-literal=KEY=VALUE``, ``--from-file=[KEY=]PATH``
(a file: KEY defaults to its base name; a directory: each regular file in it whose name is a
valid key) and ``--from-env-file=PATH`` (``KEY=VALUE`` lines; ``#`` comments and blank lines
skipped), as kubectl's ``create configmap``/``create secret generic`` do: a ConfigMap keeps
UTF-8 content in ``data`` and anything else in ``binaryData``; a Secret gets every value
base64-encoded in ``data`` and ``--type`` (default ``Opaque``).  ``--dry-run=client`` sends
nothing, ``--dry-run=server`` lets the apiserver validate without storing; ``-o yaml|json``
prints the object instead of ``configmap/NAME created``.
"""

from __future__ import annotations

import asyncio
import copy
import os
from pathlib import Path
from typing import Annotated

import typer

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.config import b64encode
from minik8s.api.registry import default_registry
from minik8s.api.validation import config_map_key_errors, env_var_name_errors
from minik8s.client.rest import ServerUnavailable
from minik8s.kubectl import manifests, printing
from minik8s.kubectl.errors import KubectlError, report_failure
from minik8s.kubectl.manifests import LAST_APPLIED, applied_config, encode, plan
from minik8s.kubectl.options import FilesOpt, RecursiveOpt
from minik8s.kubectl.resolve import object_ref
from minik8s.kubectl.session import GlobalOptions, Session

app = typer.Typer(
    name="create",
    add_completion=False,
    invoke_without_command=True,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Create a resource from a file or from stdin, or with a generator "
         "(namespace, configmap, secret, job, cronjob).",
)



async def run_create(opts: GlobalOptions, files: list[str], recursive: bool, save_config: bool) -> int:
    """Create every object in ``files``; AlreadyExists and other server errors are reported, not fatal."""
    items = manifests.load(files, recursive, "create")
    failed = 0
    async with Session(opts) as s:
        planned = plan(s, items, opts.namespace, need_name=False)
        for p in planned:
            body = copy.deepcopy(p.manifest.obj)
            meta = body.setdefault("metadata", {})
            if p.namespace:
                meta["namespace"] = p.namespace
            if save_config:
                meta.setdefault("annotations", {})[LAST_APPLIED] = encode(applied_config(p))
            try:
                created = await s.client.create(p.rt, body, p.namespace)
            except ServerUnavailable:
                raise
            except errors.APIError as exc:
                report_failure(exc, "creating", p.manifest.source)
                failed += 1
                continue
            print(f"{object_ref(p.rt, created['metadata']['name'])} created", flush=True)
    return 1 if failed else 0

@app.callback()
def create(
    ctx: typer.Context,
    filename: FilesOpt = None,
    recursive: RecursiveOpt = False,
    save_config: Annotated[bool, typer.Option("--save-config",
                                              help="record the configuration for later kubectl apply")] = False,
) -> None:
    """Create resources from files or stdin (fails for objects that already exist)."""
    if ctx.invoked_subcommand is not None:
        if filename:
            raise KubectlError(f"-f cannot be combined with 'create {ctx.invoked_subcommand}'")
        return
    if not filename:
        raise KubectlError("must specify one of -f and -k")
    code = asyncio.run(run_create(ctx.obj, filename, recursive, save_config))
    if code:
        raise typer.Exit(code)


# ------------------------------------------------------------------ sources
def _split_key(spec: str, flag: str) -> tuple[str | None, str]:
    """``KEY=PATH`` or ``PATH`` of ``--from-file``."""
    key, eq, path = spec.partition("=")
    if not eq:
        return None, spec
    if not key or not path:
        raise KubectlError(f"key names or file paths cannot be empty in {flag}={spec}")
    return key, path


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise KubectlError(f"error reading {path}: {exc.strerror or exc}") from None


def gather(literals: list[str], files: list[str], env_files: list[str]) -> list[tuple[str, bytes]]:
    """Every ``(key, value)`` the flags name, in order (duplicates are checked by the caller).

    Raises KubectlError (kubectl's messages) for a literal without ``=``, a missing file,
    an env file line that is not ``KEY=VALUE``.
    """
    entries: list[tuple[str, bytes]] = []
    for spec in files:
        key, raw = _split_key(spec, "--from-file")
        path = Path(raw)
        if path.is_dir():
            if key is not None:
                raise KubectlError(f"cannot give a key name for a directory path: {spec}")
            for item in sorted(path.iterdir()):
                if item.is_file() and not config_map_key_errors(item.name):
                    entries.append((item.name, _read(item)))
            continue
        if not path.exists():
            raise KubectlError(f"error reading {raw}: no such file or directory")
        entries.append((key or path.name, _read(path)))
    for spec in literals:
        key, eq, value = spec.partition("=")
        if not eq or not key:
            raise KubectlError(f"invalid literal source {spec}, expected key=value")
        entries.append((key, value.encode()))
    for env_file in env_files:
        for number, line in enumerate(_read(Path(env_file)).decode("utf-8", "replace").splitlines(), 1):
            line = line.lstrip()
            if not line or line.startswith("#"):
                continue
            key, eq, value = line.partition("=")
            if env_var_name_errors(key):
                raise KubectlError(f'"{key}" is not a valid key name: {"; ".join(env_var_name_errors(key))} '
                                   f"(line {number} of {env_file})")
            if not eq:
                value = os.environ.get(key, "")
            entries.append((key, value.encode()))
    return entries


def _check_keys(entries: list[tuple[str, bytes]], kind: str, name: str) -> None:
    seen: set[str] = set()
    for key, _ in entries:
        problems = config_map_key_errors(key)
        if problems:
            raise KubectlError(f'"{key}" is not a valid key name for a {kind}: {"; ".join(problems)}')
        if key in seen:
            raise KubectlError(f'cannot add key "{key}", another key by that name already exists in '
                               f'{kind} "{name}"')
        seen.add(key)


def config_map(name: str, entries: list[tuple[str, bytes]]) -> Obj:
    """A ConfigMap with UTF-8 values in ``data`` and the rest (base64) in ``binaryData``."""
    _check_keys(entries, "ConfigMap", name)
    data: dict[str, str] = {}
    binary: dict[str, str] = {}
    for key, value in entries:
        try:
            data[key] = value.decode("utf-8")
        except UnicodeDecodeError:
            binary[key] = b64encode(value)
    obj: Obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}
    if data:
        obj["data"] = data
    if binary:
        obj["binaryData"] = binary
    return obj


def secret(name: str, entries: list[tuple[str, bytes]], secret_type: str) -> Obj:
    """A Secret of ``secret_type`` with every value base64-encoded in ``data``."""
    _check_keys(entries, "Secret", name)
    obj: Obj = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}}
    if secret_type:
        obj["type"] = secret_type
    if entries:
        obj["data"] = {key: b64encode(value) for key, value in entries}
    return obj


# ------------------------------------------------------------------ sending
DRY_RUN_MODES = ("none", "client", "server")


async def send(opts: GlobalOptions, obj: Obj, dry_run: str, output: str) -> None:
    """Create ``obj`` (or only validate it, per ``dry_run``) and print the result."""
    if dry_run not in DRY_RUN_MODES:
        raise KubectlError(f'Invalid dry-run value ({dry_run}). Must be "none", "server", or "client".')
    if output not in ("", "yaml", "json", "name"):
        raise KubectlError(f'unable to match a printer suitable for the output format "{output}", '
                           "allowed formats are: json,name,yaml")
    if dry_run == "client":  # nothing is sent: works without a server, as kubectl's does
        rt = default_registry().by_kind(obj["apiVersion"], obj["kind"])
        assert rt is not None
        if rt.namespaced:
            obj["metadata"]["namespace"] = opts.default_namespace()
        result = obj
    else:
        async with Session(opts) as s:
            found = s.registry.by_kind(obj["apiVersion"], obj["kind"])
            if found is None:
                raise KubectlError(f'the server does not serve {obj["kind"]} objects')
            rt = found
            if rt.namespaced:
                obj["metadata"]["namespace"] = s.namespace
            result = await s.client.create(rt, obj, obj["metadata"].get("namespace"), dry_run=dry_run == "server")
    ref = object_ref(rt, result["metadata"]["name"])
    if output == "yaml":
        print(printing.to_yaml(result), end="")
    elif output == "json":
        print(printing.to_json(result))
    elif output == "name":
        print(ref)
    else:
        suffix = {"client": " (dry run)", "server": " (server dry run)"}.get(dry_run, "")
        print(f"{ref} created{suffix}")


LiteralOpt = Annotated[list[str] | None, typer.Option("--from-literal", help="KEY=VALUE; repeatable")]
FileOpt = Annotated[list[str] | None, typer.Option("--from-file", help="[KEY=]FILE or a directory; repeatable")]
EnvFileOpt = Annotated[list[str] | None, typer.Option("--from-env-file", help="file of KEY=VALUE lines; repeatable")]
DryRunOpt = Annotated[str, typer.Option("--dry-run", help="none, client (send nothing) or server (validate only)")]
OutputOpt = Annotated[str, typer.Option("-o", "--output", help="yaml, json or name")]


@app.command("configmap")
def create_configmap(ctx: typer.Context, name: Annotated[str, typer.Argument(help="the ConfigMap's name")],
                     from_literal: LiteralOpt = None, from_file: FileOpt = None, from_env_file: EnvFileOpt = None,
                     dry_run: DryRunOpt = "none", output: OutputOpt = "") -> None:
    """Create a ConfigMap from literals, files, directories or env files (alias: cm)."""
    obj = config_map(name, gather(from_literal or [], from_file or [], from_env_file or []))
    asyncio.run(send(ctx.obj, obj, dry_run, output))


app.command("cm", hidden=True)(create_configmap)


secret_app = typer.Typer(name="secret", add_completion=False, rich_markup_mode=None,
                         context_settings={"help_option_names": ["-h", "--help"]},
                         help="Create a Secret (only the generic form).")
app.add_typer(secret_app)


@secret_app.command("generic")
def create_secret_generic(ctx: typer.Context, name: Annotated[str, typer.Argument(help="the Secret's name")],
                          from_literal: LiteralOpt = None, from_file: FileOpt = None,
                          from_env_file: EnvFileOpt = None,
                          secret_type: Annotated[str, typer.Option("--type", help="the Secret's type")] = "",
                          dry_run: DryRunOpt = "none", output: OutputOpt = "") -> None:
    """Create a Secret from literals, files, directories or env files."""
    obj = secret(name, gather(from_literal or [], from_file or [], from_env_file or []), secret_type)
    asyncio.run(send(ctx.obj, obj, dry_run, output))


@app.command("namespace")
def create_namespace(ctx: typer.Context, name: Annotated[str, typer.Argument(help="the Namespace's name")],
                     dry_run: DryRunOpt = "none", output: OutputOpt = "") -> None:
    """Create a namespace (alias: ns)."""
    asyncio.run(send(ctx.obj, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}, dry_run, output))


app.command("ns", hidden=True)(create_namespace)


# ------------------------------------------------------------------ batch: job, cronjob
CommandArg = Annotated[list[str] | None, typer.Argument(metavar="-- [COMMAND] [args...]",
                                                        help="the container's command")]
ImageOpt = Annotated[str, typer.Option("--image", help="the container image")]


def job_object(name: str, image: str, command: list[str]) -> Obj:
    """``kubectl create job NAME --image=IMG -- CMD``: one container named NAME, restartPolicy Never."""
    container: Obj = {"name": name, "image": image}
    if command:
        container["command"] = list(command)
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"template": {"metadata": {}, "spec": {"containers": [container], "restartPolicy": "Never"}}}}


def job_from_cronjob(name: str, cronjob: Obj) -> Obj:
    """A Job from a CronJob's ``jobTemplate`` (``kubectl create job --from=cronjob/X``): the template's
    labels and annotations plus ``cronjob.kubernetes.io/instantiate: manual``, owned by the CronJob."""
    template = copy.deepcopy((cronjob.get("spec") or {}).get("jobTemplate") or {})
    tmeta = template.get("metadata") or {}
    cmeta = cronjob.get("metadata") or {}
    annotations = {"cronjob.kubernetes.io/instantiate": "manual", **(tmeta.get("annotations") or {})}
    meta: Obj = {"name": name, "annotations": annotations,
                 "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob", "name": cmeta.get("name"),
                                      "uid": cmeta.get("uid"), "controller": True, "blockOwnerDeletion": True}]}
    if tmeta.get("labels"):
        meta["labels"] = dict(tmeta["labels"])
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": template.get("spec") or {}}


async def _fetch_cronjob(opts: GlobalOptions, ref: str) -> Obj:
    kind, slash, cj_name = ref.partition("/")
    if not slash or not cj_name or kind.lower() not in ("cronjob", "cronjobs", "cj", "cronjob.batch",
                                                        "cronjobs.batch"):
        raise KubectlError(f"from must be an existing cronjob: {ref}")
    async with Session(opts) as s:
        return await s.get_object("batch/v1", "CronJob", cj_name)


@app.command("job", context_settings={"allow_interspersed_args": True})
def create_job(ctx: typer.Context, name: Annotated[str, typer.Argument(help="the Job's name")],
               command: CommandArg = None, image: ImageOpt = "",
               from_: Annotated[str, typer.Option("--from", help="cronjob/NAME to take the job template from")] = "",
               dry_run: DryRunOpt = "none", output: OutputOpt = "") -> None:
    """Create a Job with the given name: from an image (and command after --), or from a CronJob."""
    if from_:
        if image or command:
            raise KubectlError("either --image or --from must be specified, not both")
        obj = job_from_cronjob(name, asyncio.run(_fetch_cronjob(ctx.obj, from_)))
    elif not image:
        raise KubectlError("either --image or --from must be specified")
    else:
        obj = job_object(name, image, command or [])
    asyncio.run(send(ctx.obj, obj, dry_run, output))


@app.command("cronjob", context_settings={"allow_interspersed_args": True})
def create_cronjob(ctx: typer.Context, name: Annotated[str, typer.Argument(help="the CronJob's name")],
                   command: CommandArg = None, image: ImageOpt = "",
                   schedule: Annotated[str, typer.Option("--schedule", help="cron schedule, e.g. '*/1 * * * *'")] = "",
                   restart: Annotated[str, typer.Option("--restart", help="OnFailure or Never")] = "OnFailure",
                   dry_run: DryRunOpt = "none", output: OutputOpt = "") -> None:
    """Create a CronJob with the given name, image, schedule (and command after --) (alias: cj)."""
    if not image:
        raise KubectlError("--image must be specified")
    if not schedule:
        raise KubectlError("--schedule must be specified")
    if restart not in ("OnFailure", "Never"):
        raise KubectlError(f"invalid restart policy: {restart}")
    container: Obj = {"name": name, "image": image}
    if command:
        container["command"] = list(command)
    obj: Obj = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name},
                "spec": {"schedule": schedule, "jobTemplate": {"metadata": {"name": name}, "spec": {
                    "template": {"metadata": {}, "spec": {"containers": [container], "restartPolicy": restart}}}}}}
    asyncio.run(send(ctx.obj, obj, dry_run, output))


app.command("cj", hidden=True, context_settings={"allow_interspersed_args": True})(create_cronjob)
