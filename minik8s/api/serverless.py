"""Serverless kinds of ``minik8s.io/v1``: Function, Workflow, WorkflowRun and Trigger.

A **Function** is Python code run by minik8s in pods of its own and called through the
gateway (``POST /functions/{namespace}/{name}``)::

    apiVersion: minik8s.io/v1
    kind: Function
    metadata: {name: hello}
    spec:
      handler: main.handler          # module.function (default main.handler)
      source: |                      # one file, main.py  (or files: {name: content})
        def handler(event, context):
            return {"hello": event.get("name", "world")}
      requirements: ["six==1.16.0"]  # pip lines, installed per revision
      timeoutSeconds: 30
      scaling: {minScale: 0, maxScale: 10, targetConcurrency: 10, scaleToZeroAfterSeconds: 30}

A **Workflow** is a state machine in the shape of the Amazon States Language (camelCase):
``startAt`` and ``states`` of types Task (calls a Function of the namespace), Choice
(rules on a JSONPath ``variable``), Parallel (branches, outputs joined as a list), Pass,
Succeed and Fail; ``maxSteps`` bounds loops made of Choice back-edges.  Each invocation is
recorded as a **WorkflowRun** (the states visited with their inputs, outputs and durations).

A **Trigger** (like Knative Eventing's) delivers CloudEvents to a Function or a Workflow:
events posted to the gateway whose attributes match ``spec.filter.attributes``, ticks of a
cron ``spec.schedule``, or changes of objects selected by ``spec.objects``.

These are the wire shapes only; defaults and validation live in the apiserver's strategies,
the interpreter in :mod:`minik8s.functions.workflow`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from minik8s.api.base import Obj
from minik8s.api.core import EnvVar, ResourceRequirements
from minik8s.api.meta import Condition, MetaView, TypedObject
from minik8s.api.model import Model

GROUP = "minik8s.io"
API_VERSION = f"{GROUP}/v1"

#: Runtimes a Function may ask for.
RUNTIMES = ("python3",)
#: ``spec.mode``: ``Pooled`` (a Deployment scaled by the autoscaler) or ``PerInvocation``
#: (a fresh pod per call, deleted afterwards).
FUNCTION_MODES = ("Pooled", "PerInvocation")
DEFAULT_HANDLER = "main.handler"
#: The file ``spec.source`` becomes.
SOURCE_FILE = "main.py"
DEFAULT_TIMEOUT_SECONDS = 30
MAX_TIMEOUT_SECONDS = 900
DEFAULT_MIN_SCALE = 0
DEFAULT_MAX_SCALE = 10
DEFAULT_TARGET_CONCURRENCY = 10
DEFAULT_SCALE_TO_ZERO_AFTER_SECONDS = 30
#: Bytes of code (``source``/``files`` plus requirements) a Function may carry: its ConfigMap
#: must stay under Kubernetes' 1 MiB object limit with the runtime beside it.
MAX_CODE_BYTES = 960 * 1024

#: Label on a Function's ConfigMaps, Deployment, pods and Service: the Function's name.
FUNCTION_LABEL = "minik8s.io/function"
#: Label on a Function's ConfigMaps and pods: the code revision (``<name>-<hash>``).
REVISION_LABEL = "minik8s.io/revision"
#: Annotation on a Function's Deployment: when its replicas last changed (unix seconds), written
#: by whoever scales it (the autoscaler, or the gateway starting a Function from zero).
LAST_SCALE_ANNOTATION = "minik8s.io/last-scale-time"
#: Label on the one-call pods of a ``PerInvocation`` Function: the Function's name.
INVOCATION_LABEL = "minik8s.io/invocation-of"
#: Label on WorkflowRuns: the Workflow's name.
WORKFLOW_LABEL = "minik8s.io/workflow"


def workload_name(function_name: str) -> str:
    """Name of a Function's Deployment and Service: ``fn-<name>``."""
    return f"fn-{function_name}"


STATE_TYPES = ("Task", "Choice", "Parallel", "Pass", "Succeed", "Fail")
DEFAULT_MAX_STEPS = 100
MAX_MAX_STEPS = 10_000
DEFAULT_RUN_HISTORY_LIMIT = 20
RUN_PHASES = ("Running", "Succeeded", "Failed")

SUBSCRIBER_KINDS = ("Function", "Workflow")
BACKOFF_POLICIES = ("exponential", "linear")
DEFAULT_RETRY = 3
DEFAULT_BACKOFF_DELAY_SECONDS = 0.5


