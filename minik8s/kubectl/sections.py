"""The building blocks of ``kubectl describe`` output (kubectl's ``pkg/describe``): the
:class:`Writer` and the sections several descriptions share — labels, annotations, events,
containers, volumes, tolerations, pod templates (also used by ``kubectl rollout history``)."""

from __future__ import annotations

from typing import Any

from minik8s.api import columns as cols
from minik8s.api.base import Obj
from minik8s.api.columns import NONE, since
from minik8s.kubectl import printing
from minik8s.kubectl.manifests import LAST_APPLIED
from minik8s.kubectl.printing import describe_time


class Writer:
    """kubectl's PrefixWriter over a tabwriter: ``write(level, "Key:\\tvalue")`` lines, 2 spaces a level
    (``aligned=False``: a PrefixWriter straight into a buffer, the tabs left as they are)."""

    def __init__(self, aligned: bool = True) -> None:
        self.done: list[str] = []
        self.pending: list[list[str]] = []
        self.aligned = aligned

    def write(self, level: int, text: str = "") -> None:
        """Add one line at indentation ``level`` (cells separated by tabs)."""
        self.pending.append(("  " * level + text).split("\t"))

    def flush(self) -> None:
        """Align what was written so far (later lines start new column blocks)."""
        if self.aligned:
            self.done += printing.tabwrite(self.pending, minwidth=0, padding=2, trim=False)
        else:
            self.done += ["\t".join(cells) for cells in self.pending]
        self.pending = []

    def verbatim(self, text: str) -> None:
        """Add ``text``'s lines as they are (tabs included), after what was written so far."""
        self.flush()
        self.done += text.split("\n")

    def text(self) -> str:
        """The finished description."""
        self.flush()
        return "\n".join(self.done) + "\n"


def meta_of(obj: Obj) -> Obj:
    """The object's ``metadata`` (empty when missing)."""
    return obj.get("metadata") or {}


def text_of(value: Any) -> str:
    """A field value as kubectl prints it: ``true``/``false`` for booleans, empty for None."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def write_labels(w: Writer, title: str, labels: dict[str, Any] | None, level: int = 0) -> None:
    """``Labels:  a=1`` then one ``k=v`` per line (sorted), or ``<none>``."""
    if not labels:
        w.write(level, f"{title}:\t{NONE}")
        return
    for i, key in enumerate(sorted(labels)):
        w.write(level, f"{title + ':' if i == 0 else ''}\t{key}={labels[key]}")


#: kubectl's ``maxAnnotationLen``: a longer ``key: value`` is written as a block, its lines cut.
MAX_ANNOTATION_LEN = 140


def write_annotations(w: Writer, title: str, annotations: dict[str, Any] | None) -> None:
    """``Annotations:  k: v`` lines sorted by key, kubectl's last-applied-configuration left out; a
    value with several lines, or too long for one (:data:`MAX_ANNOTATION_LEN`), as ``k:`` then its
    lines indented by two, each cut at 138 characters with ``...``."""
    shown = {k: v for k, v in (annotations or {}).items() if k != LAST_APPLIED}
    if not shown:
        w.write(0, f"{title}:\t{NONE}")
        return
    for i, key in enumerate(sorted(shown)):
        label = f"{title}:" if i == 0 else ""
        value = str(shown[key]).removesuffix("\n")
        if len(key) + len(value) + 2 > MAX_ANNOTATION_LEN or "\n" in value:
            # kubectl 1.32: the key alone, then each line indented, cut at 138 characters
            w.write(0, f"{label}\t{key}:")
            for line in value.split("\n"):
                cut = MAX_ANNOTATION_LEN - 2
                w.write(0, f"\t  {line[:cut] + '...' if len(line) > cut else line}")
        else:
            w.write(0, f"{label}\t{key}: {value}")


def header(meta: Obj) -> Writer:
    """A Writer that starts with kubectl's Name, Namespace, Labels and Annotations lines."""
    w = Writer()
    w.write(0, f"Name:\t{meta.get('name', '')}")
    w.write(0, f"Namespace:\t{meta.get('namespace', '')}")
    write_labels(w, "Labels", meta.get("labels"))
    write_annotations(w, "Annotations", meta.get("annotations"))
    return w


