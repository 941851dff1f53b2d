#!/bin/sh
# Diagnose every node of an allocation, one task per node, then summarize the fleet.
#   sbatch --nodes=16 docs/fleet/slurm-gpu-doctor.sh      (or run the two commands inside salloc)
#SBATCH --job-name=gpu-doctor
#SBATCH --ntasks-per-node=1
# Request every GPU of each node (set 8 to your nodes' count) and the whole node. With ConstrainDevices=yes
# in cgroup.conf a task sees only the GPUs it was allocated: without this every node reports "no GPU".
# --exclusive alone is not enough: a step does not get the GPUs an exclusive job holds only implicitly.
#SBATCH --gpus-per-node=8
#SBATCH --exclusive
#SBATCH --time=00:10:00
mkdir -p reports
# gpu-doctor exits 1 when a node has findings: that is a result, not a job failure.
srun --nodes="${SLURM_JOB_NUM_NODES:-1}" --ntasks-per-node=1 --gpus-per-node="${SLURM_GPUS_PER_NODE:-8}" \
    sh -c 'gpu-doctor --json > reports/$(hostname).json' || true
gpu-doctor summarize reports/*.json