# ---------------------------------------------------------------- Function
class FunctionScaling(Model):
    """Autoscaling bounds (Knative's ``autoscaling.knative.dev`` annotations as fields).

    ``targetConcurrency``: in-flight requests one instance should carry; ``scaleToZeroAfterSeconds``:
    idle time (no request and no scale change) before the last instance goes.
    """

    min_scale: int | None = None
    max_scale: int | None = None
    target_concurrency: int | None = None
    scale_to_zero_after_seconds: int | None = None


class FunctionSpec(Model):
    runtime: str | None = None
    handler: str | None = None
    source: str | None = None
    files: dict[str, str] | None = None
    requirements: list[str] | None = None
    env: list[EnvVar] | None = None
    resources: ResourceRequirements | None = None
    timeout_seconds: int | None = None
    mode: str | None = None
    scaling: FunctionScaling | None = None


class FunctionStatus(Model):
    """``readyInstances``: pods that answered; ``instances``: what the autoscaler asks for;
    ``revision``: the code revision being served (``<name>-<hash>``); ``url``: the gateway
    path to call."""

    observed_generation: int | None = None
    conditions: list[Condition] | None = None
    ready_instances: int | None = None
    instances: int | None = None
    url: str | None = None
    revision: str | None = None
    last_scale_time: str | None = None


class Function(TypedObject):
    spec: FunctionSpec
    status: FunctionStatus | None = None


@dataclass(frozen=True, slots=True)
class FunctionView:
    """What the Function controller reads of a wire-form Function, read once at the top of a sync:
    ``requirements`` (pip lines, empty when none) and ``scaling.minScale`` (0 when unset)."""

    meta: MetaView
    requirements: tuple[str, ...]
    min_scale: int

    @classmethod
    def of(cls, fn: Mapping[str, Any]) -> FunctionView:
        spec = fn.get("spec") or {}
        return cls(MetaView.of(fn), tuple(spec.get("requirements") or ()),
                   int((spec.get("scaling") or {}).get("minScale") or 0))


# ---------------------------------------------------------------- Workflow
class ChoiceRule(Model):
    """One Choice rule: a comparison of ``variable`` (a JSONPath into the state input) with one
    operator, or a combination (``and``/``or`` of rules, ``not`` of a rule).  Top-level rules
    carry ``next``."""

    variable: str | None = None
    next: str | None = None
    and_: list[ChoiceRule] | None = Field(default=None, alias="and")
    or_: list[ChoiceRule] | None = Field(default=None, alias="or")
    not_: ChoiceRule | None = Field(default=None, alias="not")
    string_equals: str | None = None
    string_less_than: str | None = None
    string_greater_than: str | None = None
    string_less_than_equals: str | None = None
    string_greater_than_equals: str | None = None
    string_matches: str | None = None
    numeric_equals: int | float | None = None
    numeric_less_than: int | float | None = None
    numeric_greater_than: int | float | None = None
    numeric_less_than_equals: int | float | None = None
    numeric_greater_than_equals: int | float | None = None
    boolean_equals: bool | None = None
    is_null: bool | None = None
    is_present: bool | None = None
    is_numeric: bool | None = None
    is_string: bool | None = None
    is_boolean: bool | None = None


#: Comparison operators of a Choice rule (camelCase, as on the wire).
CHOICE_OPERATORS = (
    "stringEquals", "stringLessThan", "stringGreaterThan", "stringLessThanEquals", "stringGreaterThanEquals",
    "stringMatches", "numericEquals", "numericLessThan", "numericGreaterThan", "numericLessThanEquals",
    "numericGreaterThanEquals", "booleanEquals", "isNull", "isPresent", "isNumeric", "isString", "isBoolean",
)


class Branch(Model):
    """One branch of a Parallel state: a state machine of its own."""

    start_at: str | None = None
    states: dict[str, State] | None = None


class State(Model):
    """One state.  Fields by ``type``:

    * Task: ``function`` (a Function of the namespace), ``timeoutSeconds``;
    * Choice: ``choices`` and ``default``;
    * Parallel: ``branches``;
    * Pass: ``result`` (else the input passes through);
    * Fail: ``error`` and ``cause``;
    * every type but Choice/Succeed/Fail: ``next`` or ``end: true``;
    * Task, Parallel, Pass: ``inputPath``, ``resultPath``, ``outputPath`` (Amazon States
      Language paths: ``$`` the whole input, ``$.a.b`` a field; ``resultPath`` places the
      result into the input).
    """

    type: str | None = None
    comment: str | None = None
    next: str | None = None
    end: bool | None = None
    function: str | None = None
    timeout_seconds: int | None = None
    input_path: str | None = None
    result_path: str | None = None
    output_path: str | None = None
    result: Any = None
    choices: list[ChoiceRule] | None = None
    default: str | None = None
    branches: list[Branch] | None = None
    error: str | None = None
    cause: str | None = None


