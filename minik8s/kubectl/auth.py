"""``kubectl auth``: ``can-i VERB RESOURCE [NAME]`` (a SelfSubjectAccessReview; ``--list`` a
SelfSubjectRulesReview) and ``whoami`` (a SelfSubjectReview), printed as kubectl prints them."""

from __future__ import annotations

import asyncio
import json
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
    resp = await s.client.send("POST", path, content=json.dumps(body).encode(),
                               headers={"Content-Type": "application/json"})
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
    no_headers: Annotated[bool, typer.Option("--no-headers", help="--list without the header row")] = False,
) -> None:
    """Check whether an action is allowed."""
    words = list(args or [])
    if list_:
        if words:
            raise KubectlError("list option must be specified with no arguments")
        if quiet or all_namespaces or subresource:
            raise KubectlError("list option can't be specified with neither quiet, all-namespaces nor subresource "
                               "options")
        code = asyncio.run(_list(ctx.obj, all_namespaces, no_headers))
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


async def _list(opts: GlobalOptions, all_namespaces: bool, no_headers: bool) -> int:
    """``can-i --list``: the SelfSubjectRulesReview's rules as kubectl prints them -- each rule
    broken down to one resource (or URL) per row, the rows of one resource merged, sorted."""
    async with Session(opts, discover=False) as s:
        body = {"kind": "SelfSubjectRulesReview", "apiVersion": "authorization.k8s.io/v1", "metadata": {},
                "spec": {"namespace": "" if all_namespaces else s.namespace}}
        answer = await _post(s, "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", body)
    status = answer.get("status") or {}
    if status.get("incomplete"):
        print(f"Warning: the list may be incomplete: {status.get('evaluationError') or ''}", file=sys.stderr)
    rules = [{"verbs": r.get("verbs") or [], "apiGroups": r.get("apiGroups") or [],
              "resources": r.get("resources") or [], "resourceNames": r.get("resourceNames") or []}
             for r in status.get("resourceRules") or []]
    rules += [{"verbs": r.get("verbs") or [], "nonResourceURLs": r.get("nonResourceURLs") or []}
              for r in status.get("nonResourceRules") or []]
    rows = [] if no_headers else [["Resources", "Non-Resource URLs", "Resource Names", "Verbs"]]
    for rule in sorted(_compact([part for each in rules for part in _breakdown(each)]), key=_rule_string):
        rows.append([_resource_group(rule.get("resources") or [], rule.get("apiGroups") or []),
                     go_sprint(rule.get("nonResourceURLs") or []), go_sprint(rule.get("resourceNames") or []),
                     go_sprint(rule.get("verbs") or [])])
    printing.write_lines(printing.tabwrite(rows, minwidth=6, padding=3))
    return 0


def _breakdown(rule: dict[str, Any]) -> list[dict[str, Any]]:
    """A rule as rules of one group and resource (and name) or of one URL each (RBAC's
    ``BreakdownRule``)."""
    out = []
    for group in rule.get("apiGroups") or []:
        for resource in rule.get("resources") or []:
            names = rule.get("resourceNames") or []
            out += [{"apiGroups": [group], "resources": [resource], "verbs": rule["verbs"],
                     **({"resourceNames": [name]} if name is not None else {})} for name in (names or [None])]
    out += [{"nonResourceURLs": [url], "verbs": rule["verbs"]} for url in rule.get("nonResourceURLs") or []]
    return out


def _compact(rules: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rules of the same single group, resource and name merged into one with both verb lists
    (RBAC's ``CompactRules``; verbs are appended, not deduplicated, as there)."""
    out: list[dict[str, Any]] = []
    merged: dict[tuple[str, str, str | None], dict[str, Any]] = {}
    for rule in rules:
        names = rule.get("resourceNames") or []
        if rule.get("nonResourceURLs") or len(names) > 1:
            out.append(rule)
            continue
        key = (rule["apiGroups"][0], rule["resources"][0], names[0] if names else None)
        if key in merged:
            merged[key]["verbs"] = [*merged[key]["verbs"], *rule["verbs"]]
        else:
            merged[key] = dict(rule)
    return out + list(merged.values())


def _rule_string(rule: dict[str, Any]) -> str:
    """``rbac/v1.PolicyRule.String()`` (Go's generated one), what kubectl sorts the rows by: verbs
    first, each list as Go's ``%v`` writes it."""
    return "&PolicyRule{" + "".join(f"{label}:{go_sprint(rule.get(key) or [])}," for key, label in (
        ("verbs", "Verbs"), ("apiGroups", "APIGroups"), ("resources", "Resources"),
        ("resourceNames", "ResourceNames"), ("nonResourceURLs", "NonResourceURLs"))) + "}"


def _resource_group(resources: list[str], groups: list[str]) -> str:
    """``pods``, ``deployments.apps``, ``deployments.apps/scale`` (kubectl's ``CombineResourceGroup``)."""
    if not resources:
        return ""
    resource, slash, sub = resources[0].partition("/")
    combined = f"{resource}.{groups[0]}" if groups and groups[0] else resource
    return f"{combined}/{sub}" if slash else combined


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
