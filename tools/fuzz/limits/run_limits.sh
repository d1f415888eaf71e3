#!/usr/bin/env bash
# run_limits.sh GROUP TAPECHECK LIMITS_DIR PLUGIN_DIR SCRATCH
# The bad-input classes of docs/hardening.md through the command line: each case states the
# exit status and a fixed string of the message the user sees. GROUP: vectors, paramio, import,
# cli, plugins, certify (one ctest each, limits.GROUP).
set -u
group=$1
tc=$2
dir=$3
plugins=$4
scratch=$5
source=$(cd "$dir/../../.." && pwd)
rm -rf "$scratch"
mkdir -p "$scratch"
failures=0
cases=0

# expect STATUS [--stdout TEXT]... [--stderr TEXT]... [--no-stdout] -- COMMAND...
expect() {
  local want=$1
  shift
  local outs=() errs=() nostdout=0
  while [ $# -gt 0 ]; do
    case $1 in
      --stdout) outs+=("$2"); shift 2 ;;
      --stderr) errs+=("$2"); shift 2 ;;
      --no-stdout) nostdout=1; shift ;;
      --) shift; break ;;
    esac
  done
  cases=$((cases + 1))
  local out="$scratch/out" err="$scratch/err" bad=0 got
  "$@" >"$out" 2>"$err"
  got=$?
  [ "$got" = "$want" ] || { echo "  exit status $got, expected $want"; bad=1; }
  local t
  for t in "${outs[@]+"${outs[@]}"}"; do
    grep -qF -- "$t" "$out" || { echo "  stdout lacks: $t"; bad=1; }
  done
  for t in "${errs[@]+"${errs[@]}"}"; do
    grep -qF -- "$t" "$err" || { echo "  stderr lacks: $t"; bad=1; }
  done
  if [ "$nostdout" = 1 ] && [ -s "$out" ]; then echo "  stdout should be empty"; bad=1; fi
  if [ "$bad" = 1 ]; then
    failures=$((failures + 1))
    echo "FAILED: $*"
    echo "--- stdout"; head -c 3000 "$out"
    echo "--- stderr"; head -c 3000 "$err"
  else
    echo "ok (exit $got): ${*##*/}"
  fi
}

V=$dir/vectors
P=$dir/paramio
too_large="autograd: tensor too large (numel does not fit in UInt32)"

