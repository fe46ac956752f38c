#!/usr/bin/env bash
# Times the tiled MM of the `tile-mm` rule against the hand-written
# mm-nvidia program, at M = N = K = 1024 (the `small` preset):
#   .ci/time-mm-tiled.sh OUTDIR [DEVICE] [SIZE]
# DEVICE: a `lift run --device` selector (default `gpu`); SIZE: a preset of
# configs/mm-nvidia.yaml (default `small`).
# Runs configs/mm-nvidia.yaml (reference, the hand-written mmNvidia at level
# `all`) plus named variants, each validated against the gold:
#   lift-tiled:       mmTiled of benchmarks/mm-tiled.lift (written by hand
#                     in the rules' shape, 128 x 128 tiles, 8 x 8 per work-item)
#   lift-derived:     mmTiledHigh + benchmarks/derivations/mm-tiled.txt (the
#                     same kernel, derived by the rules)
#   lift-tiled4, lift-derived-vec: the same with B's values as float4
#                     (mmTiled4; mm-tiled-vec.txt)
#   lift-d-MT-NT-KC-RM-RN-xWX-yWY[-u]: the derivation with other tile
#                     sizes and vector widths of At's and B's values (-u: the
#                     k loop of a chunk unrolled, reduce-seq-unroll)
# The config copy and derivations go to OUTDIR/configs, results to
# OUTDIR/<device-slug>/results.csv (compare median_ms of the rows).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?output folder}; dev=${2:-gpu}; size=${3:-small}
lift=${LIFT:-target/release/lift}
[ -x "$lift" ] || cargo build --release --quiet
mkdir -p "$out/configs"
out=$(cd "$out" && pwd)
# Lowering steps after `tile-mm` at the root (positions of the rule's
# result; src/explore/matmul.rs builds the same list).
derivation() { # MT NT KC RM RN UNROLL WX WY
    local W=1.0.0.0.1.1.0.0.0.1.1.1.1
    local R=$W.1.1 L1=$W.1.1.0.0.0
    local L2=$L1.0.0
    local I=$L2.0.0
    local IR=$I.0.0.0.0.0.0.1
    local AP=$IR.0.0.0
    echo "tile-mm @ root kc=$3 mt=$1 nt=$2 rm=$4 rn=$5 wx=$7 wy=$8"
    echo "map-wrg @ 1 d=1"; echo "map-wrg @ 1.0.0.0.1.1 d=0"
    echo "map-lcl @ $W d=1"; echo "map-lcl @ $W.0.0.0 d=0"
    echo "map-seq @ $W.0.0.0.0.0.0"; echo "map-seq @ $W.0.0.0.0.0.0.0.0.0"; echo "to-global @ $W.0.0.0.0.0.0"
    echo "map-lcl @ $R.1 d=1"; echo "map-lcl @ $R.1.0.0.0 d=0"
    echo "map-seq @ $R.1.0.0.0.0.0.0"; echo "map-seq @ $R.1.0.0.0.0.0.0.0.0.0"; echo "to-private @ $R.1.0.0.0.0.0.0"
    for L in $L1 $L2; do
        echo "map-id-nd @ $L.1"; echo "map-lcl @ $L.1 d=1"; echo "map-lcl @ $L.1.0.0.0 d=0"; echo "to-local @ $L.1"
    done
    echo "map-lcl @ $I d=1"; echo "map-lcl @ $I.0.0.0 d=0"
    echo "map-seq @ $AP.1"; echo "to-private @ $AP.1"
    echo "map-seq @ $AP.0.0"; echo "map-seq @ $AP.0.0.0.0.0"; echo "to-private @ $AP.0.0"
    [ "$6" = 1 ] && echo "reduce-seq-unroll @ $IR"
    return 0
}
cfg=$out/configs/mm-nvidia.yaml
# The config without its variant list, then the named variants under `lift:`.
sed '/^variants:/d' configs/mm-nvidia.yaml > "$cfg"
names=(reference all lift-tiled lift-derived lift-tiled4 lift-derived-vec)
vars="  variants:
    - name: lift-tiled
      kernels:
        - { program: benchmarks/mm-tiled.lift, def: mmTiled, static_sizes: true, args: { At: At, B: B }, output: C, global: [N / 8, M / 8], local: [16, 16] }
    - name: lift-derived
      kernels:
        - { program: benchmarks/mm-tiled.lift, def: mmTiledHigh, derivation: benchmarks/derivations/mm-tiled.txt, static_sizes: true, args: { At: At, B: B }, output: C, global: [N / 8, M / 8], local: [16, 16] }
    - name: lift-tiled4
      kernels:
        - { program: benchmarks/mm-tiled.lift, def: mmTiled4, static_sizes: true, args: { At: At, B: B }, output: C, global: [N / 8, M / 8], local: [16, 16] }
    - name: lift-derived-vec
      kernels:
        - { program: benchmarks/mm-tiled.lift, def: mmTiledHigh, derivation: benchmarks/derivations/mm-tiled-vec.txt, static_sizes: true, args: { At: At, B: B }, output: C, global: [N / 8, M / 8], local: [16, 16] }"
for p in "128 128 16 8 8 0 4 4" "128 128 16 8 8 1 4 4" "128 128 8 8 8 0 4 4" "128 128 32 8 8 0 4 4" \
         "128 128 16 8 8 0 1 4" "128 128 16 8 8 1 1 1" "128 128 16 8 8 0 8 8" "64 64 16 4 4 0 4 4" \
         "64 64 16 4 4 1 4 4" "64 64 32 4 4 1 4 4" "64 64 16 4 4 0 1 1" "128 64 16 8 4 0 4 4" \
         "64 128 16 4 8 0 4 4" "64 128 16 8 8 0 4 4" "128 64 16 8 8 0 4 4" "32 128 16 4 8 0 4 4"; do
    set -- $p
    name="lift-d-$1-$2-$3-$4-$5-x$7-y$8$([ "$6" = 1 ] && echo -u || true)"
    derivation "$@" > "$out/configs/$name.txt"
    names+=("$name")
    vars+="
    - name: $name
      kernels:
        - { program: benchmarks/mm-tiled.lift, def: mmTiledHigh, derivation: $out/configs/$name.txt, static_sizes: true, args: { At: At, B: B }, output: C, global: [N / $5, M / $4], local: [$(( $2 / $5 )), $(( $1 / $4 ))] }"
done
awk -v v="$vars" '{ print } /^lift:/ { print v }' "$cfg" > "$cfg.tmp" && mv "$cfg.tmp" "$cfg"
list=$(IFS=,; echo "${names[*]}")
echo "== lift run mm-nvidia --configs $out/configs --device $dev --size $size --variants $list --out $out"
# `lift run` exits 1 after the table when Figure 8 cannot show the named
# variants; the rows are in results.csv all the same.
"$lift" run mm-nvidia --configs "$out/configs" --root . --device "$dev" --size "$size" --variants "$list" --out "$out" \
    || echo "== (the chart step fails on named variants; the results are in $out/<device-slug>/results.csv)"
