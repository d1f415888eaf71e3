#!/usr/bin/env bash
# Regenerating the corpus must reproduce the committed files byte for byte, and nothing else.
#   regenerate_identical.sh TAPECHECK GOLDEN_DIR
set -u
tapecheck=$1
golden=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$tapecheck" vectors generate --out "$tmp" >/dev/null || { echo "generation failed"; exit 1; }
if diff -r "$golden" "$tmp"; then
  echo "regenerated corpus is byte-identical to $golden"
else
  echo "the committed corpus differs from a fresh generation (run: tapecheck vectors generate)"
  exit 1
fi
