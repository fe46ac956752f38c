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
  local wg vec tile u k r g st b t ax atv mm
  for wg in 128 256 512; do for vec in 1 2 4 8; do echo "scal|{ WG: $wg, VEC: $vec }"; done; done
  for tile in 128 256 512; do for u in 1 4 8 16; do echo "nbody-nvidia|{ TILE: $tile, UNROLL: $u }"; done; done
  for k in 1 2 4 8 16 32; do echo "mm-amd|{ UNROLL_K: $k }"; done
  for wg in 64 128 256 512; do for u in 4 8 16; do echo "md|{ WG: $wg, UNROLL: $u }"; done; done
  for wg in 64 128 256 512 1024; do echo "kmeans|{ WG: $wg }"; echo "nn|{ WG: $wg }"; echo "mri-q|{ WG: $wg }"; done
  for wg in 64 128 256 512; do for u in 4 8 16; do echo "nbody-amd|{ WG: $wg, UNROLL: $u }"; done; done
  for tile in 8 16 32; do echo "transpose|{ TILE: $tile }"; done
  # CGO 2017, blocked references: a few shapes around the default.
  for wg in 128 256 512; do for r in 1 2 4; do
    echo "gemv|{ WG: $wg, ROWS: $r }"; echo "gesummv|{ WG: $wg, ROWS: $r }"; echo "icfp15-gemv|{ WG: $wg, ROWS: $r }"
  done; done
  for ax in "WG: 256, ROWS: 2" "WG: 128, ROWS: 2" "WG: 256, ROWS: 4"; do
    for atv in "TX: 64, TY: 4, SLICES: 64" "TX: 32, TY: 8, SLICES: 64" "TX: 64, TY: 8, SLICES: 64" "TX: 64, TY: 4, SLICES: 32"; do
      echo "atax|{ $ax, $atv }"
    done
  done
  # mm-nvidia: TM x TN tile, K step, work-group WX x WY (TM / WY x TN / WX per work-item)
  for mm in "128 128 16 16 16" "128 128 8 16 16" "128 128 32 16 16" "64 64 16 16 16" "64 64 16 8 8" \
            "128 128 16 32 8" "128 128 16 8 32" "64 128 16 16 16"; do
    set -- $mm; echo "mm-nvidia|{ TM: $1, TN: $2, TK: $3, WX: $4, WY: $5 }"
  done
  for b in "32 8" "32 4" "64 4" "32 16"; do for st in 4 8; do
    set -- $b; echo "convolution|{ BX: $1, BY: $2, ROW_STEPS: $st, COL_STEPS: $st }"
  done; done
  # ICFP 2015
  for wg in 128 256; do for g in 240 1056 4224 0; do echo "icfp15-blackscholes|{ WG: $wg, GROUPS: $g }"; done; done
  for wg in 64 512; do echo "icfp15-blackscholes|{ WG: $wg, GROUPS: 0 }"; done
  for wg in 64 128 256 512; do for u in 4 8 16; do echo "icfp15-md|{ WG: $wg, UNROLL: $u }"; done; done
  for wg in 64 128 256 512 1024; do echo "icfp15-scal|{ WG: $wg }"; done
  for wg in 128 256 512; do for g in 256 1024 4096; do
    echo "icfp15-asum|{ WG: $wg, GROUPS: $g }"; echo "icfp15-dot|{ WG: $wg, GROUPS: $g }"
  done; done
  # CGO 2018 stencils: the work-group shape (stencil2d: tile width, height, rows per work-item)
  for b in "32 2" "32 4" "32 8" "64 2" "64 4" "128 2" "256 1"; do
    set -- $b; echo "acoustic|{ BX: $1, BY: $2 }"; echo "hotspot3d|{ BX: $1, BY: $2 }"
  done
  for b in "16 16" "32 4" "32 8" "32 16" "64 4" "64 8" "128 2"; do
    set -- $b; echo "hotspot2d|{ BX: $1, BY: $2 }"; echo "srad1|{ BX: $1, BY: $2 }"; echo "srad2|{ BX: $1, BY: $2 }"
  done
  for t in "32 8 4" "32 8 2" "32 8 8" "32 4 8" "32 16 2" "32 16 4" "16 16 2" "32 32 1"; do
    set -- $t; echo "stencil2d|{ TW: $1, BY: $2, ROWS_PER_ITEM: $3 }"
  done
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
  row=$(grep -h "^$bench,${SIZE:-small},reference," "$run"/*/results*.csv 2>/dev/null | head -1 || true)
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
  row=$(grep -h "^convolution,${SIZE:-small},all," "$run"/*/results*.csv 2>/dev/null | head -1 || true)
  status=$(echo "$row" | cut -d, -f4); median=$(echo "$row" | cut -d, -f5)
  echo "convolution-lift,\"{ def: $def }\",${status:-error},$median" | tee -a "$out/tuning.csv"
done

# Best ok candidate per benchmark (lowest median).
tail -n +2 "$out/tuning.csv" | awk -F'",' '{split($1, a, ",\""); split($2, b, ","); if (b[1] == "ok" && (!(a[1] in best) || b[2] < best[a[1]])) {best[a[1]] = b[2]; p[a[1]] = a[2]}}
  END {for (k in best) print k ": " p[k] " (" best[k] " ms)"}' | sort > "$out/best.txt"
cat "$out/best.txt"
