#!/usr/bin/env bash
# Runs a command and checks its exit status and what it printed (fixed strings):
#   expect_exit.sh STATUS [--stdout TEXT]... [--stderr TEXT]... [--no-stdout] -- COMMAND...
set -u
want=$1
shift
outs=()
errs=()
nostdout=0
while [ $# -gt 0 ]; do
  case $1 in
    --stdout) outs+=("$2"); shift 2 ;;
    --stderr) errs+=("$2"); shift 2 ;;
    --no-stdout) nostdout=1; shift ;;
    --) shift; break ;;
    *) echo "expect_exit.sh: unknown argument $1"; exit 2 ;;
  esac
done
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
"$@" >"$out" 2>"$err"
got=$?
fail=0
if [ "$got" != "$want" ]; then echo "exit status $got, expected $want"; fail=1; fi
for t in "${outs[@]+"${outs[@]}"}"; do
  grep -qF -- "$t" "$out" || { echo "stdout lacks: $t"; fail=1; }
done
for t in "${errs[@]+"${errs[@]}"}"; do
  grep -qF -- "$t" "$err" || { echo "stderr lacks: $t"; fail=1; }
done
if [ "$nostdout" = 1 ] && [ -s "$out" ]; then echo "stdout should be empty"; fail=1; fi
if [ "$fail" = 1 ]; then
  echo "command: $*"
  echo "--- stdout"; head -c 4000 "$out"
  echo "--- stderr"; head -c 4000 "$err"
  exit 1
fi
echo "ok (exit $got): $*"
