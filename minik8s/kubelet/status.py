"""Pod status from what runs in Docker: phase, conditions, containerStatuses.

Pure functions (no I/O) following the kubelet's ``generateAPIPodStatus``:

- each container's ``state`` is ``running``, ``terminated`` (reason ``Completed`` for exit 0,
  ``OOMKilled``, else ``Error``) or ``waiting`` (``ContainerCreating``, ``CrashLoopBackOff``,
  ``ErrImagePull``, ...); ``lastState`` is the previous container's termination;
  ``restartCount`` comes from the container's label;
- init containers run one after the other before the app containers (which wait as
  ``PodInitializing``); ``Initialized`` turns True once each exited 0;
- the phase follows Kubernetes' ``getPhase``: Pending while initialising (Failed when an
  init container failed under ``restartPolicy: Never``) or while any container waits for its
  first start, Running while any runs (or a terminated one will be restarted), Succeeded
  when all exited 0 and none restarts, Failed when all stopped and at least one failed
  without being restarted (``restartPolicy: Always`` pods only become terminal when
  they are being deleted);
- conditions ``PodReadyToStartContainers``, ``Initialized``, ``ContainersReady``, ``Ready``
  (which also waits for every ``readinessGates`` condition, set by others, to be True)
  and the scheduler's ``PodScheduled`` keep their ``lastTransitionTime`` while their status
  does not change.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from minik8s.api.base import Obj, now_rfc3339
from minik8s.api.core import PodStatus
from minik8s.kubelet.runtime import ContainerInfo

OWNED_CONDITIONS = ("PodReadyToStartContainers", "Initialized", "ContainersReady", "Ready")
TERMINAL_PHASES = ("Succeeded", "Failed")


@dataclass
class ContainerView:
    """The Docker containers behind one Kubernetes container: the newest and the previous dead one."""

    current: ContainerInfo | None = None
    previous: ContainerInfo | None = None


@dataclass
class PodView:
    """What the kubelet knows about one pod at the end of a sync.

    ``waiting`` maps container name → (reason, message) for containers that wait
    (image problems, back-off, start errors); ``ready`` and ``started`` map container
    name → probe verdicts; ``pod_ip`` is empty until the sandbox has an address.
    """

    containers: dict[str, ContainerView] = field(default_factory=dict)
    init_containers: dict[str, ContainerView] = field(default_factory=dict)
    ephemeral_containers: dict[str, ContainerView] = field(default_factory=dict)
    sandbox: ContainerInfo | None = None
    pod_ip: str = ""
    waiting: dict[str, tuple[str, str]] = field(default_factory=dict)
    ready: dict[str, bool] = field(default_factory=dict)
    started: dict[str, bool] = field(default_factory=dict)
    terminating: bool = False
    deadline_exceeded: bool = False


def terminated_state(info: ContainerInfo) -> Obj:
    """``state.terminated`` of a finished container (reason Completed / OOMKilled / Error / StartError)."""
    if info.oom_killed:
        reason = "OOMKilled"
    elif not info.ever_started and info.error:
        reason = "StartError"
    elif info.exit_code == 0:
        reason = "Completed"
    else:
        reason = "Error"
    out: Obj = {"exitCode": 128 if reason == "StartError" and info.exit_code == 0 else info.exit_code,
                "reason": reason, "containerID": f"docker://{info.id}"}
    if info.error:
        out["message"] = info.error
    out["startedAt"] = info.started_at or info.created
    out["finishedAt"] = info.finished_at or info.started_at or info.created
    return {k: v for k, v in out.items() if v is not None}


def container_status(container: Obj, view: ContainerView, pod_view: PodView) -> Obj:
    """One ``containerStatuses`` item for ``container`` (a spec dict)."""
    name = container["name"]
    cur, prev = view.current, view.previous
    status: Obj = {"name": name, "image": container.get("image") or "", "imageID": "",
                   "ready": False, "restartCount": 0, "started": False, "state": {}, "lastState": {}}
    waiting = pod_view.waiting.get(name)
    if cur is None:
        reason, message = waiting or ("ContainerCreating", "")
        status["state"] = {"waiting": _waiting(reason, message)}
        return status
    status["restartCount"] = cur.restart_count
    status["imageID"] = f"docker://{cur.image_id}" if cur.image_id else ""
    status["containerID"] = f"docker://{cur.id}"
    if cur.running:
        status["state"] = {"running": {"startedAt": cur.started_at or cur.created}}
        if prev is not None:
            status["lastState"] = {"terminated": terminated_state(prev)}
        status["started"] = pod_view.started.get(name, True)
        status["ready"] = bool(pod_view.ready.get(name, False)) and not pod_view.terminating
    elif waiting is not None:
        status["state"] = {"waiting": _waiting(*waiting)}
        status["lastState"] = {"terminated": terminated_state(cur)}
    else:
        status["state"] = {"terminated": terminated_state(cur)}
        if prev is not None:
            status["lastState"] = {"terminated": terminated_state(prev)}
    return status


def _waiting(reason: str, message: str) -> Obj:
    out = {"reason": reason}
    if message:
        out["message"] = message
    return out


def init_container_status(container: Obj, view: ContainerView, pod_view: PodView) -> Obj:
    """One ``initContainerStatuses`` item: ``ready`` once it exited 0."""
    status = container_status(container, view, pod_view)
    term = (status.get("state") or {}).get("terminated") or {}
    status["ready"] = bool(term) and term.get("exitCode") == 0
    status["started"] = "running" in (status.get("state") or {})
    return status


def ephemeral_container_status(container: Obj, view: ContainerView, pod_view: PodView) -> Obj:
    """One ``ephemeralContainerStatuses`` item: the state of a container status (waiting until the
    kubelet created it, then running or terminated, never restarted); never ready."""
    status = container_status(container, view, pod_view)
    status["ready"] = False
    status["restartCount"] = 0
    status["started"] = "running" in (status.get("state") or {})
    return status


def init_done(init_statuses: list[Obj], statuses: list[Obj]) -> bool:
    """Initialized: every init container exited 0, or an app container already ran."""
    if all(s.get("ready") for s in init_statuses):
        return True
    return any("running" in (s.get("state") or {}) or "terminated" in (s.get("state") or {})
               or "terminated" in (s.get("lastState") or {}) for s in statuses)


def init_failed(spec: Obj, init_statuses: list[Obj]) -> bool:
    """An init container failed and, with ``restartPolicy: Never``, will not be retried."""
    if (spec.get("restartPolicy") or "Always") != "Never":
        return False
    for st in init_statuses:
        term = (st.get("state") or {}).get("terminated") or (st.get("lastState") or {}).get("terminated")
        if term and term.get("exitCode", 0) != 0:
            return True
    return False


def pod_phase(spec: Obj, statuses: list[Obj], pod_is_terminal: bool = False,
              init_statuses: list[Obj] | None = None) -> str:
    """Kubernetes' ``getPhase``: app container counts decide, after init containers are done."""
    if init_statuses and not init_done(init_statuses, statuses):
        return "Failed" if init_failed(spec, init_statuses) else "Pending"
    waiting = running = stopped = succeeded = unknown = 0
    for st in statuses:
        state, last = st.get("state") or {}, st.get("lastState") or {}
        if "running" in state:
            running += 1
        elif "terminated" in state:
            stopped += 1
            if (state["terminated"].get("exitCode") or 0) == 0:
                succeeded += 1
        elif "waiting" in state:
            if "terminated" in last:
                stopped += 1
                if (last["terminated"].get("exitCode") or 0) == 0:
                    succeeded += 1
            else:
                waiting += 1
        else:
            unknown += 1
    unknown += max(len(spec.get("containers") or []) - len(statuses), 0)
    policy = spec.get("restartPolicy") or "Always"
    if waiting > 0:
        return "Pending"
    if running > 0 and unknown == 0:
        return "Running"
    if running == 0 and stopped > 0 and unknown == 0:
        if policy == "Always" and not pod_is_terminal:
            return "Running"
        if stopped == succeeded:
            return "Succeeded"
        if policy == "Never" or pod_is_terminal:
            return "Failed"
        return "Running"  # OnFailure: the failed containers are restarted
    return "Pending"


