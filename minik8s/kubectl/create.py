"""``kubectl create``: from files (``-f``), or by generator: ``namespace NAME``,
``configmap NAME``, ``secret generic|tls|docker-registry NAME``, ``ingress NAME``, ``token
SERVICEACCOUNT``, ``job NAME``, ``cronjob NAME``, ``deployment NAME``, ``service
clusterip|nodeport|loadbalancer|externalname NAME``, ``serviceaccount NAME``, ``role``,
``clusterrole``, ``rolebinding`` and ``clusterrolebinding`` (the builders of the secret, ingress and
token generators and ``--append-hash``'s suffix are in :mod:`minik8s.kubectl.generators`).

Every generator builds the object kubectl 1.32 builds, field for field (see :mod:`creating`: the
zero values and field order of kubectl's Go structs), so ``--dry-run=client -o yaml`` prints the
same document and ``kubectl create deployment x --image=y --dry-run=client -o yaml | kubectl apply
-f -`` works as with the official kubectl.

The generators build the object from ``--from-literal=KEY=VALUE``, ``--from-file=[KEY=]PATH``
(a file: KEY defaults to its base name; a directory: each regular file in it whose name is a
valid key) and ``--from-env-file=PATH`` (``KEY=VALUE`` lines; ``#`` comments and blank lines
skipped), as kubectl's ``create configmap``/``create secret generic`` do: a ConfigMap keeps
UTF-8 content in ``data`` and anything else in ``binaryData``; a Secret gets every value
base64-encoded in ``data`` and ``--type`` (none unless given).  ``--from-env-file`` cannot be
combined with the others, and its keys must be environment variable names as kubectl 1.32 checks
them.  ``--append-hash`` appends Kubernetes' content hash to the name.  ``--dry-run=client`` sends
nothing, ``--dry-run=server`` lets the apiserver validate without storing; ``-o yaml|json``
prints the object instead of ``configmap/NAME created``.
"""

from __future__ import annotations

import asyncio
import copy
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.config import b64encode
from minik8s.api.validation import config_map_key_errors, dns1123_subdomain_errors
from minik8s.client.rest import ServerUnavailable, resource_path
from minik8s.kubectl import generators, manifests
from minik8s.kubectl.creating import (
    DryRunOpt,
    OutputOpt,
    check_flags,
    new_object,
    parse_labels,
    print_result,
    send,
    strip_zero,
    warn,
)
from minik8s.kubectl.errors import FlagError, KubectlError, report_failure
from minik8s.kubectl.manifests import LAST_APPLIED, applied_config, encode, plan
from minik8s.kubectl.options import FilesOpt, RecursiveOpt, duration_flag
from minik8s.kubectl.resolve import object_ref
from minik8s.kubectl.session import GlobalOptions, Session

