#!/usr/bin/env bash
# Renders a large world as tiles with a Slurm job array, into shared storage.
#
#   sbatch deploy/slurm-array.sh world.ggs /shared/world/tiles
#
# Slurm sets SLURM_ARRAY_TASK_ID in every task of the array (and SLURM_ARRAY_TASK_MIN, which geogen
# subtracts, so --array=1-8 works as well as 0-7); `geogen tiles ... --shard N` renders every N-th
# block of tiles from that index. All tasks write into the same directory on a shared file system; each holds
# only its own shard's lock. Resubmitting the array (or one task) resumes: complete tiles are
# skipped. When every task has finished, check the directory (and optionally write a web tile set):
#
#   geogen finish-tiles /shared/world/tiles --xyz /shared/world/web --map main --format colored
#
# Keep SHARDS equal to the size of the array.
#SBATCH --job-name=geogen-world
#SBATCH --array=0-7
#SBATCH --cpus-per-task=2
#SBATCH --mem=4G
#SBATCH --time=02:00:00
#SBATCH --output=geogen-world-%A-%a.log
set -euo pipefail

SHARDS=8
SCRIPT=${1:?usage: sbatch slurm-array.sh SCRIPT OUTPUT_DIR}
OUT=${2:?usage: sbatch slurm-array.sh SCRIPT OUTPUT_DIR}
export RAYON_NUM_THREADS=${SLURM_CPUS_PER_TASK:-2}

exec geogen tiles "$SCRIPT" \
  --region=0,0,100000,100000 --tile=2000 --map-size=100000x100000 --seed=7 \
  --format=png16,colored --shard="$SHARDS" --memory-limit=3072 -q -o "$OUT"
