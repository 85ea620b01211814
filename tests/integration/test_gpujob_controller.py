"""GPUJob and SlurmCluster controllers against the test Slurm site over real SSH.

A real apiserver and etcd, the controller-manager in-process (only the ``gpujob`` controller),
and the ``minik8s/slurm`` container: real sshd, munge, slurmctld and slurmd, FAKE GPUs (this
machine has none).  CUDA programs compile with the real nvcc and then fail at run time with
the CUDA runtime's error, which the tests assert by name; a plain C program proves the
Succeeded path with results fetched.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from minik8s.api import errors
from minik8s.api.gpujobs import config_map_files
from minik8s.client.rest import Client
from minik8s.controllers.gpujob import GPUJobOptions
from minik8s.controllers.manager import ControllerManager, ControllerOptions
from tests.support.controllers import controller_manager
from tests.support.processes import ROOT, APIServer
from tests.support.slurm import SlurmSiteContainer, start_site
from tests.support.waiting import wait_for

pytestmark = pytest.mark.docker
Obj = dict[str, Any]

OPTIONS = ControllerOptions(gpujob=GPUJobOptions(
    cluster_check_period=2.0, poll_interval=0.2, max_poll_interval=1.0, connect_backoff=0.5,
    max_connect_backoff=2.0, connect_timeout=3.0, command_timeout=30.0, build_timeout=120.0))
#: Sync loops per controller of ``minik8s controller-manager`` when not told otherwise.
DEFAULT_WORKERS: int = inspect.signature(ControllerManager).parameters["workers"].default

CUDA_PROGRAM = r"""
#include <cstdio>
#include <cuda_runtime.h>
__global__ void fill(int *x) { x[threadIdx.x] = threadIdx.x; }
int main() {
    int *d = nullptr;
    cudaError_t err = cudaMalloc(&d, 64 * sizeof(int));
    if (err != cudaSuccess) {
        fprintf(stderr, "CUDA error: %s (%s)\n", cudaGetErrorName(err), cudaGetErrorString(err));
        return 1;
    }
    fill<<<1, 64>>>(d);
    printf("kernel ran\n");
    return 0;
}
"""

C_PROGRAM = r"""
#include <stdio.h>
#include <sys/stat.h>
int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 10, sum = 0;
    for (long i = 1; i <= n; i++) sum += i;
    printf("sum 1..%ld = %ld\n", n, sum);
    FILE *f = fopen("result.txt", "w"); fprintf(f, "%ld\n", sum); fclose(f);
    mkdir("out", 0755);
    f = fopen("out/data.csv", "w"); fprintf(f, "n,sum\n%ld,%ld\n", n, sum); fclose(f);
    f = fopen("ignored.log", "w"); fprintf(f, "not a result\n"); fclose(f);
    return 0;
}
"""


@pytest.fixture(scope="module")
def site() -> Iterator[SlurmSiteContainer]:
    s = start_site()
    yield s
    s.stop()


class Env:
    """One test's world: a namespace with the SSH Secret, a SlurmCluster for the site."""

    def __init__(self, client: Client, namespace: str, site: SlurmSiteContainer) -> None:
        self.client = client
        self.namespace = namespace
        self.site = site
        self.cluster_name = f"site-{os.urandom(3).hex()}"
        self.secret_name = "hpc-ssh"
        self.job_rt = client.kind("minik8s.io/v1", "GPUJob")
        self.cluster_rt = client.kind("minik8s.io/v1", "SlurmCluster")
        self.secret_rt = client.kind("v1", "Secret")
        self.cm_rt = client.kind("v1", "ConfigMap")

    async def setup(self, **secret: Any) -> None:
        await self.client.create(self.secret_rt, self.site.secret(self.secret_name, self.namespace, **secret))
        await self.client.create(self.cluster_rt, self.site.cluster(self.cluster_name, self.secret_name,
                                                                    self.namespace))

    async def create_job(self, name: str, files: dict[str, str] | None = None, build: str | None = None,
                         command: list[str] | None = None, args: list[str] | None = None,
                         result_files: list[str] | None = None, **slurm: Any) -> Obj:
        spec: Obj = {"cluster": self.cluster_name, "sources": {"files": files or {"main.cu": CUDA_PROGRAM}},
                     "slurm": slurm}
        if build is not None:
            spec["build"] = build
        if command or args:
            spec["run"] = {"command": command or ["./app"], "args": args or []}
        if result_files:
            spec["resultFiles"] = result_files
        body = {"apiVersion": "minik8s.io/v1", "kind": "GPUJob", "metadata": {"name": name}, "spec": spec}
        return await self.client.create(self.job_rt, body, self.namespace)

    async def job(self, name: str) -> Obj:
        return await self.client.get(self.job_rt, name, self.namespace)

    async def status(self, name: str) -> Obj:
        return (await self.job(name)).get("status") or {}

    async def wait_phase(self, name: str, phases: tuple[str, ...], timeout: float = 90.0) -> Obj:
        async def reached() -> bool:
            return (await self.status(name)).get("phase") in phases
        await wait_for(reached, timeout, 0.1, f"GPUJob {name} in {phases}")
        return await self.status(name)

    async def events(self, name: str) -> list[Obj]:
        items = (await self.client.list(self.client.kind("v1", "Event"), self.namespace,
                                        field_selector=f"involvedObject.name={name}"))["items"]
        return items

    async def reasons(self, name: str) -> list[str]:
        return [str(e.get("reason")) for e in await self.events(name)]

    async def wait_events(self, name: str, *reasons: str) -> None:
        """Events are recorded in the background: wait until every reason was seen."""
        async def seen() -> bool:
            return set(reasons) <= set(await self.reasons(name))
        await wait_for(seen, 10, 0.1, f"events {reasons} of {name} (seen: {await self.reasons(name)})")

    def slurm_jobs_of(self, uid: str) -> list[str]:
        """Ids of every Slurm job (any state) whose comment carries ``uid``."""
        out = self.site.exec("squeue --states=all --noheader --format='%i|%k'").stdout
        return [line.split("|")[0] for line in out.splitlines() if line.endswith(uid)]

    async def cleanup(self) -> None:
        """Drop the SlurmCluster and the GPUJobs' finalizers (no controller runs any more), so
        the namespace can go."""
        with contextlib.suppress(errors.APIError):
            await self.client.delete(self.cluster_rt, self.cluster_name)
        for job in (await self.client.list(self.job_rt, self.namespace))["items"]:
            with contextlib.suppress(errors.APIError):
                await self.client.patch(self.job_rt, job["metadata"]["name"], {"metadata": {"finalizers": None}},
                                        self.namespace)


