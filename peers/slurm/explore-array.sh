#!/usr/bin/env bash
# A `lift explore` search split over a Slurm cluster (docs/EXPLORE.md,
# "Shards"): a job array of N tasks, task I running shard I/N on one GPU,
# and a merge job that starts once every task has ended and writes the
# best program into the shared --out folder.
#
# Submit from the repository root on a login node:
#   peers/slurm/explore-array.sh N FILE.lift --def D --size N=... --budget 30m \
#       --device nvidia --out /shared/explore-D
# Environment: LIFT (the binary, default ./target/release/lift, on a file
# system the nodes share), SBATCH_EXTRA (more sbatch options, such as a
# partition or an account; split at spaces).
#
# Untested on a real cluster: only its syntax is checked (`bash -n`).
set -euo pipefail

LIFT=${LIFT:-./target/release/lift}

case "${1:-}" in
  --shard-task)
    # One task of the array: shard I of N, I from the array.
    shift
    count=${SLURM_ARRAY_TASK_COUNT:-$((SLURM_ARRAY_TASK_MAX - SLURM_ARRAY_TASK_MIN + 1))}
    exec "$LIFT" explore "$@" --shard "${SLURM_ARRAY_TASK_ID}/${count}"
    ;;
  --merge-task)
    shift
    exec "$LIFT" explore "$@" --merge
    ;;
esac

if [ $# -lt 2 ]; then
  echo "usage: $0 SHARDS FILE.lift --def D --size ... --out DIR [lift explore options]" >&2
  exit 2
fi
shards=$1
shift
if ! [[ $shards =~ ^[0-9]+$ ]] || [ "$shards" -lt 1 ] || [ "$shards" -gt 4096 ]; then
  echo "$0: SHARDS \`$shards\`: expected an integer from 1 to 4096" >&2
  exit 2
fi
# shellcheck disable=SC2206 # split on purpose
extra=(${SBATCH_EXTRA:-})
script=$(realpath "$0")
array=$(sbatch --parsable "${extra[@]}" --job-name=lift-explore --gres=gpu:1 \
  --array="0-$((shards - 1))" --output=lift-explore-%A_%a.out \
  "$script" --shard-task "$@")
array=${array%%;*}
merge=$(sbatch --parsable "${extra[@]}" --job-name=lift-explore-merge --gres=gpu:1 \
  --dependency="afterany:${array}" --output=lift-explore-merge-%j.out \
  "$script" --merge-task "$@")
echo "shards: job array ${array} (${shards} tasks); merge: job ${merge%%;*}"
