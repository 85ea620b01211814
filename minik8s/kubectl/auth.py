"""``kubectl auth``: ``can-i VERB RESOURCE [NAME]`` (a SelfSubjectAccessReview; ``--list`` a
SelfSubjectRulesReview) and ``whoami`` (a SelfSubjectReview), printed as kubectl prints them."""

from __future__ import annotations

import asyncio
import sys
from typing import Annotated, Any

import typer

from minik8s.api import errors
from minik8s.api.kubejsonpath import go_sprint
from minik8s.kubectl import printing, resolve
from minik8s.kubectl.errors import GENERIC_MESSAGES, KubectlError
from minik8s.kubectl.session import GlobalOptions, Session

app = typer.Typer(help="Inspect authorization.", no_args_is_help=True, add_completion=False)

#: the verbs kubectl knows (others draw a warning)
RESOURCE_VERBS = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection", "use", "bind",
                  "impersonate", "*", "approve", "sign", "escalate", "attest")
NON_RESOURCE_VERBS = ("get", "put", "post", "head", "options", "delete", "patch", "*")


async def _post(s: Session, path: str, body: dict[str, Any]) -> dict[str, Any]:
    resp = await s.client.http.request("POST", path, json=body)
    try:
        data: Any = resp.json()
    except ValueError:
        data = resp.text
    if resp.status_code >= 400:
        if not (isinstance(data, dict) and data.get("kind") == "Status"):
            data = {"kind": "Status", "message": GENERIC_MESSAGES.get(resp.status_code, f"HTTP {resp.status_code}")}
        raise errors.from_status(resp.status_code, data)
    return data if isinstance(data, dict) else {}


async def can_i_answer(opts: GlobalOptions, verb: str, target: str, name: str, subresource: str,
                       all_namespaces: bool) -> tuple[bool, str]:
    """(allowed, the line to print) for ``can-i``; warnings go to stderr as kubectl's do."""
    async with Session(opts) as s:
        if target.startswith("/"):
            if verb not in NON_RESOURCE_VERBS:
                print(f"Warning: verb '{verb}' is not a known verb\n", file=sys.stderr)
            attrs: dict[str, Any] = {"nonResourceAttributes": {"path": target, "verb": verb}}
        else:
            if verb not in RESOURCE_VERBS:
                print(f"Warning: verb '{verb}' is not a known verb\n", file=sys.stderr)
            resource, _, sub = target.partition("/")
            group = ""
            try:
                rt = resolve.resource_type(s.registry, resource)
                resource, group = rt.plural, rt.group
            except KubectlError:
                if "." in resource:
                    resource, _, group = resource.partition(".")
                if resource != "*":
                    print(f"Warning: the server doesn't have a resource type '{target.partition('/')[0]}'\n",
                          file=sys.stderr)
            ra = {"namespace": "" if all_namespaces else s.namespace, "verb": verb, "group": group,
                  "resource": resource, "subresource": subresource or sub, "name": name}
            attrs = {"resourceAttributes": {k: v for k, v in ra.items() if v}}
        body = {"kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1", "metadata": {},
                "spec": attrs}
        answer = await _post(s, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", body)
    status = answer.get("status") or {}
    if status.get("allowed"):
        return True, "yes"
    line = "no"
    for key in ("reason", "evaluationError"):
        if status.get(key):
            line += f" - {status[key]}"
    return False, line


@app.command("can-i")
def can_i(
    ctx: typer.Context,
    args: Annotated[list[str] | None, typer.Argument(metavar="VERB [TYPE | TYPE/NAME | NONRESOURCEURL]")] = None,
    all_namespaces: Annotated[bool, typer.Option("-A", "--all-namespaces", help="in every namespace")] = False,
    subresource: Annotated[str, typer.Option("--subresource", help="the subresource asked about")] = "",
    quiet: Annotated[bool, typer.Option("-q", "--quiet", help="only the exit code")] = False,
    list_: Annotated[bool, typer.Option("--list", help="every action allowed in the namespace")] = False,
) -> None:
    """Check whether an action is allowed."""
    words = list(args or [])
    if list_:
        if words:
            raise KubectlError("list option must be specified with no arguments")
        code = asyncio.run(_list(ctx.obj, all_namespaces))
        raise typer.Exit(code)
    if len(words) < 2:
        raise KubectlError("you must specify two arguments: verb resource or verb resource/resourceName.\n"
                           "See 'kubectl auth can-i -h' for help and examples")
    if len(words) > 3:
        raise KubectlError(f"expected at most three arguments: verb resource resourceName. Got: {words}")
    verb, target = words[0], words[1]
    name = words[2] if len(words) == 3 else ""
    if "/" in target and not target.startswith("/") and not name:
        target, _, name = target.partition("/")
    allowed, line = asyncio.run(can_i_answer(ctx.obj, verb, target, name, subresource, all_namespaces))
    if not quiet:
        print(line)
    if not allowed:
        raise typer.Exit(1)


async def _list(opts: GlobalOptions, all_namespaces: bool) -> int:
    """``can-i --list``: the SelfSubjectRulesReview's rules as kubectl's table."""
    async with Session(opts, discover=False) as s:
        body = {"kind": "SelfSubjectRulesReview", "apiVersion": "authorization.k8s.io/v1", "metadata": {},
                "spec": {"namespace": "" if all_namespaces else s.namespace}}
        answer = await _post(s, "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", body)
    status = answer.get("status") or {}
    rows = [["Resources", "Non-Resource URLs", "Resource Names", "Verbs"]]
    for rule in status.get("resourceRules") or []:
        groups = rule.get("apiGroups") or [""]
        resources = [r if not g else f"{r}.{g}" for g in groups for r in rule.get("resources") or []]
        rows.append([", ".join(resources) if resources else "", "[]", go_sprint(rule.get("resourceNames") or []),
                     go_sprint(rule.get("verbs") or [])])
    for rule in status.get("nonResourceRules") or []:
        rows.append(["", go_sprint(rule.get("nonResourceURLs") or []), "[]", go_sprint(rule.get("verbs") or [])])
    printing.write_lines(printing.tabwrite(rows, minwidth=6, padding=3))
    return 0


@app.command("whoami")
def whoami(
    ctx: typer.Context,
    output: Annotated[str, typer.Option("-o", "--output", help="json or yaml")] = "",
) -> None:
    """Check self subject attributes."""
    if output not in ("", "json", "yaml"):
        raise KubectlError(f'unable to match a printer suitable for the output format "{output}", '
                           "allowed formats are: json,yaml")
    review = asyncio.run(_whoami(ctx.obj))
    if output == "json":
        print(printing.to_json(review, sort_keys=False))
        return
    if output == "yaml":
        sys.stdout.write(printing.to_yaml(review))
        return
    info = (review.get("status") or {}).get("userInfo") or {}
    rows = [["ATTRIBUTE", "VALUE"], ["Username", str(info.get("username") or "")]]
    if info.get("uid"):
        rows.append(["UID", str(info["uid"])])
    if info.get("groups"):
        rows.append(["Groups", go_sprint(list(info["groups"]))])
    for key in sorted(info.get("extra") or {}):
        rows.append([f"Extra: {key}", go_sprint(list(info["extra"][key]))])
    printing.write_lines(printing.tabwrite(rows, minwidth=6, padding=3))


async def _whoami(opts: GlobalOptions) -> dict[str, Any]:
    async with Session(opts, discover=False) as s:
        body = {"kind": "SelfSubjectReview", "apiVersion": "authentication.k8s.io/v1", "metadata": {}}
        return await _post(s, "/apis/authentication.k8s.io/v1/selfsubjectreviews", body)