@pytest.fixture
async def env(client: Client, namespace: str, site: SlurmSiteContainer) -> AsyncIterator[Env]:
    e = Env(client, namespace, site)
    yield e
    await e.cleanup()


@contextlib.asynccontextmanager
async def running_controller(env: Env, workers: int = 3) -> AsyncIterator[None]:
    async with controller_manager(env.client, env.namespace, ["gpujob"], workers=workers, options=OPTIONS):
        yield


# ---------------------------------------------------------------- the happy paths
async def test_cuda_job_compiles_submits_and_fails_with_the_cuda_error(env: Env) -> None:
    await env.setup()
    async with running_controller(env):
        await env.create_job("cuda", gpus=1)
        await env.wait_phase("cuda", ("Succeeded", "Failed"), 120)
        await env.wait_events("cuda", "Built", "Submitted", "Failed", "ResultsFetched")

        async def cleaned() -> bool:
            return bool((await env.status("cuda")).get("cleanedUp"))
        await wait_for(cleaned, 10, 0.1, "cleanedUp")  # written after the final status
        status = await env.status("cuda")
    assert status["phase"] == "Failed", status
    assert status["reason"] == "Failed"
    assert status["exitCode"] == 1
    assert status["slurmState"] == "FAILED"
    assert status["jobID"].isdigit()
    # No GPU here: the CUDA runtime cannot find a driver.  Exactly that error, by name.
    assert "CUDA error: cudaErrorInsufficientDriver" in status["stderrTail"]
    assert "cudaErrorInsufficientDriver" in status["message"]
    script = status["batchScript"]
    assert "#SBATCH --gres=gpu:1" in script and "#SBATCH --partition=dgx2" in script
    assert f"#SBATCH --comment=minik8s-gpujob-uid={(await env.job('cuda'))['metadata']['uid']}" in script
    for field in ("submitTime", "startTime", "completionTime"):
        assert status[field].endswith("Z"), field
    cm = await env.client.get(env.cm_rt, status["resultsConfigMap"], env.namespace)
    assert "cudaErrorInsufficientDriver" in config_map_files(cm)["stderr"].decode()
    assert env.site.exec(f"test -e {status['workDir']}").returncode != 0