def write_events(w: Writer, events: list[Obj] | None) -> None:
    """The Events table (Type Reason Age From Message), or ``Events:  <none>``."""
    if events is None:
        return
    if not events:
        w.write(0, f"Events:\t{NONE}")
        return
    w.flush()
    w.write(0, "Events:")
    w.write(1, "Type\tReason\tAge\tFrom\tMessage")
    w.write(1, "----\t------\t----\t----\t-------")
    at = printing.now()
    for e in sorted(events, key=cols.event_sort_key):
        first = since(e.get("firstTimestamp") or e.get("eventTime") or meta_of(e).get("creationTimestamp"), at)
        count = int(e.get("count") or (e.get("series") or {}).get("count") or 1)
        interval = first
        if count > 1:
            last = e.get("lastTimestamp") or (e.get("series") or {}).get("lastObservedTime")
            interval = f"{since(last, at)} (x{count} over {first})"
        source = (e.get("source") or {}).get("component") or e.get("reportingComponent") or \
            e.get("reportingController") or ""
        w.write(1, f"{e.get('type', '')}\t{e.get('reason', '')}\t{interval}\t{source}\t"
                   f"{str(e.get('message') or '').strip()}")


# ------------------------------------------------------------------ pods and pod templates
def _ports(ports: list[Obj], key: str) -> str:
    parts = [f"{p.get(key, 0)}/{p.get('protocol') or 'TCP'}" for p in ports]
    return ", ".join(parts) if parts else NONE


def describe_probe(probe: Obj) -> str:
    """``http-get http://:8080/healthz delay=0s timeout=1s period=10s #success=1 #failure=3``."""
    attrs = (f"delay={probe.get('initialDelaySeconds', 0)}s timeout={probe.get('timeoutSeconds', 1)}s "
             f"period={probe.get('periodSeconds', 10)}s #success={probe.get('successThreshold', 1)} "
             f"#failure={probe.get('failureThreshold', 3)}")
    if probe.get("exec") is not None:
        return f"exec [{' '.join(str(c) for c in probe['exec'].get('command') or [])}] {attrs}"
    if probe.get("httpGet") is not None:
        get = probe["httpGet"]
        scheme = str(get.get("scheme") or "HTTP").lower()
        host = get.get("host") or ""
        port = get.get("port")
        return f"http-get {scheme}://{host}{':' + str(port) if port is not None else ''}{get.get('path', '/')} {attrs}"
    if probe.get("tcpSocket") is not None:
        tcp = probe["tcpSocket"]
        return f"tcp-socket {tcp.get('host') or ''}:{tcp.get('port')} {attrs}"
    if probe.get("grpc") is not None:
        return f"grpc <pod>:{probe['grpc'].get('port')} {probe['grpc'].get('service') or ''} {attrs}"
    return f"unknown {attrs}"


def _state(w: Writer, title: str, state: Obj) -> None:
    if state.get("running") is not None:
        w.write(2, f"{title}:\tRunning")
        w.write(3, f"Started:\t{describe_time(state['running'].get('startedAt'))}")
    elif state.get("waiting") is not None:
        w.write(2, f"{title}:\tWaiting")
        if state["waiting"].get("reason"):
            w.write(3, f"Reason:\t{state['waiting']['reason']}")
        if state["waiting"].get("message"):
            w.write(3, f"Message:\t{state['waiting']['message']}")
    elif state.get("terminated") is not None:
        term = state["terminated"]
        w.write(2, f"{title}:\tTerminated")
        if term.get("reason"):
            w.write(3, f"Reason:\t{term['reason']}")
        if term.get("message"):
            w.write(3, f"Message:\t{term['message']}")
        w.write(3, f"Exit Code:\t{term.get('exitCode', 0)}")
        if term.get("signal"):
            w.write(3, f"Signal:\t{term['signal']}")
        w.write(3, f"Started:\t{describe_time(term.get('startedAt'))}")
        w.write(3, f"Finished:\t{describe_time(term.get('finishedAt'))}")
    else:
        w.write(2, f"{title}:\tWaiting")


def field_value(pod: Obj | None, path: str) -> str:
    """A pod's field as kubectl resolves a ``fieldRef`` for ``describe``: only ``metadata.name`` and
    ``metadata.namespace`` (kubectl's scheme converts no other field label); ``""`` otherwise or
    without a pod."""
    if pod is None or path not in ("metadata.name", "metadata.namespace"):
        return ""
    return str(meta_of(pod).get(path.split(".")[1]) or "")