app = typer.Typer(
    name="create",
    add_completion=False,
    invoke_without_command=True,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
    help="Create a resource from a file or from stdin, or with a generator (namespace, configmap, secret, "
         "ingress, token, job, cronjob, deployment, service, serviceaccount, role, clusterrole, rolebinding, "
         "clusterrolebinding).",
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


#: An env file's keys, as kubectl 1.32 checks them (``IsEnvVarName`` before relaxed names).
ENV_NAME = re.compile(r"[-._a-zA-Z][-._a-zA-Z0-9]*")
ENV_NAME_MESSAGE = ("a valid environment variable name must consist of alphabetic characters, digits, '_', '-', "
                    "or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or "
                    "'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')")


def gather(literals: list[str], files: list[str], env_files: list[str],
           default_key: str = "") -> list[tuple[str, bytes]]:
    """Every ``(key, value)`` the flags name, in order (duplicates are checked by the caller);
    ``default_key``: the key of a ``--from-file`` file given without one (else its base name).

    Raises KubectlError (kubectl's messages) for env files combined with files or literals, a
    literal without ``=``, a missing file, an env file key that is not an environment variable name.
    """
    if env_files and (files or literals):
        raise KubectlError("from-env-file cannot be combined with from-file or from-literal")
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
        entries.append((key or default_key or path.name, _read(path)))
    for spec in literals:
        key, eq, value = spec.partition("=")
        if not eq or not key:
            raise KubectlError(f"invalid literal source {spec}, expected key=value")
        entries.append((key, value.encode()))
    for env_file in env_files:
        for line in _read(Path(env_file)).decode("utf-8", "replace").splitlines():
            line = line.lstrip()
            if not line or line.startswith("#"):
                continue
            key, eq, value = line.partition("=")
            if not ENV_NAME.fullmatch(key):
                raise KubectlError(f'"{key}" is not a valid key name: {ENV_NAME_MESSAGE}')
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
    obj = new_object("v1", "ConfigMap", name)
    if data:  # Go maps: written in key order
        obj["data"] = dict(sorted(data.items()))
    if binary:
        obj["binaryData"] = dict(sorted(binary.items()))
    return obj


def secret(name: str, entries: list[tuple[str, bytes]], secret_type: str) -> Obj:
    """A Secret of ``secret_type`` with every value base64-encoded in ``data``."""
    _check_keys(entries, "Secret", name)
    obj = new_object("v1", "Secret", name)
    if entries:
        obj["data"] = {key: b64encode(value) for key, value in sorted(entries)}  # Go's map: in key order
    if secret_type:
        obj["type"] = secret_type
    return obj


LiteralOpt = Annotated[list[str] | None, typer.Option("--from-literal", help="KEY=VALUE; repeatable")]
FileOpt = Annotated[list[str] | None, typer.Option("--from-file", help="[KEY=]FILE or a directory; repeatable")]
EnvFileOpt = Annotated[list[str] | None, typer.Option("--from-env-file", help="file of KEY=VALUE lines; repeatable")]
AppendHashOpt = Annotated[bool, typer.Option("--append-hash", help="append a hash of the object to its name")]


@app.command("configmap")
def create_configmap(ctx: typer.Context, name: Annotated[str, typer.Argument(help="the ConfigMap's name")],
                     from_literal: LiteralOpt = None, from_file: FileOpt = None, from_env_file: EnvFileOpt = None,
                     append_hash: AppendHashOpt = False, dry_run: DryRunOpt = "none", output: OutputOpt = "") -> None:
    """Create a ConfigMap from literals, files, directories or env files (alias: cm)."""
    obj = config_map(name, gather(from_literal or [], from_file or [], from_env_file or []))
    if append_hash:
        generators.append_hash(obj)
    asyncio.run(send(ctx.obj, obj, dry_run, output, failure="failed to create configmap: "))


app.command("cm", hidden=True)(create_configmap)


secret_app = typer.Typer(name="secret", add_completion=False, rich_markup_mode=None,
                         context_settings={"help_option_names": ["-h", "--help"]},
                         help="Create a Secret: generic, tls or docker-registry.")
app.add_typer(secret_app)


@secret_app.command("generic")
def create_secret_generic(ctx: typer.Context, name: Annotated[str, typer.Argument(help="the Secret's name")],
                          from_literal: LiteralOpt = None, from_file: FileOpt = None,
                          from_env_file: EnvFileOpt = None,
                          secret_type: Annotated[str, typer.Option("--type", help="the Secret's type")] = "",
                          append_hash: AppendHashOpt = False, dry_run: DryRunOpt = "none",
                          output: OutputOpt = "") -> None:
    """Create a Secret from literals, files, directories or env files."""
    obj = secret(name, gather(from_literal or [], from_file or [], from_env_file or []), secret_type)
    if append_hash:
        generators.append_hash(obj)
    asyncio.run(send(ctx.obj, obj, dry_run, output, failure="failed to create secret "))


def _read_pem(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        reason = (exc.strerror or str(exc)).lower()
        raise KubectlError(f"Cannot read file {path}, open {path}: {reason}") from None


@secret_app.command("tls")
def create_secret_tls(ctx: typer.Context, name: NameArg = None,
                      cert: Annotated[str, typer.Option("--cert", help="PEM certificate file")] = "",
                      key: Annotated[str, typer.Option("--key", help="PEM private key file")] = "",
                      append_hash: AppendHashOpt = False, dry_run: DryRunOpt = "none", output: OutputOpt = "") -> None:
    """Create a TLS Secret (type kubernetes.io/tls) from a PEM certificate and its private key."""
    name = one_name(name, "secret tls")
    if not cert or not key:
        raise KubectlError("key and cert must be specified")
    check_flags(dry_run, output)
    obj = generators.tls_secret(name, _read_pem(cert), _read_pem(key))
    if append_hash:
        generators.append_hash(obj)
    asyncio.run(send(ctx.obj, obj, dry_run, output, failure="failed to create secret "))


@secret_app.command("docker-registry")
def create_secret_docker_registry(
        ctx: typer.Context, name: NameArg = None,
        docker_server: Annotated[str, typer.Option("--docker-server", help="the registry")] = generators.DOCKER_SERVER,
        docker_username: Annotated[str, typer.Option("--docker-username", help="registry user")] = "",
        docker_password: Annotated[str, typer.Option("--docker-password", help="registry password")] = "",
        docker_email: Annotated[str, typer.Option("--docker-email", help="registry e-mail")] = "",
        from_file: FileOpt = None, append_hash: AppendHashOpt = False, dry_run: DryRunOpt = "none",
        output: OutputOpt = "") -> None:
    """Create a Secret (type kubernetes.io/dockerconfigjson) for a Docker registry: from the flags, or
    from ``--from-file`` (a file without a key name is ``.dockerconfigjson``)."""
    name = one_name(name, "secret docker-registry")
    if not from_file and not (docker_username and docker_password and docker_server):
        raise KubectlError("either --from-file or the combination of --docker-username, --docker-password and "
                           "--docker-server is required")
    check_flags(dry_run, output)
    if from_file:
        entries = gather([], from_file, [], default_key=".dockerconfigjson")
    else:
        entries = [(".dockerconfigjson", generators.docker_config_json(docker_server, docker_username,
                                                                       docker_password, docker_email))]
    obj = secret(name, entries, "kubernetes.io/dockerconfigjson")
    if append_hash:
        generators.append_hash(obj)
    asyncio.run(send(ctx.obj, obj, dry_run, output, failure="failed to create secret "))


@app.command("ingress")
def create_ingress(ctx: typer.Context, name: NameArg = None,
                   rule: Annotated[list[str] | None, typer.Option(
                       "--rule", help="host/path=service:port[,tls[=secret]]; a path ending in * is a Prefix")] = None,
                   class_: Annotated[str, typer.Option("--class", help="the IngressClass")] = "",
                   default_backend: Annotated[str, typer.Option("--default-backend",
                                                                help="service:port for other traffic")] = "",
                   annotation: Annotated[list[str] | None, typer.Option(
                       "--annotation", help="key=[value]; repeatable")] = None,
                   dry_run: DryRunOpt = "none", output: OutputOpt = "") -> None:
    """Create an Ingress with the given name (alias: ing)."""
    name = one_name(name, "ingress")
    obj = generators.ingress(name, rule or [], class_, default_backend, annotation or [])
    asyncio.run(send(ctx.obj, obj, dry_run, output, failure="failed to create ingress: "))


app.command("ing", hidden=True)(create_ingress)


async def _token(opts: GlobalOptions, request: Obj, output: str) -> None:
    async with Session(opts) as s:
        rt = s.registry.by_kind("v1", "ServiceAccount")
        assert rt is not None
        path = resource_path(rt, s.namespace, request["metadata"]["name"], "token")
        try:
            result = await s.client.request("POST", path, body=strip_zero(request))
        except errors.APIError as exc:
            raise KubectlError(f"failed to create token: {exc.message}") from None
    token = ((result or {}).get("status") or {}).get("token")
    if not token:
        raise KubectlError("failed to create token: no token in server response")
    if output == "name":
        print(f"tokenrequest.authentication.k8s.io/{result['metadata']['name']}")
    elif output:
        print_result("", result, output, "none")
    else:
        print(token, end="", flush=True)


@app.command("token")
def create_token(ctx: typer.Context, name: NameArg = None,
                 duration: Annotated[str, typer.Option("--duration", help="the token's lifetime (0s: the "
                                                                          "server's default)")] = "0s",
                 audience: Annotated[list[str] | None, typer.Option(
                     "--audience", help="the token's audience(s); repeatable")] = None,
                 bound_object_kind: Annotated[str, typer.Option("--bound-object-kind",
                                                                help="Node, Pod or Secret")] = "",
                 bound_object_name: Annotated[str, typer.Option("--bound-object-name",
                                                                help="the object the token is bound to")] = "",
                 bound_object_uid: Annotated[str, typer.Option("--bound-object-uid",
                                                               help="its UID (default: the object's)")] = "",
                 output: OutputOpt = "") -> None:
    """Request a service account token (a TokenRequest through serviceaccounts/NAME/token) and print it."""
    seconds = duration_flag(duration, "--duration")
    name = one_name(name, "token")
    check_flags("none", output)
    if seconds < 0:
        raise KubectlError("--duration must be greater than or equal to 0")
    if round(seconds * 1e9) % 1_000_000_000:
        raise KubectlError("--duration cannot be expressed in units less than seconds")
    request = generators.token_request(name, audience or [], int(round(seconds)), bound_object_kind,
                                       bound_object_name, bound_object_uid)
    asyncio.run(_token(ctx.obj, request, output))


@app.command("namespace")
def create_namespace(ctx: typer.Context, name: Annotated[str, typer.Argument(help="the Namespace's name")],
                     dry_run: DryRunOpt = "none", output: OutputOpt = "") -> None:
    """Create a namespace (alias: ns)."""
    obj = new_object("v1", "Namespace", name)
    obj.update(spec={}, status={})
    asyncio.run(send(ctx.obj, obj, dry_run, output))


app.command("ns", hidden=True)(create_namespace)


# ------------------------------------------------------------------ batch: job, cronjob
CommandArg = Annotated[list[str] | None, typer.Argument(metavar="-- [COMMAND] [args...]",
                                                        help="the container's command")]
ImageOpt = Annotated[str, typer.Option("--image", help="the container image")]


def job_object(name: str, image: str, command: list[str]) -> Obj:
    """``kubectl create job NAME --image=IMG -- CMD``: one container named NAME, restartPolicy Never."""
    obj = new_object("batch/v1", "Job", name)
    obj["spec"] = {"template": {"metadata": {"creationTimestamp": None},
                                "spec": {"containers": [container(name, image, command)], "restartPolicy": "Never"}}}
    obj["status"] = {}
    return obj


def container(name: str, image: str, command: list[str] | None = None, port: int | None = None) -> Obj:
    """A generator's container, fields in Go order: ``name, image, command, ports, resources: {}``."""
    spec: Obj = {"name": name, "image": image}
    if command:
        spec["command"] = list(command)
    if port is not None:
        spec["ports"] = [{"containerPort": port}]
    spec["resources"] = {}
    return spec


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
    asyncio.run(send(ctx.obj, obj, dry_run, output, failure="failed to create job: "))


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
    obj = new_object("batch/v1", "CronJob", name)
    obj["spec"] = {"schedule": schedule, "jobTemplate": {
        "metadata": {"name": name, "creationTimestamp": None}, "spec": {"template": {
            "metadata": {"creationTimestamp": None},
            "spec": {"containers": [container(name, image, command)], "restartPolicy": restart}}}}}
    obj["status"] = {}
    asyncio.run(send(ctx.obj, obj, dry_run, output, failure="failed to create cronjob: "))


app.command("cj", hidden=True, context_settings={"allow_interspersed_args": True})(create_cronjob)


# ------------------------------------------------------------------ apps: deployment
def container_name(image: str) -> str:
    """The container name ``create deployment`` gives an image: its last path part without tag or digest
    (``reg:5000/a/nginx:1.25`` → ``nginx``), ``_`` made ``-``."""
    name = image.split("/")[-1].split(":")[0].split("@")[0]
    return name.replace("_", "-")


def deployment_object(name: str, images: list[str], replicas: int, port: int, command: list[str]) -> Obj:
    """``kubectl create deployment NAME --image=... [--replicas] [--port] [-- command]``: label ``app: NAME``
    on the Deployment, its selector and template; one container per image (the port on the first)."""
    labels = {"app": name}
    containers: list[Obj] = []
    used: set[str] = set()
    for image in images:
        cname = container_name(image)
        if cname in used:  # kubectl appends a random suffix; a counter keeps the output stable
            cname = f"{cname}-{len(containers)}"
        used.add(cname)
        containers.append(container(cname, image, command, port if port >= 0 and not containers else None))
    obj = new_object("apps/v1", "Deployment", name, labels)
    obj["spec"] = {"replicas": replicas, "selector": {"matchLabels": dict(labels)},
                   "template": {"metadata": {"creationTimestamp": None, "labels": dict(labels)},
                                "spec": {"containers": containers}},
                   "strategy": {}}
    obj["status"] = {}
    return obj


@app.command("deployment", context_settings={"allow_interspersed_args": True})
def create_deployment(ctx: typer.Context,
                      name: Annotated[str | None, typer.Argument(help="the Deployment's name")] = None,
                      command: CommandArg = None,
                      image: Annotated[list[str] | None, typer.Option("--image", help="image(s); repeatable")] = None,
                      replicas: Annotated[str, typer.Option("-r", "--replicas", help="number of replicas")] = "1",
                      port: Annotated[str, typer.Option("--port", help="the container port to expose")] = "-1",
                      dry_run: DryRunOpt = "none", output: OutputOpt = "") -> None:
    """Create a Deployment with the given name (alias: deploy)."""
    replica_count = int_flag(replicas, "-r, --replicas")
    port_number = int_flag(port, "--port", bits=32)
    if not image:
        raise KubectlError('required flag(s) "image" not set')
    name = one_name(name, "deployment")
    if len(image) > 1 and command:
        raise KubectlError("cannot specify multiple --image options and command")
    obj = deployment_object(name, image, replica_count, port_number, command or [])
    asyncio.run(send(ctx.obj, obj, dry_run, output, failure="failed to create deployment: "))


app.command("deploy", hidden=True, context_settings={"allow_interspersed_args": True})(create_deployment)


def int_flag(text: str, flag: str, bits: int = 32) -> int:
    """An integer flag's value; pflag's error for anything else (``invalid argument "abc" for
    "-r, --replicas" flag: strconv.ParseInt: parsing "abc": invalid syntax``)."""
    try:
        value = int(text, 10)
    except ValueError:
        raise FlagError(f'invalid argument "{text}" for "{flag}" flag: strconv.ParseInt: parsing '
                           f'"{text}": invalid syntax') from None
    if not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
        raise FlagError(f'invalid argument "{text}" for "{flag}" flag: strconv.ParseInt: parsing '
                           f'"{text}": value out of range')
    return value


def one_name(name: str | None, what: str) -> str:
    """The NAME argument, or kubectl's ``exactly one NAME is required, got 0``."""
    if not name:
        raise KubectlError(f"exactly one NAME is required, got 0\nSee 'kubectl create {what} -h' for help and examples")
    return name


# ------------------------------------------------------------------ core: service, serviceaccount
def parse_tcp(spec: str) -> Obj:
    """One ``--tcp=port[:targetPort]`` of ``create service`` as a ServicePort (Go order), named
    ``port-targetPort`` (``:`` made ``-``); KubectlError with Go's parse error for a bad port."""
    port_text, colon, target_text = spec.partition(":")
    if not port_text.isdigit():
        raise KubectlError(f'strconv.ParseUint: parsing "{port_text}": invalid syntax')
    port = int(port_text)
    if port > 65535:
        raise KubectlError(f'strconv.ParseUint: parsing "{port_text}": value out of range')
    target: int | str = port
    if colon:
        target = int(target_text) if target_text.lstrip("-").isdigit() else target_text
    return {"name": spec.replace(":", "-"), "protocol": "TCP", "port": port, "targetPort": target}


def service_object(name: str, service_type: str, tcp: list[str], cluster_ip: str = "", node_port: int = 0,
                   external_name: str = "") -> Obj:
    """``kubectl create service clusterip|nodeport|loadbalancer|externalname NAME``: label and selector
    ``app: NAME``, one TCP port per ``--tcp``."""
    if cluster_ip == "None" and service_type != "ClusterIP":
        raise KubectlError("ClusterIP=None can only be used with ClusterIP service type")
    if cluster_ip != "None" and not tcp and service_type != "ExternalName":
        raise KubectlError("at least one tcp port specifier must be provided")
    if service_type == "ExternalName" and dns1123_subdomain_errors(external_name):
        raise KubectlError(f"invalid service external name {external_name}")
    ports = [parse_tcp(spec) for spec in tcp]
    if node_port:
        for p in ports:
            p["nodePort"] = node_port
    obj = new_object("v1", "Service", name, {"app": name})
    spec: Obj = {}
    if ports:
        spec["ports"] = ports
    spec["selector"] = {"app": name}
    if cluster_ip:
        spec["clusterIP"] = cluster_ip
    spec["type"] = service_type
    if external_name:
        spec["externalName"] = external_name
    obj["spec"] = spec
    obj["status"] = {"loadBalancer": {}}
    return obj


service_app = typer.Typer(name="service", add_completion=False, rich_markup_mode=None, no_args_is_help=True,
                          context_settings={"help_option_names": ["-h", "--help"]},
                          help="Create a Service: clusterip, nodeport, loadbalancer or externalname (alias: svc).")
app.add_typer(service_app)
app.add_typer(service_app, name="svc", hidden=True)

TcpOpt = Annotated[list[str] | None, typer.Option("--tcp", help="port[:targetPort]; repeatable")]
NameArg = Annotated[str | None, typer.Argument(help="the object's name")]


@service_app.command("clusterip")
def create_service_clusterip(ctx: typer.Context, name: NameArg = None, tcp: TcpOpt = None,
                             clusterip: Annotated[str, typer.Option("--clusterip",
                                                                    help="the ClusterIP; None: headless")] = "",
                             dry_run: DryRunOpt = "none", output: OutputOpt = "") -> None:
    """Create a ClusterIP Service."""
    obj = service_object(one_name(name, "service clusterip"), "ClusterIP", tcp or [], cluster_ip=clusterip)
    asyncio.run(send(ctx.obj, obj, dry_run, output, failure="failed to create ClusterIP service: "))


@service_app.command("nodeport")
def create_service_nodeport(ctx: typer.Context, name: NameArg = None, tcp: TcpOpt = None,
                            node_port: Annotated[str, typer.Option("--node-port",
                                                                   help="the port on every node")] = "0",
                            dry_run: DryRunOpt = "none", output: OutputOpt = "") -> None:
    """Create a NodePort Service."""
    port = int_flag(node_port, "--node-port")
    obj = service_object(one_name(name, "service nodeport"), "NodePort", tcp or [], node_port=port)
    asyncio.run(send(ctx.obj, obj, dry_run, output, failure="failed to create NodePort service: "))


@service_app.command("loadbalancer")
def create_service_loadbalancer(ctx: typer.Context, name: NameArg = None, tcp: TcpOpt = None,
                                dry_run: DryRunOpt = "none", output: OutputOpt = "") -> None:
    """Create a LoadBalancer Service."""
    obj = service_object(one_name(name, "service loadbalancer"), "LoadBalancer", tcp or [])
    asyncio.run(send(ctx.obj, obj, dry_run, output, failure="failed to create LoadBalancer service: "))


@service_app.command("externalname")
def create_service_externalname(ctx: typer.Context, name: NameArg = None, tcp: TcpOpt = None,
                                external_name: Annotated[str, typer.Option("--external-name",
                                                                           help="the external DNS name")] = "",
                                dry_run: DryRunOpt = "none", output: OutputOpt = "") -> None:
    """Create an ExternalName Service."""
    if not external_name:
        raise KubectlError('required flag(s) "external-name" not set')
    obj = service_object(one_name(name, "service externalname"), "ExternalName", tcp or [],
                         external_name=external_name)
    asyncio.run(send(ctx.obj, obj, dry_run, output, failure="failed to create ExternalName service: "))


@app.command("serviceaccount")
def create_serviceaccount(ctx: typer.Context, name: NameArg = None,
                          dry_run: DryRunOpt = "none", output: OutputOpt = "") -> None:
    """Create a ServiceAccount with the given name (alias: sa)."""
    obj = new_object("v1", "ServiceAccount", one_name(name, "serviceaccount"))
    asyncio.run(send(ctx.obj, obj, dry_run, output, failure="failed to create serviceaccount: "))


app.command("sa", hidden=True)(create_serviceaccount)


# ------------------------------------------------------------------ rbac: role, clusterrole, bindings
RBAC = "rbac.authorization.k8s.io"
#: The verbs kubectl knows for resources; others are warned about, not refused.
RESOURCE_VERBS = ("*", "get", "delete", "list", "create", "update", "patch", "watch", "proxy",
                  "deletecollection", "use", "bind", "escalate", "impersonate")
#: Verbs that apply only to some resources (kubectl's ``specialVerbs``).
SPECIAL_VERBS = {"use": [("policy", "podsecuritypolicies"), ("extensions", "podsecuritypolicies")],
                 "bind": [(RBAC, "roles"), (RBAC, "clusterroles")],
                 "escalate": [(RBAC, "roles"), (RBAC, "clusterroles")],
                 "impersonate": [("", "users"), ("", "serviceaccounts"), ("", "groups"),
                                 ("authentication.k8s.io", "userextras"), ("authentication.k8s.io", "uids")]}
NON_RESOURCE_VERBS = ("*", "get", "post", "put", "delete", "patch", "head", "options")


def split_list(values: list[str] | None) -> list[str]:
    """A pflag string slice: every value split on ``,`` (``--verb=get,list --verb=watch``)."""
    return [item for value in values or [] for item in value.split(",") if item]


async def policy_rules(s: Session | None, verbs: list[str], resources: list[str], resource_names: list[str],
                       non_resource_urls: Sequence[str] = ()) -> list[Obj]:
    """kubectl's rules for ``create role|clusterrole``: one rule per API group (sorted), resources
    resolved through discovery (short and singular names become plurals), then one rule for the
    non-resource URLs.  KubectlError in kubectl's words for an unknown resource or a special verb on
    a resource it does not apply to."""
    groups: dict[str, list[str]] = {}
    for spec in resources:
        base, slash, sub = spec.partition("/")
        resource, dot, group = base.partition(".")
        if not resource:
            raise KubectlError("resource must be specified if apiGroup/subresource specified")
        plural = resource
        if resource != "*" and s is not None:
            rt = s.registry.resolve(base)
            if rt is None:
                raise KubectlError(f'the server doesn\'t have a resource type "{resource}"')
            plural, group = rt.plural, rt.group
        for verb in verbs:
            allowed = SPECIAL_VERBS.get(verb)
            if allowed is not None and resource != "*" and (group, plural) not in allowed:
                raise KubectlError(f"can not perform '{verb}' on '{plural}' in group '{group}'")
        full = f"{plural}/{sub}" if slash else plural
        if full not in groups.setdefault(group, []):
            groups[group].append(full)
    rules: list[Obj] = []
    for group in sorted(groups):
        rule: Obj = {"verbs": list(verbs), "apiGroups": [group], "resources": groups[group]}
        if resource_names:
            rule["resourceNames"] = list(resource_names)
        rules.append(rule)
    if non_resource_urls:
        rules.append({"verbs": list(verbs), "nonResourceURLs": list(non_resource_urls)})
    return rules


def check_verbs(verbs: list[str]) -> None:
    """``at least one verb must be specified``; a warning for each verb kubectl does not know."""
    if not verbs:
        raise KubectlError("at least one verb must be specified")
    for verb in verbs:
        if verb not in RESOURCE_VERBS:
            warn(f"'{verb}' is not a standard resource verb")


async def _role(opts: GlobalOptions, kind: str, name: str, verbs: list[str], resources: list[str],
                resource_names: list[str], urls: list[str], aggregation: str, dry_run: str, output: str) -> None:
    check_flags(dry_run, output)
    obj = new_object(f"{RBAC}/v1", kind, name)
    if aggregation:
        if any("=" not in pair for pair in aggregation.split(",")):
            raise FlagError(f'invalid argument "{aggregation}" for "--aggregation-rule" flag: malformed pair, '
                            "expect string=string")
        if urls or verbs or resources or resource_names:
            raise KubectlError("aggregation rule must be specified without nonResourceURLs, verbs, resources "
                               "or resourceNames")
        obj["rules"] = None
        obj["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": parse_labels(aggregation)}]}
        await send(opts, obj, dry_run, output)
        return
    check_verbs(verbs)
    if kind == "Role" and not resources:
        raise KubectlError("at least one resource must be specified")
    if not resources and not urls:
        raise KubectlError("one of resource or nonResourceURL must be specified")
    for url in urls:
        if not url.startswith("/"):
            raise KubectlError(f"{url} should start with /")
        if "*" in url[:-1]:
            raise KubectlError(f"{url} does not allow '*' except as the last character")
        for verb in verbs:
            if verb not in NON_RESOURCE_VERBS:
                raise KubectlError(f"invalid verb: '{verb}' for nonResourceURL: '{url}'")
    async with Session(opts) as s:
        obj["rules"] = await policy_rules(s, verbs, resources, resource_names, urls)
    await send(opts, obj, dry_run, output)


