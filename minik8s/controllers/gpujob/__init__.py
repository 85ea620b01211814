"""GPU jobs: CUDA programs run as Slurm batch jobs on HPC login nodes reached over SSH.

* :mod:`.controller` — the GPUJob controller (upload, build, submit, follow, fetch, cancel);
* :mod:`.clusters` — the SlurmCluster checks (Reachable, version, partitions) and the Secret;
* :mod:`.site` — a Slurm site as asyncio calls over one SSH connection (threads), and the
  per-cluster connection pool;
* :mod:`.ssh` — the blocking SSH/SFTP connection (paramiko) and the one error type;
* :mod:`.slurm` — the ``#SBATCH`` script and the parsing of Slurm's command output;
* :mod:`.results` — the results ConfigMap.
"""

from minik8s.controllers.gpujob.controller import GPUJobController, GPUJobOptions

__all__ = ["GPUJobController", "GPUJobOptions"]