def _env_line(e: Obj, pod: Obj | None = None) -> str:
    src = e.get("valueFrom") or {}
    if src.get("fieldRef"):
        ref = src["fieldRef"]
        value = field_value(pod, str(ref.get("fieldPath") or ""))
        return f"{e['name']}:\t{value} ({ref.get('apiVersion', '')}:{ref.get('fieldPath', '')})"
    if src.get("resourceFieldRef"):
        return f"{e['name']}:\t ({src['resourceFieldRef'].get('resource', '')})"
    if src.get("secretKeyRef"):
        ref = src["secretKeyRef"]
        return (f"{e['name']}:\t<set to the key '{ref.get('key')}' in secret '{ref.get('name')}'>\t"
                f"Optional: {text_of(bool(ref.get('optional')))}")
    if src.get("configMapKeyRef"):
        ref = src["configMapKeyRef"]
        return (f"{e['name']}:\t<set to the key '{ref.get('key')}' of config map '{ref.get('name')}'>\t"
                f"Optional: {text_of(bool(ref.get('optional')))}")
    return f"{e['name']}:\t"


def write_containers(w: Writer, title: str, containers: list[Obj], statuses: list[Obj], space: str = "",
                     pod: Obj | None = None) -> None:
    """kubectl's container section: image, ports, command, state, resources, probes, env, mounts.

    ``space`` prefixes the title (a pod template's section is indented by two spaces and,
    as in kubectl's ``describeContainers``, its container names by one more); ``pod``, when
    describing a pod, resolves ``fieldRef`` environment values (a template shows them empty).
    """
    by_name = {s.get("name"): s for s in statuses}
    w.write(0, f"{space}{title}:")
    for c in containers:
        st = by_name.get(c.get("name"))
        w.write(1, f"{' ' if space else ''}{c.get('name')}:")
        if st is not None:
            w.write(2, f"Container ID:\t{st.get('containerID') or ''}")
        w.write(2, f"Image:\t{c.get('image') or ''}")
        if st is not None:
            w.write(2, f"Image ID:\t{st.get('imageID') or ''}")
        ports = c.get("ports") or []
        port_text = _ports(ports, "containerPort")
        w.write(2, f"{'Ports' if ',' in port_text else 'Port'}:\t{port_text}")
        host_text = _ports(ports, "hostPort")
        w.write(2, f"{'Host Ports' if ',' in host_text else 'Host Port'}:\t{host_text}")
        for key, label in (("command", "Command"), ("args", "Args")):
            if c.get(key):
                w.write(2, f"{label}:")
                for item in c[key]:
                    for line in str(item).split("\n"):
                        w.write(3, line)
        if st is not None:
            _state(w, "State", st.get("state") or {})
            last = st.get("lastState") or {}
            if last.get("terminated"):
                _state(w, "Last State", last)
            w.write(2, f"Ready:\t{'True' if st.get('ready') else 'False'}")  # kubectl's printBool
            w.write(2, f"Restart Count:\t{st.get('restartCount', 0)}")
        resources = c.get("resources") or {}
        for key, label in (("limits", "Limits"), ("requests", "Requests")):
            if resources.get(key):
                w.write(2, f"{label}:")
                for name in sorted(resources[key]):
                    w.write(3, f"{name}:\t{resources[key][name]}")
        for key, label in (("livenessProbe", "Liveness"), ("readinessProbe", "Readiness"),
                           ("startupProbe", "Startup")):
            if c.get(key):
                w.write(2, f"{label}:\t{describe_probe(c[key])}")
        if c.get("envFrom"):
            w.write(2, "Environment Variables from:")
        for item in c.get("envFrom") or []:
            source, ref = ("ConfigMap", item.get("configMapRef")) if item.get("configMapRef") else \
                ("Secret", item.get("secretRef") or {})
            prefixed = f" with prefix '{item['prefix']}'" if item.get("prefix") else ""
            w.write(3, f"{ref.get('name', '')}\t{source}{prefixed}\tOptional: {text_of(bool(ref.get('optional')))}")
        env = c.get("env") or []
        w.write(2, "Environment:" + ("" if env else f"\t{NONE}"))
        for e in env:
            if e.get("valueFrom"):
                w.write(3, _env_line(e, pod))
                continue
            for i, line in enumerate(str(e.get("value") or "").split("\n")):
                w.write(3, f"{e.get('name')}:\t{line}" if i == 0 else f"\t{line}")
        mounts = sorted(c.get("volumeMounts") or [], key=lambda m: str(m.get("mountPath")))
        w.write(2, "Mounts:" + ("" if mounts else f"\t{NONE}"))
        for m in mounts:
            flags = ["ro" if m.get("readOnly") else "rw"]
            if m.get("subPath"):
                flags.append(f'path="{m["subPath"]}"')
            w.write(3, f"{m.get('mountPath')} from {m.get('name')} ({','.join(flags)})")


