#!/usr/bin/env bash
set -u
export LD_LIBRARY_PATH=$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
d=/tmp/icd; mkdir -p $d; echo libnvidia-opencl.so.1 > $d/nvidia.icd; export OCL_ICD_VENDORS=$d
export LIFT_GIT_COMMIT=${COMMIT}
W=/root/ph; mkdir -p $W
while read p s; do
  timeout 100 .dev/lift explore benchmarks/generality/$p.lift --def $p --device nvidia --size $s --budget ${BUDGET:-30s} --out $W/$p > $W/explore-$p.log 2>&1
  echo "== $p rc=$?"; grep -E "tried|time:" $W/explore-$p.log
  cp $W/$p/explore.csv $W/explore-$p.csv 2>/dev/null
done <<L
${LIST}
L
tar czf $OUT/ph.tgz -C $W --exclude='*/' $(cd $W && ls *.log *.csv)