async def test_program_succeeds_and_results_come_back(env: Env) -> None:
    await env.setup()
    async with running_controller(env):
        await env.create_job("sum", files={"main.c": C_PROGRAM}, build="gcc -O2 -o app main.c -include stdlib.h",
                             args=["100"], result_files=["*.txt", "out/*.csv"], gpus=0, memory="64Mi",
                             timeLimit="00:05:00")
        status = await env.wait_phase("sum", ("Succeeded", "Failed"), 120)
        assert status["phase"] == "Succeeded", status
        cluster = await env.client.get(env.cluster_rt, env.cluster_name)
    assert status["exitCode"] == 0
    assert status["slurmState"] == "COMPLETED"
    assert "sum 1..100 = 5050" in status["stdoutTail"]
    paths = {r["path"]: r for r in status["results"]}
    assert set(paths) == {"result.txt", "out/data.csv"}
    cm = await env.client.get(env.cm_rt, status["resultsConfigMap"], env.namespace)
    files = config_map_files(cm)
    assert files[paths["result.txt"]["key"]] == b"5050\n"
    assert files[paths["out/data.csv"]["key"]] == b"n,sum\n100,5050\n"
    assert b"sum 1..100 = 5050" in files["stdout"]
    assert cm["metadata"]["ownerReferences"][0]["kind"] == "GPUJob"
    assert "--mem=64M" in status["batchScript"] and "--time=00:05:00" in status["batchScript"]
    assert "--gres" not in status["batchScript"]
    # The SlurmCluster's periodic check.
    cstatus = cluster["status"]
    reachable = next(c for c in cstatus["conditions"] if c["type"] == "Reachable")
    assert reachable["status"] == "True"
    assert cstatus["slurmVersion"].startswith("22.")
    assert cstatus["accounting"] is False
    dgx2 = next(p for p in cstatus["partitions"] if p["name"] == "dgx2")
    assert dgx2["gpus"] == 2 and dgx2["default"] is True


async def test_pending_job_shows_slurm_reason_and_id(env: Env) -> None:
    await env.setup()
    filler = env.site.exec("sbatch --parsable --partition=dgx2 --gres=gpu:2 --wrap='sleep 600'")
    assert filler.returncode == 0, filler.stderr
    filler_id = filler.stdout.strip()
    try:
        async with running_controller(env):
            await env.create_job("waits", files={"run.sh": "echo ran\n"}, build="", command=["bash", "run.sh"],
                                 gpus=1)

            async def pending() -> bool:
                s = await env.status("waits")
                return s.get("slurmState") == "PENDING" and s.get("slurmReason") == "Resources"
            await wait_for(pending, 60, 0.1, "PENDING (Resources)")
            status = await env.status("waits")
            assert status["phase"] == "Submitted"
            assert status["jobID"].isdigit() and status["submitTime"]
            env.site.exec(f"scancel {filler_id}")
            status = await env.wait_phase("waits", ("Succeeded", "Failed"), 90)
            assert status["phase"] == "Succeeded", status
            await env.wait_events("waits", "Waiting")
    finally:
        env.site.exec(f"scancel {filler_id}")


async def test_deleting_a_running_job_cancels_it(env: Env) -> None:
    await env.setup()
    async with running_controller(env):
        job = await env.create_job("long", files={"run.sh": "sleep 600\n"}, build="", command=["bash", "run.sh"],
                                   gpus=1)
        await env.wait_phase("long", ("Running",), 60)
        await env.wait_events("long", "Started")
        job_id = (await env.status("long"))["jobID"]
        await env.client.delete(env.job_rt, "long", env.namespace)

        async def gone() -> bool:
            try:
                await env.job("long")
            except errors.NotFound:
                return True
            return False
        await wait_for(gone, 30, 0.1, "GPUJob removed")
    state = env.site.exec(f"scontrol -o show job {job_id}").stdout
    assert "JobState=CANCELLED" in state, state
    assert env.slurm_jobs_of(job["metadata"]["uid"]) == [job_id]
    assert env.site.exec(f"test -e minik8s-jobs/gpujob-{job['metadata']['uid']}").returncode != 0