def _condition(old: list[Obj], ctype: str, status: str, reason: str | None = None,
               message: str | None = None, now: str | None = None) -> Obj:
    prev = next((c for c in old if c.get("type") == ctype), None)
    cond: Obj = {"type": ctype, "status": status}
    if reason:
        cond["reason"] = reason
    if message:
        cond["message"] = message
    if prev is not None and prev.get("status") == status and prev.get("lastTransitionTime"):
        cond["lastTransitionTime"] = prev["lastTransitionTime"]
    else:
        cond["lastTransitionTime"] = now or now_rfc3339()
    return cond


def readiness_gate_messages(gates: list[Obj], conditions: list[Obj]) -> list[str]:
    """Why the pod's ``readinessGates`` hold it back (empty: every gate's condition is True), with
    the messages of Kubernetes' ``GeneratePodReadyCondition``."""
    out = []
    for gate in gates:
        ctype = gate.get("conditionType") or ""
        cond = next((c for c in conditions if c.get("type") == ctype), None)
        if cond is None:
            out.append(f'corresponding condition of pod readiness gate "{ctype}" does not exist.')
        elif cond.get("status") != "True":
            out.append(f'the status of pod readiness gate "{ctype}" is not "True", but {cond.get("status")}')
    return out


def pod_conditions(old: list[Obj], statuses: list[Obj], phase: str, sandbox_ready: bool,
                   now: str | None = None, init_statuses: list[Obj] | None = None,
                   readiness_gates: list[Obj] | None = None) -> list[Obj]:
    """The kubelet-owned conditions, plus whatever other conditions ``old`` had (PodScheduled...).
    ``Ready`` is ``ContainersReady`` and, as in Kubernetes, every ``readinessGates`` condition True
    (else False, reason ``ReadinessGatesNotReady``)."""
    out = [c for c in old if c.get("type") not in OWNED_CONDITIONS]
    if not any(c.get("type") == "PodScheduled" for c in out):
        out.insert(0, _condition(old, "PodScheduled", "True", now=now))
    out.append(_condition(old, "PodReadyToStartContainers", "True" if sandbox_ready else "False", now=now))
    if init_statuses and not init_done(init_statuses, statuses):
        pending = [s["name"] for s in init_statuses if not s.get("ready")]
        out.append(_condition(old, "Initialized", "False", "ContainersNotInitialized",
                              f"containers with incomplete status: [{' '.join(pending)}]", now=now))
    else:
        out.append(_condition(old, "Initialized", "True", now=now))
    unready = [s["name"] for s in statuses if not s.get("ready")]
    if phase in TERMINAL_PHASES:
        out.append(_condition(old, "ContainersReady", "False", "PodCompleted", now=now))
        out.append(_condition(old, "Ready", "False", "PodCompleted", now=now))
    elif unready:
        msg = f"containers with unready status: [{' '.join(unready)}]"
        out.append(_condition(old, "ContainersReady", "False", "ContainersNotReady", msg, now=now))
        out.append(_condition(old, "Ready", "False", "ContainersNotReady", msg, now=now))
    else:
        out.append(_condition(old, "ContainersReady", "True", now=now))
        gates = readiness_gate_messages(readiness_gates or [], out)
        if gates:
            out.append(_condition(old, "Ready", "False", "ReadinessGatesNotReady", ", ".join(gates), now=now))
        else:
            out.append(_condition(old, "Ready", "True", now=now))
    order = {"PodReadyToStartContainers": 0, "Initialized": 1, "Ready": 2, "ContainersReady": 3,
             "PodScheduled": 4}
    out.sort(key=lambda c: order.get(c.get("type", ""), 5))
    return out