VerbOpt = Annotated[list[str] | None, typer.Option("--verb", help="verb(s) the rule allows; repeatable")]
ResourceOpt = Annotated[list[str] | None, typer.Option("--resource", help="resource(s) the rule applies to")]
ResourceNameOpt = Annotated[list[str] | None, typer.Option("--resource-name", help="resource name(s); repeatable")]


@app.command("role")
def create_role(ctx: typer.Context, name: NameArg = None, verb: VerbOpt = None, resource: ResourceOpt = None,
                resource_name: ResourceNameOpt = None, dry_run: DryRunOpt = "none", output: OutputOpt = "") -> None:
    """Create a Role with a single rule per API group."""
    asyncio.run(_role(ctx.obj, "Role", one_name(name, "role"), split_list(verb), split_list(resource),
                      resource_name or [], [], "", dry_run, output))


@app.command("clusterrole")
def create_clusterrole(ctx: typer.Context, name: NameArg = None, verb: VerbOpt = None,
                       resource: ResourceOpt = None, resource_name: ResourceNameOpt = None,
                       non_resource_url: Annotated[list[str] | None, typer.Option(
                           "--non-resource-url", help="non-resource URL(s) the rule applies to")] = None,
                       aggregation_rule: Annotated[str, typer.Option(
                           "--aggregation-rule", help="label selector (a=b) of the aggregated ClusterRoles")] = "",
                       dry_run: DryRunOpt = "none", output: OutputOpt = "") -> None:
    """Create a ClusterRole."""
    asyncio.run(_role(ctx.obj, "ClusterRole", one_name(name, "clusterrole"), split_list(verb),
                      split_list(resource), resource_name or [], split_list(non_resource_url), aggregation_rule,
                      dry_run, output))


