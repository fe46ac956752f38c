#!/usr/bin/env bash
# The four matmul layouts at 4096^3 (explore 60 s each) against PyTorch; best programs kept; one tarball back.
set -u
export LD_LIBRARY_PATH=$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
d=/tmp/icd; mkdir -p $d; echo libnvidia-opencl.so.1 > $d/nvidia.icd; export OCL_ICD_VENDORS=$d
export LIFT_GIT_COMMIT=${COMMIT}
W=/root/m4k; mkdir -p $W
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $W/gpu.txt
printf "mm_nn M=4096 N=4096 K=4096\nmm_tn M=4096 N=4096 K=4096\nmm_nt M=4096 N=4096 K=4096\nmm_tt M=4096 N=4096 K=4096\n" | python3 peers/pytorch/generality.py > $W/pytorch.csv 2>&1
cat $W/pytorch.csv
for p in mm_nn mm_tn mm_nt mm_tt; do
  s=$(date +%s)
  timeout 100 .dev/lift explore benchmarks/generality/$p.lift --def $p --device nvidia --size M=4096,N=4096,K=4096 --budget 60s --out /root/e4k/$p > $W/explore-$p.log 2>&1
  echo "$p rc=$? wall=$(( $(date +%s) - s ))s" | tee -a $W/walls.txt; grep best $W/explore-$p.log
  cp /root/e4k/$p/explore.csv $W/explore-$p.csv 2>/dev/null; for f in best.lift best.derivation search.lift; do cp /root/e4k/$p/$f $W/$p-$f 2>/dev/null; done
done
tar czf $OUT/m4k.tgz -C $W .
