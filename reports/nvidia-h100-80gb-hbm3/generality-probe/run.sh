#!/usr/bin/env bash
# One device batch: explore user programs with no hints, PyTorch beside them.
set -u
export LD_LIBRARY_PATH=$PWD/.dev/lib:${LD_LIBRARY_PATH:-}
d=/tmp/icd; mkdir -p $d; echo libnvidia-opencl.so.1 > $d/nvidia.icd; export OCL_ICD_VENDORS=$d
L=.dev/lift
$L devices 2>&1 | head -5
run() { # name def sizes
  local name=$1 def=$2 sizes=$3
  timeout 120 $L explore reports/nvidia-h100-80gb-hbm3/generality-probe/$name.lift --def $def --device nvidia --size $sizes --budget ${BUDGET:-60}s --out $OUT/$name > $OUT/$name.log 2>&1
  echo "== $name $sizes"; tail -4 $OUT/$name.log | grep -v wrote
}
run sumsq sumsq N=33554432
run maxall maxall N=33554432
run rowmax rowmax M=8192,N=4096
run rowsum rowsum M=8192,N=4096
P=peers/pytorch/time_ops.py
python3 $P copy N=33554432; python3 $P sum_sq N=33554432; python3 $P max_all N=33554432
python3 $P row_max M=8192 N=4096; python3 $P row_sum M=8192 N=4096; python3 $P copy N=33554432
