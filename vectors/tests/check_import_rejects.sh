#!/usr/bin/env bash
# Every bad TorchLean tensor file listed in DATA_DIR/expected-messages.txt must make
# `tapecheck vectors import` exit 2, print nothing on stdout, and name the file and the listed
# fragment (entry index and reason) on stderr.
#   check_import_rejects.sh TAPECHECK DATA_DIR
set -u
tapecheck=$1
data=$2
here=$(dirname "$0")
status=0
count=0
while IFS=$'\t' read -r file fragment; do
  case $file in '#'*|'') continue ;; esac
  "$here/expect_exit.sh" 2 --no-stdout --stderr "$data/$file: " --stderr "$fragment" -- \
    "$tapecheck" vectors import "$data/$file" || status=1
  count=$((count + 1))
done <"$data/expected-messages.txt"
echo "$count bad TorchLean files checked"
[ "$count" -gt 0 ] || status=1
exit $status