def write_volumes(w: Writer, volumes: list[Obj], space: str = "") -> None:
    """The Volumes section (HostPath, EmptyDir, ConfigMap, Secret, PVC...); ``space`` as in write_containers."""
    if not volumes:
        w.write(0, f"{space}Volumes:\t{NONE}")
        return
    w.write(0, f"{space}Volumes:")
    for v in volumes:
        w.write(1, f"{' ' if space else ''}{v.get('name')}:")
        if v.get("hostPath") is not None:
            w.write(2, "Type:\tHostPath (bare host directory volume)")
            w.write(2, f"Path:\t{v['hostPath'].get('path', '')}")
            w.write(2, f"HostPathType:\t{v['hostPath'].get('type', NONE)}")
        elif v.get("emptyDir") is not None:
            w.write(2, "Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)")
            w.write(2, f"Medium:\t{v['emptyDir'].get('medium', '')}")
            w.write(2, f"SizeLimit:\t{v['emptyDir'].get('sizeLimit') or '<unset>'}")
        elif v.get("configMap") is not None:
            w.write(2, "Type:\tConfigMap (a volume populated by a ConfigMap)")
            w.write(2, f"Name:\t{v['configMap'].get('name', '')}")
            w.write(2, f"Optional:\t{text_of(bool(v['configMap'].get('optional')))}")
        elif v.get("secret") is not None:
            w.write(2, "Type:\tSecret (a volume populated by a Secret)")
            w.write(2, f"SecretName:\t{v['secret'].get('secretName', '')}")
            w.write(2, f"Optional:\t{text_of(bool(v['secret'].get('optional')))}")
        elif v.get("persistentVolumeClaim") is not None:
            w.write(2, "Type:\tPersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)")
            w.write(2, f"ClaimName:\t{v['persistentVolumeClaim'].get('claimName', '')}")
            w.write(2, f"ReadOnly:\t{text_of(bool(v['persistentVolumeClaim'].get('readOnly')))}")
        else:
            others = [k for k in v if k != "name"]
            w.write(2, f"Type:\t{others[0] if others else '<unknown>'}")


def write_tolerations(w: Writer, title: str, tolerations: list[Obj]) -> None:
    """``key=value:Effect op=Exists for 300s`` per line sorted by key, or ``<none>``."""
    if not tolerations:
        w.write(0, f"{title}:\t{NONE}")
        return
    for i, t in enumerate(sorted(tolerations, key=lambda t: str(t.get("key") or ""))):
        text = str(t.get("key") or "")
        if t.get("value"):
            text += f"={t['value']}"
        if t.get("effect"):
            text += f":{t['effect']}"
        if t.get("operator") == "Exists" and not t.get("value"):
            text += " op=Exists" if t.get("key") or t.get("effect") else "op=Exists"
        if t.get("tolerationSeconds") is not None:
            text += f" for {t['tolerationSeconds']}s"
        w.write(0, f"{title + ':' if i == 0 else ''}\t{text}")


def write_pod_template(w: Writer, template: Obj | None) -> None:
    """kubectl's ``DescribePodTemplate``: ``Pod Template:`` then labels, annotations, containers, volumes,
    node selectors and tolerations."""
    w.write(0, "Pod Template:")
    if template is None:
        w.write(1, "<unset>")
        return
    meta, spec = meta_of(template), template.get("spec") or {}
    write_labels(w, "  Labels", meta.get("labels"))
    if meta.get("annotations"):
        write_annotations(w, "  Annotations", meta["annotations"])
    if spec.get("serviceAccountName"):
        w.write(1, f"Service Account:\t{spec['serviceAccountName']}")
    if spec.get("initContainers"):
        write_containers(w, "Init Containers", spec["initContainers"], [], space="  ")
    write_containers(w, "Containers", spec.get("containers") or [], [], space="  ")
    write_volumes(w, spec.get("volumes") or [], space="  ")
    if spec.get("priorityClassName"):
        w.write(1, f"Priority Class Name:\t{spec['priorityClassName']}")
    write_labels(w, "  Node-Selectors", spec.get("nodeSelector"))
    write_tolerations(w, "  Tolerations", spec.get("tolerations") or [])