def binding_object(kind: str, name: str, role_kind: str, role: str, users: list[str], groups: list[str],
                   service_accounts: list[str]) -> Obj:
    """A RoleBinding or ClusterRoleBinding: subjects users, then groups, then ``namespace:name``
    service accounts (KubectlError ``serviceaccount must be <namespace>:<name>``)."""
    subjects: list[Obj] = [{"kind": "User", "apiGroup": RBAC, "name": u} for u in users]
    subjects += [{"kind": "Group", "apiGroup": RBAC, "name": g} for g in groups]
    for sa in service_accounts:
        parts = sa.split(":")
        if len(parts) != 2 or not parts[0] or not parts[1]:
            raise KubectlError("serviceaccount must be <namespace>:<name>")
        subjects.append({"kind": "ServiceAccount", "name": parts[1], "namespace": parts[0]})
    obj = new_object(f"{RBAC}/v1", kind, name)
    if subjects:
        obj["subjects"] = subjects
    obj["roleRef"] = {"apiGroup": RBAC, "kind": role_kind, "name": role}
    return obj


UserOpt = Annotated[list[str] | None, typer.Option("--user", help="user(s) to bind; repeatable")]
GroupOpt = Annotated[list[str] | None, typer.Option("--group", help="group(s) to bind; repeatable")]
SAOpt = Annotated[list[str] | None, typer.Option("--serviceaccount", help="NAMESPACE:NAME; repeatable")]
ClusterRoleOpt = Annotated[str, typer.Option("--clusterrole", help="the ClusterRole to bind")]


