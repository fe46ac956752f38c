#!/usr/bin/env bash
# Sweep the references' tuning parameters on one device (see TUNING.md):
# for every candidate, a copy of the benchmark's config with its
# `params:` line replaced runs the reference alone at the `small` size; the
# medians go to $OUT/tuning.csv and the best candidate per benchmark to
# $OUT/best.txt. Usage: [SIZE=small] references/tune.sh [--device nvidia] [OUT]
set -euo pipefail
dev=()
if [ "${1:-}" = "--device" ]; then dev=(--device "$2"); shift 2; fi
out="${1:-tuning}"
lift="${LIFT:-target/release/lift}"
mkdir -p "$out"
echo "benchmark,params,status,median_ms" > "$out/tuning.csv"

# benchmark | candidate params (one YAML flow map each)
candidates() {
  local wg vec tile u k
  for wg in 128 256 512; do for vec in 1 2 4 8; do echo "scal|{ WG: $wg, VEC: $vec }"; done; done
  for tile in 128 256 512; do for u in 1 4 8 16; do echo "nbody-nvidia|{ TILE: $tile, UNROLL: $u }"; done; done
  for k in 1 2 4 8 16; do echo "mm-amd|{ UNROLL_K: $k }"; done
  for wg in 64 128 256 512; do for u in 4 8 16; do echo "md|{ WG: $wg, UNROLL: $u }"; done; done
  for wg in 64 128 256 512 1024; do echo "kmeans|{ WG: $wg }"; echo "nn|{ WG: $wg }"; echo "mri-q|{ WG: $wg }"; done
  for wg in 64 128 256 512; do for u in 4 8 16; do echo "nbody-amd|{ WG: $wg, UNROLL: $u }"; done; done
  for tile in 8 16 32; do echo "transpose|{ TILE: $tile }"; done
}

# ONLY='md|nn' limits the sweep to those benchmarks.
candidates | grep -E "^(${ONLY:-[^|]*})\\|" | while IFS='|' read -r bench params; do
  dir="$out/cfg"; rm -rf "$dir"; mkdir -p "$dir"
  # per_device overrides would shadow the swept params on their device: drop them.
  sed -e "s|^  params: {.*}|  params: $params|" -e "/^  per_device:/d" "configs/$bench.yaml" > "$dir/$bench.yaml"
  grep -q "^  params: $params" "$dir/$bench.yaml" || { echo "no params line in $bench" >&2; exit 2; }
  run="$out/run"; rm -rf "$run"
  "$lift" run "$bench" "${dev[@]}" --configs "$dir" --size "${SIZE:-small}" --variants reference --runs 5 \
    --out "$run" >/dev/null 2>&1 || true
  row=$(grep -h "^$bench,${SIZE:-small},reference," "$run"/*/results.csv 2>/dev/null | head -1 || true)
  status=$(echo "$row" | cut -d, -f4); median=$(echo "$row" | cut -d, -f5)
  echo "$bench,\"$params\",${status:-error},$median" | tee -a "$out/tuning.csv"
done

# The convolution's two pattern-built row passes (benchmarks/convolution.lift):
# the Lift program, level `all`, with either def.
for def in convolutionRows convolutionRowsBlocked; do
  dir="$out/cfg"; rm -rf "$dir"; mkdir -p "$dir"
  sed "s|def: convolutionRows$|def: $def|" configs/convolution.yaml > "$dir/convolution.yaml"
  run="$out/run"; rm -rf "$run"
  "$lift" run convolution "${dev[@]}" --configs "$dir" --size "${SIZE:-small}" --variants all --runs 5 \
    --out "$run" >/dev/null 2>&1 || true
  row=$(grep -h "^convolution,${SIZE:-small},all," "$run"/*/results.csv 2>/dev/null | head -1 || true)
  status=$(echo "$row" | cut -d, -f4); median=$(echo "$row" | cut -d, -f5)
  echo "convolution-lift,\"{ def: $def }\",${status:-error},$median" | tee -a "$out/tuning.csv"
done

# Best ok candidate per benchmark (lowest median).
tail -n +2 "$out/tuning.csv" | awk -F'",' '{split($1, a, ",\""); split($2, b, ","); if (b[1] == "ok" && (!(a[1] in best) || b[2] < best[a[1]])) {best[a[1]] = b[2]; p[a[1]] = a[2]}}
  END {for (k in best) print k ": " p[k] " (" best[k] " ms)"}' | sort > "$out/best.txt"
cat "$out/best.txt"
