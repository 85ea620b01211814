"""GPUJob latencies against the test Slurm site, compared with sbatch + squeue by hand.

A throwaway etcd + apiserver, the GPUJob controller in-process (default timings: polls every
1 s growing ×1.5 to 30 s while nothing changes) and the ``minik8s/slurm`` container (real
Slurm over real SSH; built by ``scripts/build-slurm-image.sh``).  ``--jobs`` GPUJobs run one
after another, each a short shell program (no compile step, so both sides do the same work):

- ``submit``: GPUJob created → ``status.jobID`` set (upload over SFTP, id lookup, sbatch).
- ``finish``: the job's last command ran on the site (a timestamp it writes; the site's
  clock is this machine's) → the GPUJob is Succeeded with stdout, stderr and result files in
  the results ConfigMap.

Baseline in the same run, over one SSH connection of the same kind (paramiko, reused):
``sbatch --parsable`` of the same script (``submit``), and ``squeue`` polled every 0.2 s until
the job has left the queue, then ``cat`` of its output (``finish``).  Prints one JSON document.

    python -m benchmarks.gpujob [--jobs 10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from benchmarks.common import control_plane, percentiles
from minik8s.client.kubeconfig import ClientConfig
from minik8s.client.rest import Client
from minik8s.controllers.gpujob import GPUJobOptions
from minik8s.controllers.gpujob.site import SiteConfig, SlurmSite
from minik8s.controllers.gpujob.ssh import Credentials
from minik8s.controllers.manager import ControllerManager, ControllerOptions
from tests.support.slurm import SlurmSiteContainer, start_site

Obj = dict[str, Any]
NAMESPACE = "bench-gpu"
PROGRAM = "echo computing; sleep 1; echo 42 > result.txt; date +%s.%N > done.ts\n"


async def wait_for(fn: Any, timeout: float = 120.0, interval: float = 0.02) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = await fn()
        if value:
            return value
        await asyncio.sleep(interval)
    raise TimeoutError("condition not reached")


async def run_gpujobs(client: Client, site: SlurmSiteContainer, jobs: int) -> dict[str, Any]:
    ns_rt, job_rt = client.kind("v1", "Namespace"), client.kind("minik8s.io/v1", "GPUJob")
    await client.create(ns_rt, {"metadata": {"name": NAMESPACE}})
    await client.create(client.kind("v1", "Secret"), site.secret("hpc-ssh", NAMESPACE))
    await client.create(client.kind("minik8s.io/v1", "SlurmCluster"), site.cluster("bench", "hpc-ssh", NAMESPACE))
    options = ControllerOptions(gpujob=GPUJobOptions())
    manager = ControllerManager(client, ["gpujob"], workers=5, namespace=NAMESPACE, resync_period=None,
                                options=options)
    task = asyncio.get_running_loop().create_task(manager.run())
    submit: list[float] = []
    finish: list[float] = []
    try:
        await asyncio.wait_for(manager.started.wait(), 30)
        for i in range(jobs):
            name = f"bench-{i}"
            body = {"apiVersion": "minik8s.io/v1", "kind": "GPUJob", "metadata": {"name": name},
                    "spec": {"cluster": "bench", "sources": {"files": {"run.sh": PROGRAM}}, "build": "",
                             "run": {"command": ["bash", "run.sh"]}, "slurm": {"gpus": 1},
                             "resultFiles": ["result.txt", "done.ts"]}}
            t0 = time.time()
            await client.create(job_rt, body, NAMESPACE)

            async def status(n: str = name) -> Obj:
                return (await client.get(job_rt, n, NAMESPACE)).get("status") or {}

            async def has_id() -> bool:
                return bool((await status()).get("jobID"))
            await wait_for(has_id)
            submit.append(time.time() - t0)

            async def done() -> Obj | None:
                s = await status()
                return s if s.get("phase") in ("Succeeded", "Failed") else None
            final = await wait_for(done)
            seen = time.time()
            if final["phase"] != "Succeeded":
                raise RuntimeError(f"{name} ended {final['phase']}: {final.get('message')}")
            cm = await client.get(client.kind("v1", "ConfigMap"), final["resultsConfigMap"], NAMESPACE)
            key = next(r["key"] for r in final["results"] if r["path"] == "done.ts")
            finish.append(seen - float(cm["data"][key]))
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    return {"submit": percentiles(submit), "finish": percentiles(finish)}


async def run_by_hand(site: SlurmSiteContainer, jobs: int) -> dict[str, Any]:
    config = SiteConfig(site.host, site.port, site.user, "bench-by-hand",
                        Credentials(site.private_key, site.known_hosts))
    executor = ThreadPoolExecutor(2)
    ssh = SlurmSite(config, executor)
    await ssh.connect()
    submit: list[float] = []
    finish: list[float] = []
    try:
        for i in range(jobs):
            d = f"bench-by-hand/{i}"
            await ssh.run(f"mkdir -p {d} && cd {d} && printf '%s' '{PROGRAM.strip()}' > run.sh")
            t0 = time.time()
            result = await ssh.run(f"cd {d} && sbatch --parsable --gres=gpu:1 --output=out.txt --wrap='bash run.sh'")
            job_id = result.stdout.strip().splitlines()[-1]
            submit.append(time.time() - t0)
            while True:
                queued = await ssh.run(f"squeue --noheader --jobs={job_id} --format=%T")
                if not queued.stdout.strip() or queued.stdout.strip() in ("COMPLETED", "FAILED"):
                    break
                await asyncio.sleep(0.2)
            await ssh.run(f"cat {d}/out.txt {d}/result.txt")
            seen = time.time()
            finish.append(seen - float((await ssh.run(f"cat {d}/done.ts")).stdout))
    finally:
        await ssh.run("rm -rf bench-by-hand")
        await ssh.close()
        executor.shutdown(wait=False)
    return {"submit": percentiles(submit), "finish": percentiles(finish)}


async def main_async(jobs: int) -> dict[str, Any]:
    started = time.monotonic()
    site = start_site()
    start_seconds = round(time.monotonic() - started, 2)
    try:
        with control_plane() as (url, _etcd_port):
            async with Client(ClientConfig(server=url)) as client:
                gpujob = await run_gpujobs(client, site, jobs)
        by_hand = await run_by_hand(site, jobs)
    finally:
        site.stop()
    return {
        "benchmark": "gpujob",
        "jobs": jobs,
        "slurm_site_start_s": start_seconds,
        "controller_options": {"poll_interval_s": GPUJobOptions().poll_interval,
                               "max_poll_interval_s": GPUJobOptions().max_poll_interval},
        "gpujob": {"created_to_job_id": gpujob["submit"], "finished_to_succeeded_with_results": gpujob["finish"]},
        "by_hand_same_ssh": {"sbatch": by_hand["submit"], "finished_to_squeue_done_and_output_read": by_hand["finish"]},
        "cpus": os.cpu_count(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10, help="GPUJobs (and hand-made jobs) to run")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(main_async(args.jobs)), indent=2))


if __name__ == "__main__":
    main()
