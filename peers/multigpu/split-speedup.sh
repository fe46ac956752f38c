#!/usr/bin/env bash
# The "Two GPUs" goal of issue 20: one fixed search (a budget the search
# does not reach, so it ends by itself) on one device and on every device of
# that model (`--device SEL`, which takes all identical devices; see
# docs/EXPLORE.md, "Several devices"). Prints both wall times, their ratio,
# whether the best programs are the same, and whether both measured the same
# candidates. Both are the same only where the times are: a shape with two
# or more slots follows its measured times (docs/EXPLORE.md, "Tuner"), so
# timing noise between near-equal candidates can change the path and the
# winner on one device as well (on PoCL, two one-device runs of scal at
# depth 1 already differ). Run from the repository root on the GPU machine:
#   peers/multigpu/split-speedup.sh nvidia [OUTDIR]
# Environment: LIFT (default ./target/release/lift); ONLY (names of the
# list below to run, all by default); THREADS=1 also times the search with
# every device measured from a thread of one process (`--threads`).
set -euo pipefail

LIFT=${LIFT:-./target/release/lift}
# NVIDIA's driver keeps built kernels in a disk cache (~/.nv/ComputeCache):
# the second search of a program would find most of its kernels built by
# the first and spend less time building. Both searches build everything.
export CUDA_CACHE_DISABLE=1
sel=${1:?usage: $0 SELECTOR [OUTDIR]}
out=${2:-split-speedup}
mkdir -p "$out"
# The first device the selector takes, as P:D (one device alone).
one=$("$LIFT" devices | grep -i "$sel" | grep -o '^\[[0-9]*:[0-9]*\]' | head -1 | tr -d '[]')
[ -n "$one" ] || { echo "$0: no device matches \`$sel\`" >&2; exit 2; }

timed() { # tag selector file def depth budget size [extra flag]
  local t0 t1
  t0=$(date +%s.%N)
  "$LIFT" explore "$3" --def "$4" --device "$2" --depth "$5" --budget "$6" --size "$7" \
    --out "$out/$1" ${8:-} >"$out/$1.txt" 2>&1
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }'
}

# Program and sizes: small spaces that end well within the budget.
while read -r name file def depth size; do
  # ONLY="scal gemv" runs those of the list alone.
  if [ -n "${ONLY:-}" ] && ! grep -qw "$name" <<<"$ONLY"; then continue; fi
  a=$(timed "$name-one" "$one" "$file" "$def" "$depth" 20m "$size")
  b=$(timed "$name-all" "$sel" "$file" "$def" "$depth" 20m "$size")
  # THREADS=1: the devices measured from threads of one process as well
  # (`--threads`; by default each device but the first has a process).
  if [ -n "${THREADS:-}" ]; then
    c=$(timed "$name-threads" "$sel" "$file" "$def" "$depth" 20m "$size" --threads)
    echo "$name: all devices from threads of one process ${c}s, speed-up $(awk -v a="$a" -v c="$c" 'BEGIN { printf "%.2f", a / c }')x"
    grep "shared the search" "$out/$name-threads.txt" || true
  fi
  # What each run wrote: best.lift without its first line (the candidate's
  # number in that run's order and its time, which differ between runs) but
  # with the launch lines after it (local size, sizes compiled for): the
  # program and its launch, read from the file itself.
  written() { tail -n +2 "$out/$1/best.lift"; }
  same=no
  if diff <(written "$name-one") <(written "$name-all") >/dev/null; then
    same=yes
  fi
  points() { tail -n +2 "$1" | cut -d, -f4,7 | sort; }
  cands=no
  if diff <(points "$out/$name-one/explore.csv") <(points "$out/$name-all/explore.csv") >/dev/null; then
    cands=yes
  fi
  echo "$name: one device ${a}s, all ${b}s, speed-up $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')x; same best: $same; same candidates: $cands"
  # The search alone (lift explore's `time:` line), without start-up and
  # the result line's copy-bandwidth measurement.
  search() { grep -o 'search [0-9.]* s' "$out/$1.txt" | grep -o '[0-9.]*' | head -1; }
  sa=$(search "$name-one"); sb=$(search "$name-all")
  if [ -n "$sa" ] && [ -n "$sb" ]; then
    echo "$name: search alone ${sa}s and ${sb}s, speed-up $(awk -v a="$sa" -v b="$sb" 'BEGIN { printf "%.2f", a / b }')x"
  fi
  grep -h "best" "$out/$name-one.txt" "$out/$name-all.txt" || true
  # The candidate each wrote, by its hash (the same point has the same hash).
  head -2 "$out/$name-one/best.lift" "$out/$name-all/best.lift" || true
  grep "shared the search" "$out/$name-all.txt" || true
done <<'LIST'
scal benchmarks/scal.lift scalHigh 1 N=16777216
dot benchmarks/dot.lift dotHigh 1 N=16777216
gemv benchmarks/gemv.lift gemvHigh 1 M=4096,N=4096
LIST
