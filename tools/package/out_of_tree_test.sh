#!/usr/bin/env bash
# The plugin author's kit, end to end (ctest kit.out-of-tree-plugin-builds-and-certifies):
#   1. `cmake --install` this build into a folder, then move the folder: nothing may point back
#      at the build or at the install location;
#   2. build device/plugins/example out of tree against it with find_package(tapecheck);
#   3. certify the plugin with the installed tapecheck: exit 0, verdict "certified";
#   4. the certificate counts the corpus files of the *installed* corpus (which gets one file
#      more than the source tree's here), so the installed tapecheck ran the installed corpus;
#   5. the plugin exports tapecheck_kernels_v1_get and no other function (hidden visibility).
# Environment (tools/package/CMakeLists.txt): CMAKE GENERATOR C_COMPILER BUILD_DIR EXAMPLE_DIR
# CORPUS WORK.
set -euo pipefail

fail() {
  echo "FAILED: $*" >&2
  exit 1
}

rm -rf "$WORK"
mkdir -p "$WORK"
staged="$WORK/staged"
prefix="$WORK/prefix"

"$CMAKE" --install "$BUILD_DIR" --prefix "$staged" >"$WORK/install.log" ||
  fail "cmake --install (log: $WORK/install.log)"
mv "$staged" "$prefix"

for file in bin/tapecheck include/tapecheck/kernels_v1.h lib/cmake/tapecheck/tapecheckConfig.cmake \
            lib/cmake/tapecheck/tapecheckPlugin.cmake share/tapecheck/golden/layerNorm-widths.json; do
  [ -e "$prefix/$file" ] || fail "the install lacks $file"
done

golden="$prefix/share/tapecheck/golden"
cp "$golden/softmaxLast-widths.json" "$golden/softmaxLast-widths-installed-copy.json"
expected_files=$(($(find "$CORPUS" -type f | wc -l) + 1))

"$CMAKE" -S "$EXAMPLE_DIR" -B "$WORK/example" -G "$GENERATOR" -DCMAKE_C_COMPILER="$C_COMPILER" \
  -DCMAKE_PREFIX_PATH="$prefix" >"$WORK/example-configure.log" 2>&1 ||
  fail "configuring the example against the installed kit (log: $WORK/example-configure.log)"
"$CMAKE" --build "$WORK/example" >"$WORK/example-build.log" 2>&1 ||
  fail "building the example (log: $WORK/example-build.log)"
plugin="$WORK/example/libtapecheck-example.so"
[ -f "$plugin" ] || fail "the example build made no $plugin"

exported=$(nm -D --defined-only "$plugin" | awk '$2 == "T" { print $3 }')
[ "$exported" = "tapecheck_kernels_v1_get" ] ||
  fail "the plugin exports [$exported], expected only tapecheck_kernels_v1_get"

status=0
"$prefix/bin/tapecheck" certify --kernels "$plugin" --cases 20 --seed 1 --out "$WORK/cert" \
  >"$WORK/certify.log" 2>&1 || status=$?
[ "$status" -eq 0 ] || { tail -n 30 "$WORK/certify.log" >&2; fail "certify exited $status"; }

# The certificate is 2-space indented JSON, written by tapecheck.
certificate="$WORK/cert/certificate.json"
verdict=$(sed -n 's/^  "verdict": "\([a-z]*\)",$/\1/p' "$certificate")
[ "$verdict" = certified ] || fail "verdict '$verdict' in $certificate"
files=$(sed -n '/^  "corpus": {$/,/^  }/ s/^    "files": \([0-9]*\)$/\1/p' "$certificate")
[ "$files" = "$expected_files" ] ||
  fail "the certificate counts $files corpus files, the installed corpus has $expected_files"
echo "PASSED: the example plugin built against the installed kit and was certified"