case $group in
vectors)
  for target in reference device; do
    k=()
    [ $target = device ] && k=(--kernels aten --device cpu)
    # Shapes that claim more values than the file holds: refused by the loader, nothing allocated.
    expect 2 --no-stdout --stderr "leaves[0].values: holds 1 values but shape [4294967296,4294967296] needs 18446744073709551615" -- \
      "$tc" vectors check --target $target "${k[@]+"${k[@]}"}" "$V/huge-leaf-shape.json"
    expect 2 --no-stdout --stderr "leaves[0].values: holds 0 values but shape [9223372036854775808,3] needs 18446744073709551615" -- \
      "$tc" vectors check --target $target "${k[@]+"${k[@]}"}" "$V/overflow-64-bit.json"
    expect 2 --no-stdout --stderr "leaves[0].values: holds 3 values but shape [2147483648] needs 2147483648" -- \
      "$tc" vectors check --target $target "${k[@]+"${k[@]}"}" "$V/byte-size-32-bit.json"
    expect 2 --no-stdout --stderr "upstream.values: holds 1 values but shape [1099511627776] needs 1099511627776" -- \
      "$tc" vectors check --target $target "${k[@]+"${k[@]}"}" "$V/huge-upstream.json"
    expect 2 --no-stdout --stderr "expected.value.values: holds 1 values but shape [18446744073709551615] needs" -- \
      "$tc" vectors check --target $target "${k[@]+"${k[@]}"}" "$V/huge-expected.json"
    expect 2 --no-stdout --stderr "expected an unsigned integer (0 to 2^64-1), got a number with a fraction or exponent" -- \
      "$tc" vectors check --target $target "${k[@]+"${k[@]}"}" "$V/number-past-u64.json"
    # Attributes past UInt32 or 64 bits with ordinary leaves: docs/spec.md's errors, as expected.
    expect 0 --stdout "passed:1 failed:0" -- \
      "$tc" vectors check --target $target "${k[@]+"${k[@]}"}" "$V/attr-too-large-invalid.json"
    expect 0 --stdout "passed:1 failed:0" -- \
      "$tc" vectors check --target $target "${k[@]+"${k[@]}"}" "$V/attr-too-large-acceptable.json"
    expect 1 --stdout "expected a value, got error \"$too_large\"" -- \
      "$tc" vectors check --target $target "${k[@]+"${k[@]}"}" "$V/attr-too-large-expected-value.json"
    expect 0 --stdout "passed:1 failed:0" -- \
      "$tc" vectors check --target $target "${k[@]+"${k[@]}"}" "$V/batchnorm-overflow.json"
    expect 0 --stdout "passed:1 failed:0" -- \
      "$tc" vectors check --target $target "${k[@]+"${k[@]}"}" "$V/u32-edge-shape-mismatch.json"
    expect 0 --stdout "passed:1 failed:0" -- \
      "$tc" vectors check --target $target "${k[@]+"${k[@]}"}" "$V/huge-ids.json"
    # Empty tensors whose other dims are 2^64-1 or 2^32: found at the lookup, then too large
    # (docs/spec.md#uint32); nothing allocated.
    expect 0 --stdout "passed:1 failed:0" -- \
      "$tc" vectors check --target $target "${k[@]+"${k[@]}"}" "$V/empty-huge-dims.json"
    expect 0 --stdout "passed:1 failed:0" -- \
      "$tc" vectors check --target $target "${k[@]+"${k[@]}"}" "$V/empty-huge-dims-loss.json"
  done
  # Text that is not JSON: nesting 100000 deep, invalid UTF-8, an empty file, a NUL byte.
  head -c 100000 /dev/zero | tr '\0' '[' >"$scratch/deep.json"
  expect 2 --no-stdout --stderr "deep.json: not valid JSON" -- "$tc" vectors check "$scratch/deep.json"
  printf '{"schema": "tapecheck-vectors-v1\xff"}' >"$scratch/utf8.json"
  expect 2 --no-stdout --stderr "utf8.json: not valid JSON" -- "$tc" vectors check "$scratch/utf8.json"
  : >"$scratch/empty.json"
  expect 2 --no-stdout --stderr "empty.json: not valid JSON" -- "$tc" vectors check "$scratch/empty.json"
  printf '\0{"schema": "tapecheck-vectors-v1"}' >"$scratch/nul.json"
  expect 2 --no-stdout --stderr "nul.json: not valid JSON" -- "$tc" vectors check "$scratch/nul.json"
  # A folder without vectors (a folder named *.json is not a file); a path that does not exist.
  mkdir -p "$scratch/dir.json" "$scratch/empty-dir"
  expect 2 --no-stdout --stderr "no *.json vector files" -- "$tc" vectors check "$scratch/empty-dir"
  expect 2 --no-stdout --stderr "no *.json vector files" -- "$tc" vectors check "$scratch/dir.json"
  expect 2 --no-stdout --stderr "no-such.json: no such file or folder" -- "$tc" vectors check "$scratch/no-such.json"
  ;;

paramio)
  expect 2 --no-stdout --stderr "params[0].values: holds 1 values but shape [4294967296,4294967296] needs 18446744073709551615" -- \
    "$tc" vectors import-paramio "$P/huge-shape.json"
  expect 2 --no-stdout --stderr "params[0].values: holds 0 values but shape [9223372036854775808,3] needs 18446744073709551615" -- \
    "$tc" vectors import-paramio "$P/overflow-64-bit.json"
  expect 2 --no-stdout --stderr "params[0].shape[0]: expected a natural number" -- \
    "$tc" vectors import-paramio "$P/negative-dim.json"
  expect 0 --stdout '"shape": [0, 18446744073709551615]' -- \
    "$tc" vectors import-paramio "$P/empty-huge-dims.json"
  # NaN and infinities are binary32 values (golden inputs may hold them).
  expect 0 --stdout '"values": [9221120237041090560, 9218868437227405312, 18442240474082181120]' -- \
    "$tc" vectors import-paramio "$P/nan-and-inf.json"
  # nlohmann keeps the last of two equal keys: ParamIO import does not reject duplicates
  # (the vector loader does): the second "params" wins.
  expect 0 --stdout '"shape": [1]' -- "$tc" vectors import-paramio "$P/duplicate-key.json"
  head -c 100000 /dev/zero | tr '\0' '{' >"$scratch/deep.json"
  expect 2 --no-stdout --stderr "deep.json: not valid JSON" -- "$tc" vectors import-paramio "$scratch/deep.json"
  expect 2 --no-stdout --stderr "is a folder" -- "$tc" vectors import-paramio "$scratch"
  ;;

