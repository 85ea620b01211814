"""``kubectl describe`` for who may do what: a ServiceAccount, a Role or ClusterRole and a
RoleBinding or ClusterRoleBinding in kubectl's layouts (``pkg/describe``'s ServiceAccountDescriber,
RoleDescriber and RoleBindingDescriber, with ``pkg/apis/rbac``'s rule breakdown and compaction)."""

from __future__ import annotations

from minik8s.api import errors
from minik8s.api.base import Obj
from minik8s.api.columns import NONE
from minik8s.api.resourcetypes import ResourceType
from minik8s.kubectl.describe.shared import fetch_events
from minik8s.kubectl.sections import Writer, meta_of, write_annotations, write_events, write_labels
from minik8s.kubectl.session import Session

TOKEN_TYPE = "kubernetes.io/service-account-token"
#: The three lists of a ServiceAccount, in the (sorted) order kubectl prints them; headers 19 wide.
PULL, MOUNT, TOKENS = "Image pull secrets:", "Mountable secrets: ", "Tokens:" + " " * 12


async def describe_service_account(s: Session, rt: ResourceType, sa: Obj) -> str:
    """A ServiceAccount: image pull secrets and mountable secrets (``(not found)`` when missing), the
    token Secrets naming it, events."""
    meta = meta_of(sa)
    names = {PULL: [str(r.get("name")) for r in sa.get("imagePullSecrets") or []],
             MOUNT: [str(r.get("name")) for r in sa.get("secrets") or []], TOKENS: []}
    try:
        listed = await s.client.list_all(s.resource("secrets"), meta.get("namespace"))
    except errors.APIError:  # kubectl describes the account without its secrets then
        listed = None
    if listed is not None:
        existing = set()
        for secret in listed.get("items") or []:
            smeta = meta_of(secret)
            existing.add(smeta.get("name"))
            notes = smeta.get("annotations") or {}
            owner = (notes.get("kubernetes.io/service-account.name"), notes.get("kubernetes.io/service-account.uid"))
            if secret.get("type") == TOKEN_TYPE and owner == (meta.get("name"), meta.get("uid")):
                names[TOKENS].append(str(smeta.get("name")))
        for header in (PULL, MOUNT):
            names[header] = [n if n in existing else f"{n} (not found)" for n in names[header]]
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}")
    write_labels(w, "Labels", meta.get("labels"))
    write_annotations(w, "Annotations", meta.get("annotations"))
    for header in sorted(names):
        if not names[header]:
            w.write(0, f"{header}\t{NONE}")
        for i, name in enumerate(names[header]):
            w.write(0, f"{header if i == 0 else ' ' * len(header)}\t{name}")
    write_events(w, await fetch_events(s, sa, rt))
    return w.text()


# ------------------------------------------------------------------ roles
Rule = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]
"""A broken-down rule: (verbs, apiGroups, resources, resourceNames, nonResourceURLs)."""


def breakdown(rule: Obj) -> list[Rule]:
    """``rbac.BreakdownRule``: one rule per group x resource (x resource name), and per non-resource URL,
    each with all the rule's verbs."""
    verbs = tuple(rule.get("verbs") or [])
    out: list[Rule] = []
    for group in rule.get("apiGroups") or []:
        for resource in rule.get("resources") or []:
            names = rule.get("resourceNames") or []
            if names:
                out += [(verbs, (group,), (resource,), (name,), ()) for name in names]
            else:
                out.append((verbs, (group,), (resource,), (), ()))
    out += [(verbs, (), (), (), (url,)) for url in rule.get("nonResourceURLs") or []]
    return out


def compact(rules: list[Rule]) -> list[Rule]:
    """``rbac.CompactRules``: simple resource rules (one group, one resource, no names) for the same
    group and resource merge their verbs, in first-seen order; the others stay as they are."""
    merged: dict[tuple[str, str], list[str]] = {}
    out: list[Rule | tuple[str, str]] = []
    for verbs, groups, resources, names, urls in rules:
        if len(groups) == 1 and len(resources) == 1 and not names and not urls:
            key = (groups[0], resources[0])
            if key not in merged:
                merged[key] = []
                out.append(key)
            merged[key] += [v for v in verbs if v not in merged[key]]
        else:
            out.append((verbs, groups, resources, names, urls))
    return [(tuple(merged[item]), (item[0],), (item[1],), (), ()) if len(item) == 2 else item  # type: ignore[misc]
            for item in out]


def _go_list(values: tuple[str, ...]) -> str:
    return f"[{' '.join(values)}]"


def rule_string(rule: Rule) -> str:
    """The generated ``String()`` of an ``rbacv1.PolicyRule``
    (``&PolicyRule{Verbs:[get],APIGroups:[],Resources:[pods],ResourceNames:[],NonResourceURLs:[],}``),
    the key kubectl sorts rules by (``SortableRuleSlice``)."""
    verbs, groups, resources, names, urls = rule
    return (f"&PolicyRule{{Verbs:{_go_list(verbs)},APIGroups:{_go_list(groups)},Resources:{_go_list(resources)},"
            f"ResourceNames:{_go_list(names)},NonResourceURLs:{_go_list(urls)},}}")


def combine_resource_group(resources: tuple[str, ...], groups: tuple[str, ...]) -> str:
    """``pods``, ``deployments.apps``, ``deployments.apps/scale`` (``CombineResourceGroup``)."""
    if not resources:
        return ""
    name, slash, sub = resources[0].partition("/")
    if groups and groups[0]:
        name += "." + groups[0]
    return name + (f"/{sub}" if slash else "")


async def describe_role(s: Session, rt: ResourceType, role: Obj) -> str:
    """A Role or ClusterRole: its rules broken down, compacted and sorted, as a PolicyRule table."""
    meta = meta_of(role)
    rules = compact([r for rule in role.get("rules") or [] for r in breakdown(rule)])
    rules.sort(key=rule_string)
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}")
    write_labels(w, "Labels", meta.get("labels"))
    write_annotations(w, "Annotations", meta.get("annotations"))
    w.write(0, "PolicyRule:")
    w.write(1, "Resources\tNon-Resource URLs\tResource Names\tVerbs")
    w.write(1, "---------\t-----------------\t--------------\t-----")
    for verbs, groups, resources, names, urls in rules:
        w.write(1, f"{combine_resource_group(resources, groups)}\t{_go_list(urls)}\t{_go_list(names)}\t"
                   f"{_go_list(verbs)}")
    return w.text()


async def describe_role_binding(s: Session, rt: ResourceType, binding: Obj) -> str:
    """A RoleBinding or ClusterRoleBinding (kubectl's RoleBindingDescriber and
    ClusterRoleBindingDescriber): name, labels, annotations, the role it grants, the Subjects table
    (Kind Name Namespace); no namespace line and no events, as kubectl."""
    meta, ref = meta_of(binding), binding.get("roleRef") or {}
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}")
    write_labels(w, "Labels", meta.get("labels"))
    write_annotations(w, "Annotations", meta.get("annotations"))
    w.write(0, "Role:")
    w.write(1, f"Kind:\t{ref.get('kind') or ''}")
    w.write(1, f"Name:\t{ref.get('name') or ''}")
    w.write(0, "Subjects:")
    w.write(1, "Kind\tName\tNamespace")
    w.write(1, "----\t----\t---------")
    for subject in binding.get("subjects") or []:
        w.write(1, f"{subject.get('kind') or ''}\t{subject.get('name') or ''}\t{subject.get('namespace') or ''}")
    return w.text()
