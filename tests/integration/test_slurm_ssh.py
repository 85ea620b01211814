"""The SSH/Slurm layer (minik8s.controllers.gpujob.site/ssh) against the test Slurm site."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from minik8s.controllers.gpujob import slurm
from minik8s.controllers.gpujob.site import SiteConfig, SlurmSite, SlurmSites
from minik8s.controllers.gpujob.ssh import Credentials, SiteError
from tests.support.slurm import SlurmSiteContainer as SiteContainer
from tests.support.slurm import new_key, start_site
from tests.support.waiting import wait_for

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def test_site() -> Iterator[SiteContainer]:
    s = start_site()
    yield s
    s.stop()


def config(site: SiteContainer, private_key: str | None = None, known_hosts: str | None = None,
           port: int | None = None) -> SiteConfig:
    return SiteConfig(site.host, port or site.port, site.user, "minik8s-jobs",
                      Credentials(private_key or site.private_key,
                                  known_hosts if known_hosts is not None else site.known_hosts))


@pytest.fixture
async def executor() -> AsyncIterator[ThreadPoolExecutor]:
    pool = ThreadPoolExecutor(4)
    yield pool
    pool.shutdown(wait=False)


async def connected(site: SiteContainer, executor: ThreadPoolExecutor, **kw: Any) -> SlurmSite:
    s = SlurmSite(config(site, **kw), executor, connect_timeout=3)
    await s.connect()
    return s


async def test_check_submit_follow_fetch_cancel(test_site: SiteContainer, executor: ThreadPoolExecutor) -> None:
    site = await connected(test_site, executor)
    try:
        info = await site.check()
        assert info.version.startswith("22.") and info.accounting is False
        assert {p["name"]: p["gpus"] for p in info.partitions} == {"dgx2": 2, "debug": 2}
        identity = slurm.JobIdentity("ns", "layer", "uid-layer-1")
        work_dir = site.job_dir(identity.uid)
        assert work_dir == "/home/hpc/minik8s-jobs/gpujob-uid-layer-1"
        spec = {"run": {"command": ["bash", "run.sh"]}, "slurm": {"gpus": 1}}
        await site.upload(work_dir, {"run.sh": b"echo out; echo err >&2; mkdir -p r; echo 42 > r/v.txt\n"},
                          slurm.batch_script(spec, "dgx2", identity, work_dir))
        assert await site.find_job(work_dir, identity) is None
        job_id = await site.submit(work_dir)
        assert await site.find_job(work_dir, identity) == job_id  # the id file
        for _ in range(100):
            job = await site.job_info(job_id)
            assert job is not None
            if job.is_final:
                break
        assert job is not None and job.base_state == "COMPLETED" and job.exit_code == 0
        assert await site.exit_code(work_dir) == 0
        out = await site.fetch(work_dir, job_id, ["r/*.txt"], 1024, 10_000)
        assert (out.stdout, out.stderr, out.files) == (b"out\n", b"err\n", {"r/v.txt": b"42\n"})
        await site.cleanup(work_dir)
        assert test_site.exec(f"test -e {work_dir}").returncode != 0
        with pytest.raises(SiteError, match="refusing"):
            await site.cleanup("/home/hpc")
        long = test_site.exec("sbatch --parsable --wrap='sleep 300'").stdout.strip()
        await site.cancel(long)
        await site.cancel(long)  # cancelling twice is no error
        assert "CANCELLED" in test_site.exec(f"scontrol -o show job {long}").stdout
        assert await site.job_info("999999") is None  # unknown to Slurm, no accounting
    finally:
        await site.close()


async def test_rejected_and_transient_submissions(test_site: SiteContainer, executor: ThreadPoolExecutor) -> None:
    site = await connected(test_site, executor)
    try:
        identity = slurm.JobIdentity("ns", "bad", "uid-layer-2")
        work_dir = site.job_dir(identity.uid)
        await site.upload(work_dir, {}, slurm.batch_script({"slurm": {"partition": "nope"}}, None, identity,
                                                            work_dir))
        with pytest.raises(SiteError) as caught:
            await site.submit(work_dir)
        assert caught.value.reason == "Rejected"
        assert "Invalid partition name specified" in caught.value.message
        await site.cleanup(work_dir)
    finally:
        await site.close()


async def test_many_file_operations_at_once_over_one_connection(test_site: SiteContainer) -> None:
    """Issue 25: one SFTP client shared by the threads hung (a thread read another's reply and
    dropped it).  16 GPUJobs' uploads, reads, fetches and removals at once, through the 8
    threads of a :class:`SlurmSites` pool and one connection, all finish and see their own files."""
    jobs, sources = 16, 6
    sites = SlurmSites(connect_timeout=3, command_timeout=30)
    try:
        site = await sites.get("many", config(test_site))

        async def one(i: int) -> bool:
            work_dir = site.job_dir(f"uid-many-{i}")
            files = {f"src/part{k}.txt": f"job {i} part {k}\n".encode() * (200 * (k + 1)) for k in range(sources)}
            await site.upload(work_dir, files, f"#!/bin/bash\necho {i}\n")
            assert await site.exit_code(work_dir) is None
            assert await site.find_job(work_dir, slurm.JobIdentity("ns", f"j{i}", f"uid-many-{i}")) is None
            out = await site.fetch(work_dir, "0", ["src/*.txt"], 1024, 1_000_000)
            assert out.files == files, i
            await site.cleanup(work_dir)
            return True

        started = time.monotonic()
        tasks = [asyncio.create_task(one(i)) for i in range(jobs)]
        try:
            await wait_for(lambda: all(t.done() for t in tasks), 120, 0.1,
                           f"{jobs} jobs' file operations over one connection")
        finally:
            for t in tasks:
                t.cancel()
        assert [t.result() for t in tasks] == [True] * jobs
        print(f"{jobs} jobs' uploads and fetches at once over one connection: {time.monotonic() - started:.1f}s")
        assert site.connected and await sites.get("many", config(test_site)) is site  # no reconnect was needed
    finally:
        await sites.close()


async def test_login_faults(test_site: SiteContainer, executor: ThreadPoolExecutor) -> None:
    with pytest.raises(SiteError) as refused:
        await connected(test_site, executor, private_key=new_key()[0])
    assert refused.value.reason == "AuthenticationFailed"
    with pytest.raises(SiteError) as unknown:
        await connected(test_site, executor, known_hosts="")
    assert unknown.value.reason == "HostKeyNotVerified"
    wrong = f"{test_site.host} ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBzvBYvO0pMSL9oB6dOWBSUbNqBRmVJm4ZYCAJvfqtku\n"
    with pytest.raises(SiteError) as mismatch:
        await connected(test_site, executor, known_hosts=wrong)
    assert mismatch.value.reason == "HostKeyNotVerified"
    with pytest.raises(SiteError) as closed:
        await SlurmSite(config(test_site, port=2222), executor, connect_timeout=3).connect()
    assert closed.value.reason == "Unreachable"
    with pytest.raises(SiteError) as garbage:
        await connected(test_site, executor, private_key="not a key")
    assert garbage.value.reason == "InvalidCredentials"


async def test_pool_backs_off_after_a_failed_login(test_site: SiteContainer) -> None:
    sites = SlurmSites(connect_timeout=3, backoff=30, max_backoff=60)
    try:
        bad = config(test_site, private_key=new_key()[0])
        with pytest.raises(SiteError):
            await sites.get("c", bad)
        with pytest.raises(SiteError):
            await sites.get("c", bad)  # answered from the back-off, no new login
        assert sites.retry_after("c") > 20
        good = config(test_site)
        site = await sites.get("c", good)  # another config: tried at once
        assert await sites.get("c", good) is site  # the connection is reused
        assert sites.retry_after("c") == 0
    finally:
        await sites.close()