async def test_many_jobs_at_once_all_finish(env: Env) -> None:
    """Issue 25: the workers shared one SFTP client over the site's connection and it hung, and
    with it every GPUJob (stuck in Pending or Submitted).  16 GPUJobs waiting when the
    controller starts with the controller-manager's default workers: all Succeed, each with
    its own output and results, each submitted once."""
    jobs = 16
    await env.setup()
    for i in range(jobs):
        inputs = {f"input-{k}.txt": f"job {i} input {k}\n" * 500 for k in range(4)}
        await env.create_job(f"many-{i}", files={"run.sh": f"cat input-*.txt | wc -l > result.txt; echo job {i}\n",
                                                 **inputs},
                             build="", command=["bash", "run.sh"], result_files=["result.txt"], gpus=0)
    loop = asyncio.get_running_loop()
    async with running_controller(env, workers=DEFAULT_WORKERS):
        started = loop.time()

        async def finished() -> list[Obj]:
            items = (await env.client.list(env.job_rt, env.namespace))["items"]
            done = [j for j in items if (j.get("status") or {}).get("phase") in ("Succeeded", "Failed")
                    and (j.get("status") or {}).get("cleanedUp")]
            return items if len(done) == jobs else []
        items = await wait_for(finished, 180, 0.2, f"{jobs} GPUJobs finished")
        elapsed = loop.time() - started
    print(f"{jobs} GPUJobs at once, {DEFAULT_WORKERS} workers: all finished in {elapsed:.1f}s")
    queue = env.site.exec("squeue --states=all --noheader --format='%i|%k'").stdout.splitlines()
    for job in items:
        name, uid, status = job["metadata"]["name"], job["metadata"]["uid"], job["status"]
        assert status["phase"] == "Succeeded", (name, status)
        assert f"job {name.removeprefix('many-')}" in status["stdoutTail"], (name, status["stdoutTail"])
        cm = await env.client.get(env.cm_rt, status["resultsConfigMap"], env.namespace)
        key = next(r["key"] for r in status["results"] if r["path"] == "result.txt")
        assert config_map_files(cm)[key] == b"2000\n", name
        assert [line.split("|")[0] for line in queue if line.endswith(uid)] == [status["jobID"]], name


# ---------------------------------------------------------------- faults
async def test_compile_error_fails_without_submitting(env: Env) -> None:
    await env.setup()
    async with running_controller(env):
        job = await env.create_job("broken", files={"main.cu": "__global__ void k( { }\nint main() { return 0; }\n"})
        status = await env.wait_phase("broken", ("Failed", "Succeeded"), 90)
        await env.wait_events("broken", "BuildFailed")
    assert status["reason"] == "BuildFailed", status
    assert "nvcc -O2 -o app *.cu" in status["message"] and "error" in status["message"]
    assert "error" in status["buildLog"]
    assert "jobID" not in status
    assert env.slurm_jobs_of(job["metadata"]["uid"]) == []


@pytest.mark.parametrize(("slurm", "message"), [
    ({"partition": "nope"}, "Invalid partition name specified"),
    ({"gpus": 4}, "Requested node configuration is not available"),
])
async def test_sbatch_rejection_fails_with_sbatch_message(env: Env, slurm: Obj, message: str) -> None:
    await env.setup()
    async with running_controller(env):
        job = await env.create_job("rejected", files={"run.sh": "true\n"}, build="", command=["bash", "run.sh"],
                                   **slurm)
        status = await env.wait_phase("rejected", ("Failed", "Succeeded"), 60)
    assert status["reason"] == "SubmitRejected", status
    assert message in status["message"]
    assert "jobID" not in status
    # Slurm may keep a record of the refused job (FAILED, BadConstraints); none ever ran.
    records = env.site.exec("squeue --states=all --noheader --format='%k|%T'").stdout.splitlines()
    assert all(r.endswith("|FAILED") for r in records if job["metadata"]["uid"] in r), records


async def test_time_limit_fails_with_timeout(env: Env) -> None:
    await env.setup()
    async with running_controller(env):
        await env.create_job("slow", files={"run.sh": "echo started; sleep 600\n"}, build="",
                             command=["bash", "run.sh"], gpus=0, timeLimit="1")
        status = await env.wait_phase("slow", ("Failed", "Succeeded"), 180)
    assert status["reason"] == "Timeout", status
    assert status["slurmState"] == "TIMEOUT"
    assert "started" in status["stdoutTail"]
    assert "TIMEOUT" in status["message"]