@app.command("rolebinding")
def create_rolebinding(ctx: typer.Context, name: NameArg = None,
                       role: Annotated[str, typer.Option("--role", help="the Role to bind")] = "",
                       clusterrole: ClusterRoleOpt = "", user: UserOpt = None, group: GroupOpt = None,
                       serviceaccount: SAOpt = None, dry_run: DryRunOpt = "none", output: OutputOpt = "") -> None:
    """Create a RoleBinding for a Role or ClusterRole."""
    name = one_name(name, "rolebinding")
    check_flags(dry_run, output)
    if bool(role) == bool(clusterrole):
        raise KubectlError("exactly one of clusterrole or role must be specified")
    obj = binding_object("RoleBinding", name, "Role" if role else "ClusterRole", role or clusterrole,
                         split_list(user), split_list(group), split_list(serviceaccount))
    asyncio.run(send(ctx.obj, obj, dry_run, output, failure="failed to create rolebinding: "))


@app.command("clusterrolebinding")
def create_clusterrolebinding(ctx: typer.Context, name: NameArg = None, clusterrole: ClusterRoleOpt = "",
                              user: UserOpt = None, group: GroupOpt = None, serviceaccount: SAOpt = None,
                              dry_run: DryRunOpt = "none", output: OutputOpt = "") -> None:
    """Create a ClusterRoleBinding for a ClusterRole."""
    name = one_name(name, "clusterrolebinding")
    check_flags(dry_run, output)
    if not clusterrole:
        raise KubectlError('required flag(s) "clusterrole" not set')
    obj = binding_object("ClusterRoleBinding", name, "ClusterRole", clusterrole, split_list(user),
                         split_list(group), split_list(serviceaccount))
    asyncio.run(send(ctx.obj, obj, dry_run, output, failure="failed to create clusterrolebinding: "))
