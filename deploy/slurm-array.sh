#!/usr/bin/env bash
# Renders a large world as tiles with a Slurm job array, into shared storage.
#
#   sbatch deploy/slurm-array.sh world.ggs /shared/world/tiles [more geogen tiles options]
#
# The task with array index I renders shard I of SHARDS (`geogen tiles --shard I/SHARDS`: every
# SHARDS-th block of tiles from the I-th), so the array's indices are 0 to SHARDS-1. SHARDS is the
# array's size unless set: `sbatch --array=0-31 ...` makes 32 shards, `--array=0-31%4` the same
# with at most 4 running at once. All tasks write into the same directory on a shared file system;
# each holds only its own shard's lock. Resubmitting resumes: complete tiles are skipped. To run
# some tasks again, give the shard count, since the new array is smaller:
#
#   SHARDS=8 sbatch --array=3,5 deploy/slurm-array.sh world.ggs /shared/world/tiles
#
# When every task has finished, check the directory (and optionally write a web tile set):
#
#   geogen finish-tiles /shared/world/tiles --xyz /shared/world/web --map main --format colored
#
# Settings, from the environment sbatch is run in (it passes that environment on to the tasks),
# with their defaults; relative paths are taken from the directory sbatch is run in:
#
#   GEOGEN        the geogen binary, a path or a name on the compute nodes' PATH (geogen)
#   REGION        X,Y,W,H: the rendered region in pixels (0,0,100000,100000)
#   TILE          the side of a tile in pixels (2000)
#   MAP_SIZE      WxH: the size of a finite map (100000x100000; empty: the script's own)
#   SEED          the seed (7)
#   FORMATS       the output formats (png16,colored)
#   MEMORY_LIMIT  MiB that a task's renders may use together (three quarters of the task's --mem)
#
#   REGION=0,0,8192,8192 MAP_SIZE=8192x8192 TILE=1024 sbatch --array=0-3 deploy/slurm-array.sh \
#       world.ggs /shared/world/tiles -p Roughness=6
#
# Options on the sbatch command line override the #SBATCH lines below (--array, --cpus-per-task,
# --mem, --output, ...).
#SBATCH --job-name=geogen-world
#SBATCH --array=0-7
#SBATCH --cpus-per-task=2
#SBATCH --mem=4G
#SBATCH --time=02:00:00
#SBATCH --output=geogen-world-%A-%a.log
set -euo pipefail

usage="usage: sbatch slurm-array.sh SCRIPT OUTPUT_DIR [geogen tiles options]"
SCRIPT=${1:?$usage}
OUT=${2:?$usage}
shift 2
if [ -z "${SLURM_ARRAY_TASK_ID:-}" ]; then
    echo "slurm-array.sh: not a task of a job array (no SLURM_ARRAY_TASK_ID): submit it with sbatch --array" >&2
    exit 2
fi
SHARDS=${SHARDS:-${SLURM_ARRAY_TASK_COUNT:?}}
if [ "$SLURM_ARRAY_TASK_ID" -ge "$SHARDS" ]; then
    echo "slurm-array.sh: array index $SLURM_ARRAY_TASK_ID is not a shard of $SHARDS (indices 0 to $((SHARDS - 1)));" \
        "submit --array=0-$((SHARDS - 1)), or set SHARDS to the number of shards" >&2
    exit 2
fi

# Slurm gives the task its memory as --mem (per node; 0 is the whole node) or --mem-per-cpu;
# geogen's renders get three quarters of it, leaving room for the encoders, the program and the
# file system's buffers.
task_mib=${SLURM_MEM_PER_NODE:-}
if [ -z "$task_mib" ] && [ -n "${SLURM_MEM_PER_CPU:-}" ]; then
    task_mib=$((SLURM_MEM_PER_CPU * ${SLURM_CPUS_PER_TASK:-1}))
fi
[ "$task_mib" != 0 ] || task_mib=
MEMORY_LIMIT=${MEMORY_LIMIT:-${task_mib:+$((task_mib * 3 / 4))}}
map_size=${MAP_SIZE-100000x100000}
export RAYON_NUM_THREADS=${SLURM_CPUS_PER_TASK:-${SLURM_CPUS_ON_NODE:-1}}

echo "shard $SLURM_ARRAY_TASK_ID of $SHARDS on $(uname -n): $RAYON_NUM_THREADS threads," \
    "memory limit ${MEMORY_LIMIT:-by default a quarter of the machine}${MEMORY_LIMIT:+ MiB}"
exec "${GEOGEN:-geogen}" tiles "$SCRIPT" \
    --region="${REGION:-0,0,100000,100000}" --tile="${TILE:-2000}" ${map_size:+--map-size="$map_size"} \
    --seed="${SEED:-7}" --format="${FORMATS:-png16,colored}" --shard="$SLURM_ARRAY_TASK_ID/$SHARDS" \
    ${MEMORY_LIMIT:+--memory-limit="$MEMORY_LIMIT"} -o "$OUT" "$@"
