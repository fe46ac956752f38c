#!/usr/bin/env bash
# Explores the 14 CGO 2018 stencils (`lift explore`, the stencil space of
# src/explore/stencil.rs) on one device and writes each best program as
# DIR/cgo18-<benchmark>.lift (+ .derivation), the files the harness's
# `lift-tuned` variant loads from benchmarks/explored/<device-slug>/, and
# each search's log as DIR/explore-cgo18-<benchmark>.csv (for reports/).
#
#   .ci/explore-cgo18.sh DIR [SIZE] [BUDGET] [DEVICE]
#
# SIZE: the preset timed (tiny, small, large; default large); BUDGET per
# benchmark (default 30s); DEVICE: a `lift explore --device` selector
# (default gpu). Every kept program also satisfies its rules' constraints
# at the other presets (--valid-at), so it runs at every size.
# RUNS (environment, default 5): timed runs per candidate; ONLY (environment):
# a space-separated list of benchmarks to explore (default all). A benchmark
# whose search fails is reported at the end; the others go on.
# 14 x 30 s = 7 minutes of device time at the defaults, plus a few seconds
# per benchmark (parsing, building the space, the candidate still running
# at the deadline).
set -euo pipefail
DIR=${1:?usage: .ci/explore-cgo18.sh DIR [SIZE] [BUDGET] [DEVICE]}
SIZE=${2:-large}
BUDGET=${3:-30s}
DEVICE=${4:-gpu}
LIFT=${LIFT:-target/release/lift}
ONLY=${ONLY:-}
# name def tiny small large
BENCHES=(
  "acoustic acousticHigh W=96,H=12,D=12 W=512,H=256,D=404 W=512,H=512,D=404"
  "gaussian gaussianHigh W=96,H=40 W=4096,H=4096 W=8192,H=8192"
  "gradient gradientHigh W=96,H=40 W=4096,H=4096 W=8192,H=8192"
  "heat heatHigh W=96,H=24,D=24 W=256,H=256,D=256 W=512,H=512,D=512"
  "hotspot2d hotspot2dHigh W=96,H=40 W=8192,H=4096 W=8192,H=8192"
  "hotspot3d hotspot3dHigh W=96,H=12,D=12 W=512,H=256,D=8 W=512,H=512,D=8"
  "jacobi2d-5pt jacobi2d5High W=96,H=40 W=4096,H=4096 W=8192,H=8192"
  "jacobi2d-9pt jacobi2d9High W=96,H=40 W=4096,H=4096 W=8192,H=8192"
  "jacobi3d-13pt jacobi3d13High W=96,H=24,D=24 W=256,H=256,D=256 W=512,H=512,D=512"
  "jacobi3d-7pt jacobi3d7High W=96,H=24,D=24 W=256,H=256,D=256 W=512,H=512,D=512"
  "poisson poissonHigh W=96,H=24,D=24 W=256,H=256,D=256 W=512,H=512,D=512"
  "srad1 srad1High W=112,H=10 W=504,H=230 W=504,H=458"
  "srad2 srad2High W=112,H=10 W=504,H=230 W=504,H=458"
  "stencil2d stencil2dHigh W=98,H=66 W=4098,H=2050 W=4098,H=4098"
)
mkdir -p "$DIR"
failed=()
for row in "${BENCHES[@]}"; do
  read -r name def tiny small large <<<"$row"
  case "$SIZE" in tiny) at=$tiny ;; small) at=$small ;; large) at=$large ;;
    *) echo "explore-cgo18.sh: SIZE must be tiny, small or large, not $SIZE" >&2; exit 2 ;; esac
  out="$DIR/$name"
  if [ -n "$ONLY" ] && [[ " $ONLY " != *" $name "* ]]; then continue; fi
  if "$LIFT" explore "benchmarks/cgo18/$name.lift" --def "$def" --device "$DEVICE" --size "$at" \
    --valid-at "$tiny" --valid-at "$small" --valid-at "$large" --budget "$BUDGET" --runs "${RUNS:-5}" --out "$out" \
    && [ -f "$out/best.lift" ]; then
    cp "$out/best.lift" "$DIR/cgo18-$name.lift"
    cp "$out/best.derivation" "$DIR/cgo18-$name.derivation"
    cp "$out/explore.csv" "$DIR/explore-cgo18-$name.csv"
  else
    [ -f "$out/explore.csv" ] && cp "$out/explore.csv" "$DIR/explore-cgo18-$name.csv"
    echo "explore-cgo18.sh: $name: no program found (see $out/explore.csv)" >&2
    failed+=("$name")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "explore-cgo18.sh: failed: ${failed[*]}" >&2
  exit 1
fi
