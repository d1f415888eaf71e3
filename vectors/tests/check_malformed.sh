#!/usr/bin/env bash
# The malformed vector files marked '*' in expected-messages.txt must make
# `tapecheck vectors check` exit 2, print nothing on stdout, and name the file and the expected
# details (tcId, field path, reason) on stderr.
#   check_malformed.sh TAPECHECK DATA_DIR
set -u
tapecheck=$1
data=$2
here=$(dirname "$0")
status=0
count=0
while IFS=$'\t' read -r file rest; do
  case $file in '*'*) file=${file#\*} ;; *) continue ;; esac
  args=(--stderr "$data/$file")
  IFS=$'\t' read -r -a subs <<<"$rest"
  for s in "${subs[@]}"; do args+=(--stderr "$s"); done
  "$here/expect_exit.sh" 2 --no-stdout "${args[@]}" -- \
    "$tapecheck" vectors check --target reference "$data/$file" || status=1
  count=$((count + 1))
done <"$data/malformed/expected-messages.txt"
echo "$count malformed files checked"
exit $status
