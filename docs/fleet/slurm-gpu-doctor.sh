#!/bin/sh
# Diagnose every node of an allocation, one task per node, then summarize the fleet.
#   sbatch --nodes=16 docs/fleet/slurm-gpu-doctor.sh      (or run the two commands inside salloc)
#SBATCH --job-name=gpu-doctor
#SBATCH --ntasks-per-node=1
#SBATCH --time=00:10:00
mkdir -p reports
# gpu-doctor exits 1 when a node has findings: that is a result, not a job failure.
srun --nodes="${SLURM_JOB_NUM_NODES:-1}" --ntasks-per-node=1 \
    sh -c 'gpu-doctor --json > reports/$(hostname).json' || true
gpu-doctor summarize reports/*.json
