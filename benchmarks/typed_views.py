"""What reading an object costs a controller: typed views versus pydantic validation.

Times, in microseconds per object (best of 5 runs), on a typical Pod and Job as an informer
cache holds them (defaulted by the apiserver, a managedFields entry, one container):

* ``MetaView.of``, ``JobView.of``, ``DaemonSetView.of``: the typed read views of
  ``minik8s/api`` (frozen slotted dataclasses, what controllers build at the top of a sync);
* ``Pod.model_validate``, ``Job.model_validate``, ``JobSpec.model_validate``: the pydantic models
  that validate requests, as the baseline;
* one ``(job.get("spec") or {}).get("completions")`` chain, for scale.

No processes, no I/O.  Prints one JSON document.

    python -m benchmarks.typed_views
"""

from __future__ import annotations

import json
import timeit
from collections.abc import Callable
from typing import Any

from minik8s.api.apps import DaemonSet, DaemonSetView
from minik8s.api.batch import Job, JobSpec, JobView
from minik8s.api.core import Pod
from minik8s.api.meta import MetaView

CONTAINER = {"name": "app", "image": "busybox:1.36", "command": ["sh", "-c", "echo hi; sleep 1"],
             "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
             "resources": {"requests": {"cpu": "100m", "memory": "64Mi"},
                           "limits": {"cpu": "200m", "memory": "128Mi"}},
             "ports": [{"containerPort": 8080, "protocol": "TCP"}], "imagePullPolicy": "IfNotPresent",
             "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
             "volumeMounts": [{"name": "kube-api-access", "readOnly": True,
                               "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]}
POD_SPEC = {"containers": [CONTAINER], "restartPolicy": "Never", "dnsPolicy": "ClusterFirst",
            "schedulerName": "default-scheduler", "serviceAccountName": "default",
            "terminationGracePeriodSeconds": 30, "nodeName": "node-1",
            "volumes": [{"name": "kube-api-access", "projected": {"sources": [
                {"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}}]}}],
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                             "tolerationSeconds": 300}]}
META = {"name": "pi-abcde", "namespace": "default", "uid": "u2", "resourceVersion": "1234",
        "creationTimestamp": "2026-01-01T00:00:00Z", "generateName": "pi-",
        "labels": {"batch.kubernetes.io/job-name": "pi", "batch.kubernetes.io/controller-uid": "u1"},
        "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "pi", "uid": "u1", "controller": True,
                             "blockOwnerDeletion": True}],
        "managedFields": [{"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1",
                           "time": "2026-01-01T00:00:00Z", "fieldsType": "FieldsV1",
                           "fieldsV1": {"f:metadata": {"f:labels": {}}}}]}
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": META, "spec": POD_SPEC,
       "status": {"phase": "Running", "podIP": "10.0.0.5", "hostIP": "192.168.1.2",
                  "startTime": "2026-01-01T00:00:01Z",
                  "conditions": [{"type": t, "status": "True", "lastTransitionTime": "2026-01-01T00:00:02Z"}
                                 for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")],
                  "containerStatuses": [{"name": "app", "ready": True, "restartCount": 0, "image": "busybox:1.36",
                                         "imageID": "sha256:x", "containerID": "docker://abc", "started": True,
                                         "state": {"running": {"startedAt": "2026-01-01T00:00:02Z"}}}]}}
TEMPLATE = {"metadata": {"labels": {"app": "pi"}}, "spec": POD_SPEC}
JOB = {"apiVersion": "batch/v1", "kind": "Job",
       "metadata": {**META, "name": "pi", "uid": "u1", "labels": {"app": "pi"}, "ownerReferences": None},
       "spec": {"parallelism": 2, "completions": 5, "backoffLimit": 6, "completionMode": "NonIndexed",
                "suspend": False, "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "u1"}},
                "template": TEMPLATE},
       "status": {"active": 2, "ready": 1, "succeeded": 1, "failed": 0, "startTime": "2026-01-01T00:00:00Z",
                  "uncountedTerminatedPods": {},
                  "conditions": [{"type": "Suspended", "status": "False", "reason": "JobResumed",
                                  "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}
DAEMONSET = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {**META, "name": "agent", "generation": 2},
             "spec": {"selector": {"matchLabels": {"app": "pi"}}, "template": TEMPLATE,
                      "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1,
                                                                                    "maxSurge": 0}}},
             "status": {"desiredNumberScheduled": 3, "currentNumberScheduled": 3, "numberReady": 3,
                        "numberMisscheduled": 0}}


def per_call_us(fn: Callable[[], Any], number: int) -> float:
    """Best of 5 runs of ``number`` calls, in microseconds per call."""
    return round(min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6, 2)


def main() -> None:
    figures = {
        "MetaView.of(pod)": per_call_us(lambda: MetaView.of(POD), 50_000),
        "JobView.of(job)": per_call_us(lambda: JobView.of(JOB), 50_000),
        "DaemonSetView.of(daemonset)": per_call_us(lambda: DaemonSetView.of(DAEMONSET), 50_000),
        "Pod.model_validate(pod)": per_call_us(lambda: Pod.model_validate(POD), 2_000),
        "Job.model_validate(job)": per_call_us(lambda: Job.model_validate(JOB), 2_000),
        "JobSpec.model_validate(job.spec)": per_call_us(lambda: JobSpec.model_validate(JOB["spec"]), 2_000),
        "DaemonSet.model_validate(daemonset)": per_call_us(lambda: DaemonSet.model_validate(DAEMONSET), 2_000),
        "one .get chain": per_call_us(lambda: (JOB.get("spec") or {}).get("completions"), 200_000),
    }
    print(json.dumps({"unit": "microseconds per object", "figures": figures}, indent=2))


if __name__ == "__main__":
    main()