async def test_unreachable_site_is_reported_and_retried_without_double_submission(env: Env) -> None:
    await env.setup()
    env.site.pause()
    try:
        async with running_controller(env):
            job = await env.create_job("patient", files={"run.sh": "echo ok\n"}, build="", command=["bash", "run.sh"],
                                       gpus=1)

            async def reported() -> bool:
                conds = (await env.status("patient")).get("conditions") or []
                return any(c["type"] == "ClusterReachable" and c["status"] == "False" and c["reason"] == "Unreachable"
                           for c in conds)
            await wait_for(reported, 30, 0.1, "ClusterReachable=False")
            cluster = await env.client.get(env.cluster_rt, env.cluster_name)
            assert any(c["type"] == "Reachable" and c["status"] == "False" for c in cluster["status"]["conditions"])
            assert (await env.status("patient"))["phase"] == "Pending"
            env.site.unpause()
            status = await env.wait_phase("patient", ("Succeeded", "Failed"), 90)
    finally:
        env.site.unpause()
    assert status["phase"] == "Succeeded", status
    assert any(c["type"] == "ClusterReachable" and c["status"] == "True" for c in status["conditions"])
    assert env.slurm_jobs_of(job["metadata"]["uid"]) == [status["jobID"]]


async def test_refused_key_is_reported_and_fixed_by_updating_the_secret(env: Env) -> None:
    from tests.support.slurm import new_key

    await env.setup(private_key=new_key()[0])
    async with running_controller(env):
        job = await env.create_job("keyed", files={"run.sh": "echo ok\n"}, build="", command=["bash", "run.sh"])

        async def refused() -> bool:
            conds = (await env.status("keyed")).get("conditions") or []
            return any(c["type"] == "ClusterReachable" and c["reason"] == "AuthenticationFailed" for c in conds)
        await wait_for(refused, 30, 0.1, "AuthenticationFailed")
        secret = env.site.secret(env.secret_name, env.namespace)
        current = await env.client.get(env.secret_rt, env.secret_name, env.namespace)
        secret["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        await env.client.update(env.secret_rt, secret)
        status = await env.wait_phase("keyed", ("Succeeded", "Failed"), 90)
    assert status["phase"] == "Succeeded", status
    assert env.slurm_jobs_of(job["metadata"]["uid"]) == [status["jobID"]]


async def test_unknown_host_key_is_refused(env: Env) -> None:
    other = "10.255.255.1 ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBzvBYvO0pMSL9oB6dOWBSUbNqBRmVJm4ZYCAJvfqtku\n"
    await env.setup(known_hosts=f"{env.site.host} " + other.split(" ", 1)[1])
    async with running_controller(env):
        await env.create_job("spoofed", files={"run.sh": "echo ok\n"}, build="", command=["bash", "run.sh"])

        async def rejected() -> bool:
            conds = (await env.status("spoofed")).get("conditions") or []
            return any(c["type"] == "ClusterReachable" and c["reason"] == "HostKeyNotVerified" for c in conds)
        await wait_for(rejected, 30, 0.1, "HostKeyNotVerified")
        assert "jobID" not in await env.status("spoofed")


# ---------------------------------------------------------------- restarts
async def test_controller_restart_adopts_the_running_job(env: Env) -> None:
    await env.setup()
    async with running_controller(env):
        job = await env.create_job("survivor", files={"run.sh": "sleep 4; echo finished\n"}, build="",
                                   command=["bash", "run.sh"], gpus=1)
        await env.wait_phase("survivor", ("Submitted", "Running"), 60)
        job_id = (await env.status("survivor"))["jobID"]
    await asyncio.sleep(0)  # the first controller-manager is gone; the Slurm job goes on
    async with running_controller(env):
        status = await env.wait_phase("survivor", ("Succeeded", "Failed"), 90)
    assert status["phase"] == "Succeeded", status
    assert status["jobID"] == job_id
    assert "finished" in status["stdoutTail"]
    assert env.slurm_jobs_of(job["metadata"]["uid"]) == [job_id]


async def test_job_submitted_before_a_crash_is_adopted_not_resubmitted(env: Env) -> None:
    """sbatch ran but the controller died before writing status.jobID: the job is found by its comment."""
    await env.setup()
    job = await env.create_job("orphan", files={"run.sh": "echo adopted\n"}, build="", command=["bash", "run.sh"],
                               gpus=1)
    uid = job["metadata"]["uid"]
    submitted = env.site.exec(f"mkdir -p minik8s-jobs/gpujob-{uid} && cd minik8s-jobs/gpujob-{uid} && "
                              f"echo 'echo adopted' > run.sh && sbatch --parsable --comment=minik8s-gpujob-uid={uid} "
                              f"--output=slurm-%j.out --error=slurm-%j.err --wrap='bash run.sh; echo 0 > "
                              f".minik8s-exitcode'")
    assert submitted.returncode == 0, submitted.stderr
    job_id = submitted.stdout.strip()
    async with running_controller(env):
        status = await env.wait_phase("orphan", ("Succeeded", "Failed"), 90)
        await env.wait_events("orphan", "Adopted")
    assert status["jobID"] == job_id
    assert status["phase"] == "Succeeded", status
    assert "adopted" in status["stdoutTail"]
    assert env.slurm_jobs_of(uid) == [job_id]


# ---------------------------------------------------------------- the CLI
def kubectl(server: str, namespace: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "minik8s.kubectl", "-s", server, "-n", namespace, *args],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)