class WorkflowSpec(Model):
    start_at: str | None = None
    states: dict[str, State] | None = None
    max_steps: int | None = None
    timeout_seconds: int | None = None
    run_history_limit: int | None = None


class WorkflowStatus(Model):
    observed_generation: int | None = None
    conditions: list[Condition] | None = None
    last_run: str | None = None


class Workflow(TypedObject):
    spec: WorkflowSpec
    status: WorkflowStatus | None = None


# ---------------------------------------------------------------- WorkflowRun
class StepRecord(Model):
    """One visited state: its input and output (JSON), start time, duration in seconds, and
    for a Parallel state the steps of every branch."""

    state: str
    type: str | None = None
    input: Any = None
    output: Any = None
    start_time: str | None = None
    duration_seconds: float | None = None
    error: str | None = None
    cause: str | None = None
    next: str | None = None
    branches: list[list[StepRecord]] | None = None


class WorkflowRef(Model):
    name: str


class WorkflowRunSpec(Model):
    workflow_ref: WorkflowRef
    input: Any = None


class WorkflowRunStatus(Model):
    """``phase`` Running, Succeeded or Failed; ``output`` the last state's output; ``error``
    and ``cause`` of a Failed run; ``steps`` the visited states in order."""

    phase: str | None = None
    start_time: str | None = None
    completion_time: str | None = None
    duration_seconds: float | None = None
    output: Any = None
    error: str | None = None
    cause: str | None = None
    steps: list[StepRecord] | None = None


class WorkflowRun(TypedObject):
    spec: WorkflowRunSpec
    status: WorkflowRunStatus | None = None


# ---------------------------------------------------------------- Trigger
class TriggerFilter(Model):
    """Exact-match filter on CloudEvents attributes (``type``, ``source``, extensions)."""

    attributes: dict[str, str] | None = None


class SubscriberRef(Model):
    api_version: str | None = None
    kind: str
    name: str


class Subscriber(Model):
    ref: SubscriberRef


class ObjectSource(Model):
    """Changes of objects of ``apiVersion``/``kind`` in the Trigger's namespace, optionally
    limited by ``labelSelector`` (Kubernetes selector syntax), become CloudEvents of type
    ``dev.minik8s.object.{added,modified,deleted}`` (Knative's ApiServerSource, Resource mode)."""

    api_version: str
    kind: str
    label_selector: str | None = None


class DeliverySpec(Model):
    """Knative's ``delivery``: ``retry`` attempts after the first, ``backoffPolicy``
    exponential or linear from ``backoffDelaySeconds``."""

    retry: int | None = None
    backoff_policy: str | None = None
    backoff_delay_seconds: float | None = None


class TriggerSpec(Model):
    filter: TriggerFilter | None = None
    subscriber: Subscriber
    schedule: str | None = None
    time_zone: str | None = None
    data: Any = None
    objects: ObjectSource | None = None
    delivery: DeliverySpec | None = None


class TriggerStatus(Model):
    observed_generation: int | None = None
    conditions: list[Condition] | None = None
    delivered: int | None = None
    failed: int | None = None
    last_delivery_time: str | None = None
    last_schedule_time: str | None = None
    last_failure: str | None = None


class Trigger(TypedObject):
    spec: TriggerSpec
    status: TriggerStatus | None = None


for _model in (ChoiceRule, Branch, State, StepRecord):
    _model.model_rebuild()


#: The gateway's address in a local cluster (``minik8s up``).
DEFAULT_GATEWAY_URL = "http://127.0.0.1:8081"
#: Informer index name of :func:`by_function`.
FUNCTION_INDEX = "function"


def by_function(obj: Obj) -> list[str]:
    """Index: ``namespace/function`` of objects labelled with :data:`FUNCTION_LABEL`."""
    meta = obj.get("metadata") or {}
    fn = (meta.get("labels") or {}).get(FUNCTION_LABEL)
    return [f"{meta.get('namespace')}/{fn}"] if fn else []
