#!/usr/bin/env bash
# Generate tile-mm derivations + programs for mmNvidiaHigh at slot points,
# and the probe config's variants.
set -eu
cd /work/main
base=benchmarks/derivations/mm-tiled-vec.txt
i=$(grep "^map-lcl" $base | grep "d=1" | tail -1 | awk "{print \$3}"); ir=$i.0.0.0.0.0.0.1
# points: mt nt kc rm rn wx wy
pts=${PTS:-"128,128,16,8,8,4,4 64,128,16,4,8,4,4 64,128,16,8,8,4,4 128,64,16,8,8,4,4 64,64,16,4,4,4,4 64,128,32,4,8,4,4 128,128,8,8,8,4,4 64,64,32,4,4,4,4"}
vars=""
for p in $pts; do
  IFS=, read mt nt kc rm rn wx wy <<< "$p"
  for u in 0 1; do for cv in ${CVS:-1 4}; do
    n="t${mt}x${nt}k${kc}r${rm}x${rn}w${wx}${wy}u${u}c$cv"
    d=.dev/mmp/$n.txt
    { grep -v '^#' $base | grep -v '^tile-mm'; } > /tmp/rest.txt
    echo "tile-mm @ root kc=$kc mt=$mt nt=$nt rm=$rm rn=$rn wx=$wx wy=$wy" > $d
    C1=1.0.0.0.1.1.0.0.0.1.1.1.1.1.1.0.0.0.1; C2=1.0.0.0.1.1.0.0.0.1.1.1.1.1.1.0.0.0.0.0.1
    if [ $cv = 1 ]; then cat /tmp/rest.txt >> $d; else
    awk -v c1="$C1" -v c2="$C2" -v cv=$cv '{ if ($1=="map-lcl" && ($3==c1".0.0.0" || $3==c2".0.0.0")) { print "vectorize @ " $3 " n=" cv; print "map-lcl @ " $3 ".1 d=0"; next } print }' /tmp/rest.txt >> $d; fi
    [ $u = 1 ] && echo "reduce-seq-unroll @ $ir" >> $d
    ./target/release/lift rewrite benchmarks/mm-nvidia.lift --def mmNvidiaHigh --apply $d --out .dev/mmp/$n.lift > /dev/null
    lx=$((nt / rn)); ly=$((mt / rm))
    vars="$vars
    - name: lift-$n
      kernels:
        - { program: .dev/mmp/$n.lift, def: mmNvidiaHigh, static_sizes: true, args: { At: At, B: B }, output: C, global: [N / $rn, M / $rm], local: [$lx, $ly] }"
  done; done
done
python3 - "$vars" <<'PY'
import sys,re
v=sys.argv[1]
t=open('configs/mm-nvidia.yaml').read()
t=t.replace("  high_level: { program: benchmarks/mm-nvidia.lift, def: mmNvidiaHigh }","  high_level: { program: benchmarks/mm-nvidia.lift, def: mmNvidiaHigh }\n  variants:"+v)
open('.dev/pcfg/mm-nvidia.yaml','w').write(t)
PY