async def test_kubectl_creates_from_a_directory_and_brings_results_back(env: Env, apiserver: APIServer,
                                                                         tmp_path: Path) -> None:
    """The matrix-multiply example through kubectl: sources from its directory, then get, script,
    describe, logs and results — all through the apiserver."""
    await env.setup()
    manifest = yaml.safe_load((ROOT / "examples/gpu/matrix-multiply.yaml").read_text())
    manifest["spec"]["cluster"] = env.cluster_name
    manifest["spec"]["run"]["args"] = ["64"]
    job_file = tmp_path / "job.yaml"
    job_file.write_text(yaml.safe_dump(manifest))
    server, ns = apiserver.url, env.namespace
    created = await asyncio.to_thread(kubectl, server, ns, "gpujob", "create", "-f", str(job_file), "--sources",
                                      str(ROOT / "examples/gpu/matrix-multiply"))
    assert created.returncode == 0, created.stderr
    assert "gpujob.minik8s.io/matrix-multiply created" in created.stdout
    assert "uploading 1 source file(s)" in created.stderr
    async with running_controller(env):
        status = await env.wait_phase("matrix-multiply", ("Succeeded", "Failed"), 120)
    assert status["reason"] == "Failed" and "cudaErrorInsufficientDriver" in status["stderrTail"]
    got = await asyncio.to_thread(kubectl, server, ns, "get", "gpujobs")
    header, row = got.stdout.splitlines()[:2]
    assert header.split()[:6] == ["NAME", "PHASE", "JOB-ID", "SLURM-STATE", "REASON", "SUBMITTED"], header
    assert row.split()[:5] == ["matrix-multiply", "Failed", status["jobID"], "FAILED", "NonZeroExitCode"], row
    script = await asyncio.to_thread(kubectl, server, ns, "gpujob", "script", "matrix-multiply")
    assert script.stdout == status["batchScript"]
    described = await asyncio.to_thread(kubectl, server, ns, "describe", "gpujob", "matrix-multiply")
    assert "#SBATCH --gres=gpu:1" in described.stdout and "cudaErrorInsufficientDriver" in described.stdout
    assert f"Slurm Job ID:      {status['jobID']}" in described.stdout or status["jobID"] in described.stdout
    logs = await asyncio.to_thread(kubectl, server, ns, "logs", "gpujob/matrix-multiply", "-c", "stderr")
    assert "CUDA error: cudaErrorInsufficientDriver" in logs.stdout
    out = tmp_path / "out"
    fetched = await asyncio.to_thread(kubectl, server, ns, "gpujob", "results", "matrix-multiply", "-o", str(out))
    assert fetched.returncode == 0, fetched.stderr
    assert "cudaErrorInsufficientDriver" in (out / f"slurm-{status['jobID']}.err").read_text()
    clusters = await asyncio.to_thread(kubectl, server, ns, "get", "slurmclusters")
    assert "dgx2*(2 GPUs)" in clusters.stdout and "True" in clusters.stdout
    missing = await asyncio.to_thread(kubectl, server, ns, "gpujob", "results", "nope")
    assert missing.returncode == 1 and missing.stderr.strip() == 'error: gpujobs.minik8s.io "nope" not found'
