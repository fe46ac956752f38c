#!/usr/bin/env bash
# Explores the ICFP 2015 benchmarks (and optionally the CGO 2017 high-level
# defs) on one device and collects what `lift all` needs:
#   .ci/explore-icfp15.sh DEVICE OUTDIR [SECONDS] [BENCH ...]
# DEVICE: a `lift explore --device` selector (`nvidia`, `pocl`, `0:0`).
# SECONDS: the budget per benchmark (default 150).
# BENCH: any of scal asum dot gemv blackscholes md cgo-gemv mm-nvidia
#        (default: the six ICFP 2015 benchmarks).
# The ICFP 2015 benchmarks are explored as their config's
# `explored.explore:` block says (`lift explore --from`: the program, the
# def, the second stages, the preset timed and the presets it must also
# fit, the config's validation), the one source of these arguments that
# `lift run` uses too where a device has no committed program.
# Writes OUTDIR/<bench>/ (explore.csv, best.lift, best.derivation) and
# OUTDIR/explored/<slug>/<bench>.{lift,derivation} with a header naming the
# command, the commit and the log, plus OUTDIR/reports/<slug>/explore-<bench>.csv:
# copy OUTDIR/explored and OUTDIR/reports over benchmarks/explored and
# reports/ to commit them.
set -euo pipefail
cd "$(dirname "$0")/.."
dev=${1:?device selector}; out=${2:?output folder}; secs=${3:-150}
shift $(( $# < 3 ? $# : 3 ))
benches=("$@")
[ ${#benches[@]} -eq 0 ] && benches=(scal asum dot gemv blackscholes md)
lift=${LIFT:-target/release/lift}
[ -x "$lift" ] || cargo build --release --quiet
commit=${LIFT_GIT_COMMIT:-$(git -c core.fsmonitor= rev-parse --short HEAD 2>/dev/null || echo unknown)}
mkdir -p "$out"
for b in "${benches[@]}"; do
    case $b in
        scal|asum|dot|gemv|blackscholes|md) args=(--from "configs/icfp15-$b.yaml") ;;
        cgo-gemv)     args=(benchmarks/gemv.lift --def gemvHigh --size M=4096,N=4096) ;;
        mm-nvidia)    args=(benchmarks/mm-nvidia.lift --def mmNvidiaHigh --size M=1024,N=1024,K=1024) ;;
        *) echo "unknown benchmark $b" >&2; exit 2 ;;
    esac
    cmd=(explore "${args[@]}" --device "$dev" --budget "${secs}s" --seed 1 --out "$out/$b")
    echo "== lift ${cmd[*]}"
    "$lift" "${cmd[@]}" | tee "$out/$b.txt" || { echo "== $b: no program found" >&2; continue; }
    slug=$(sed -n 's/^[^[]*\[\([^]]*\)\]: .*tried.*/\1/p' "$out/$b.txt" | head -1)
    [ -n "$slug" ] && [ -f "$out/$b/best.lift" ] || continue
    mkdir -p "$out/reports/$slug"
    cp "$out/$b/explore.csv" "$out/reports/$slug/explore-$b.csv"
    # Only the ICFP 2015 programs have an `explored` variant to load them;
    # the CGO 2017 ones stay in OUTDIR/<bench>/ (compare their best time
    # with `lift run gemv mm-nvidia --variants all`).
    case $b in cgo-gemv|mm-nvidia) continue ;; esac
    mkdir -p "$out/explored/$slug"
    line="${cmd[*]}"; head="lift ${line%% --out*} (commit $commit; log: reports/$slug/explore-$b.csv)"
    { echo "// $head"; cat "$out/$b/best.lift"; } > "$out/explored/$slug/$b.lift"
    { echo "# $head"; cat "$out/$b/best.derivation"; } > "$out/explored/$slug/$b.derivation"
done