import)
  # TorchLean's state files and TLSF32B stream (`vectors import`): counts the bytes cannot hold
  # are refused before anything is allocated.
  I=$dir/import
  expect 2 --no-stdout --stderr "state[0].values: holds 1 values but shape [4294967296,4294967296] needs 18446744073709551615" -- \
    "$tc" vectors import "$I/state-huge-shape.json"
  expect 0 --stdout '"shape": [0, 18446744073709551615]' -- "$tc" vectors import "$I/state-float32-empty-huge-dims.json"
  expect 2 --no-stdout --stderr "tensor 0: truncated at byte 31: a shape of rank 18446744073709551615" -- \
    "$tc" vectors import "$I/stream-huge-rank.bin"
  expect 2 --no-stdout --stderr "tensor 0: truncated at byte 47: the payload of 4611686018427387904 binary32 values" -- \
    "$tc" vectors import "$I/stream-huge-payload.bin"
  expect 2 --no-stdout --stderr "tensor 0: truncated at byte 23: the rank needs 8 bytes, 0 remain" -- \
    "$tc" vectors import "$I/stream-huge-count.bin"
  printf 'TLSF32B' >"$scratch/magic-only.bin"
  expect 2 --no-stdout --stderr "magic-only.bin: truncated at byte 7: the version needs 8 bytes" -- \
    "$tc" vectors import "$scratch/magic-only.bin"
  : >"$scratch/empty.bin"
  expect 2 --no-stdout --stderr "empty.bin: not valid JSON, nor a TLSF32B stream" -- "$tc" vectors import "$scratch/empty.bin"
  expect 2 --no-stdout --stderr "is a folder" -- "$tc" vectors import "$scratch"
  ;;

cli)
  expect 2 --no-stdout --stderr "needs an unsigned integer, got '99999999999999999999'" -- \
    "$tc" run --device cpu --cases 99999999999999999999
  expect 2 --no-stdout --stderr "needs an unsigned integer, got '-1'" -- "$tc" run --device cpu --cases -1
  expect 2 --no-stdout --stderr "needs an unsigned integer, got '18446744073709551616'" -- \
    "$tc" run --device cpu --seed 18446744073709551616
  expect 2 --no-stdout --stderr "empty --kernels" -- "$tc" run --device cpu --kernels ""
  expect 2 --no-stdout --stderr "unknown device 'tpu'" -- "$tc" run --device tpu
  expect 2 --no-stdout --stderr "does not exist" -- "$tc" run --device cpu --kernels "$scratch/none.so"
  printf 'not an ELF file\n' >"$scratch/not-elf.so"
  expect 2 --no-stdout --stderr "cannot load kernel plugin" -- "$tc" run --device cpu --kernels "$scratch/not-elf.so"
  ;;

plugins)
  # A plugin whose every entry returns 7: every non-empty case fails with the kernel's status.
  err=$plugins/libtest-returns-error.so
  nan=$plugins/libtest-nan-everywhere.so
  expect 1 --stdout "FAILED" --stdout "softmax_fwd returned 7 on [" -- \
    "$tc" run --device cpu --kernels "$err" --ops softmaxLast,layerNorm --cases 3 --vectors none --out "$scratch/run-err"
  expect 1 --stdout "FAILED" -- \
    "$tc" run --device cpu --kernels "$nan" --ops crossEntropy,topKMask --cases 3 --vectors none --out "$scratch/run-nan"
  expect 1 --stdout "FAILED" --stdout "kernel tapecheck-test-returns-error returned 7" -- \
    "$tc" vectors check --target device --device cpu --kernels "$err" "$source/vectors/tests/data/pass"
  expect 1 --stdout "FAILED" -- \
    "$tc" vectors check --target device --device cpu --kernels "$nan" "$source/vectors/tests/data/pass"
  ;;

certify)
  err=$plugins/libtest-returns-error.so
  # Not certified: exit 1, a complete certificate saying so, no temporary file left.
  expect 1 --stdout "REJECTED" -- \
    "$tc" certify --device cpu --kernels "$err" --cases 2 --out "$scratch/cert-err"
  [ -s "$scratch/cert-err/certificate.json" ] || { echo "  no certificate.json"; failures=$((failures + 1)); }
  if ls -A "$scratch/cert-err" | grep -q '\.tmp-'; then
    echo "  temporary files left: $(ls -A "$scratch/cert-err")"; failures=$((failures + 1))
  fi
  # --out names a file: nothing is written, exit 2.
  : >"$scratch/a-file"
  expect 2 --no-stdout --stderr "cannot write --out" -- \
    "$tc" certify --device cpu --kernels aten --cases 2 --out "$scratch/a-file"
  # Killed during the run: no certificate, no temporary file, no folder.
  timeout -s KILL 3 "$tc" certify --device cpu --kernels aten --out "$scratch/cert-killed" >/dev/null 2>&1
  cases=$((cases + 1))
  if [ -e "$scratch/cert-killed" ] && [ -n "$(ls -A "$scratch/cert-killed")" ]; then
    echo "FAILED: a killed certify left: $(ls -A "$scratch/cert-killed")"; failures=$((failures + 1))
  else
    echo "ok: a certify killed after 3 s left nothing behind"
  fi
  ;;

*) echo "run_limits.sh: unknown group $group"; exit 2 ;;
esac

echo "limits.$group: $cases cases, $failures failed"
[ "$failures" = 0 ]