def compute_pod_status(pod: Obj, view: PodView, host_ip: str, now: str | None = None) -> Obj:
    """The full ``status`` the kubelet reports for ``pod`` (wire form).

    Fields the kubelet does not own (``qosClass``, ``nominatedNodeName``, foreign conditions)
    are kept from the current status.  A terminal phase never changes back.
    """
    spec = pod.get("spec") or {}
    old = copy.deepcopy(pod.get("status") or {})
    now = now or now_rfc3339()
    statuses = [container_status(c, view.containers.get(c["name"], ContainerView()), view)
                for c in spec.get("containers") or []]
    inits = [init_container_status(c, view.init_containers.get(c["name"], ContainerView()), view)
             for c in spec.get("initContainers") or []]
    if inits and not init_done(inits, statuses):
        for st in statuses:
            waiting = (st.get("state") or {}).get("waiting")
            if waiting and waiting.get("reason") == "ContainerCreating":
                waiting["reason"] = "PodInitializing"
    old_phase = old.get("phase")
    if old_phase in TERMINAL_PHASES:
        phase = old_phase
    elif view.deadline_exceeded:
        phase = "Failed"
    else:
        phase = pod_phase(spec, statuses, pod_is_terminal=view.terminating, init_statuses=inits)
    if phase in TERMINAL_PHASES:
        for st in statuses:
            st["ready"] = False
    status = old
    status["phase"] = phase
    status["conditions"] = pod_conditions(old.get("conditions") or [], statuses, phase,
                                          view.sandbox is not None and view.sandbox.running and bool(view.pod_ip),
                                          now=now, init_statuses=inits,
                                          readiness_gates=spec.get("readinessGates") or [])
    status["hostIP"] = host_ip
    pod_ip = view.pod_ip or old.get("podIP") or ""
    if pod_ip:
        status["podIP"] = pod_ip
        status["podIPs"] = [{"ip": pod_ip}]
    status.setdefault("startTime", now)
    status["containerStatuses"] = statuses
    if inits:
        status["initContainerStatuses"] = inits
    ephemeral = [ephemeral_container_status(c, view.ephemeral_containers.get(c["name"], ContainerView()), view)
                 for c in spec.get("ephemeralContainers") or []]
    if ephemeral:
        status["ephemeralContainerStatuses"] = ephemeral
    if view.deadline_exceeded and old_phase not in TERMINAL_PHASES:
        status["reason"] = "DeadlineExceeded"
        status["message"] = "Pod was active on the node longer than the specified deadline"
    if "qosClass" not in status:
        from minik8s.api.core import qos_class
        status["qosClass"] = qos_class(spec)
    return status


def normalise(status: Obj | None) -> Obj:
    """``status`` as the apiserver stores it (through the PodStatus model: nulls and unknown fields dropped)."""
    return PodStatus.model_validate(status or {}).to_dict()


def is_terminal(pod: Obj) -> bool:
    """Whether the pod's phase is Succeeded or Failed (it never runs again)."""
    return (pod.get("status") or {}).get("phase") in TERMINAL_PHASES
