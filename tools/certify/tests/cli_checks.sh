#!/usr/bin/env bash
# CLI checks of `tapecheck certify`, run by ctest (tools/certify/tests/CMakeLists.txt). Every
# check asserts exact exit codes. Usage: cli_checks.sh CHECK [ARGS...]
#
# Environment (set by CMake):
#   TAPECHECK          the tapecheck executable
#   CERTIFY_TESTS      the Catch2 executable (its hidden [.cli] tests read what the CLI wrote)
#   WORK               a scratch folder for this check
#   CASES              --cases for every certify run (small: CI speed)
#   SHARED             a folder shared through ctest fixtures (the aten certificate)
set -u
check=$1
shift
fails=0

say() { printf '%s\n' "$*"; }
fail() { say "FAIL: $*"; fails=$((fails + 1)); }

# expect CODE -- COMMAND...: runs COMMAND, output to $WORK/last.log, checks its exit status.
expect() {
  local want=$1
  shift
  [ "$1" = "--" ] && shift
  "$@" > "$WORK/last.log" 2>&1
  local got=$?
  if [ "$got" -ne "$want" ]; then
    fail "exit $got, expected $want: $*"
    sed 's/^/    | /' "$WORK/last.log" | tail -n 40
    return 1
  fi
  say "ok (exit $got): $*"
  return 0
}

# The folder must not exist (exit 2 writes nothing).
expect_nothing_written() {
  if [ -e "$1" ]; then
    fail "exit 2 left $1 behind: $(ls -A "$1" | tr '\n' ' ')"
  fi
}

# A complete certificate folder whose digest verifies and whose JSON follows the schema.
expect_certificate() {
  local dir=$1
  for f in certificate.json certificate.sha256 report.html; do
    [ -s "$dir/$f" ] || fail "$dir/$f missing or empty"
  done
  if ls -A "$dir" | grep -q '\.tmp-'; then fail "temporary files left in $dir"; fi
  (cd "$dir" && sha256sum -c --strict certificate.sha256 > /dev/null) ||
    fail "sha256sum -c failed in $dir"
  TAPECHECK_CERT_FILES="$dir/certificate.json" \
    expect 0 -- "$CERTIFY_TESTS" "certificates written by the CLI validate against the schema" ||
    true
}

# The top-level verdict of a certificate (2-space indented JSON, written by tapecheck).
verdict_of() { sed -n 's/^  "verdict": "\([a-z]*\)",$/\1/p' "$1/certificate.json"; }

rm -rf "$WORK"
mkdir -p "$WORK"
K=(--cases "$CASES")

case "$check" in
  usage)
    expect 2 -- "$TAPECHECK" certify
    expect 2 -- "$TAPECHECK" certify --out "$WORK/a"
    expect 2 -- "$TAPECHECK" certify --kernels aten
    expect 2 -- "$TAPECHECK" certify --kernels aten --out "$WORK/a" --bogus 1
    expect 2 -- "$TAPECHECK" certify --kernels aten --out "$WORK/a" extra
    expect 2 -- "$TAPECHECK" certify --kernels aten --out "$WORK/a" --shard 2/2
    expect 2 -- "$TAPECHECK" certify --kernels aten --out "$WORK/a" --shard 1
    expect 2 -- "$TAPECHECK" certify --kernels aten --out "$WORK/a" --shard 0/0
    expect 2 -- "$TAPECHECK" certify --kernels aten --out "$WORK/a" --cases many
    expect 2 -- "$TAPECHECK" certify --kernels aten --out "$WORK/a" --device tpu
    expect 2 -- "$TAPECHECK" certify --kernels "$WORK/no-such-plugin.so" --out "$WORK/a"
    printf '{ "format": "tapecheck-certificate-v1", "kind": ' > "$WORK/truncated.json"
    expect 2 -- "$TAPECHECK" certify --kernels aten --baseline "$WORK/truncated.json" \
      --out "$WORK/a"
    printf '{ "format": "tapecheck-certificate-v1", "kind": "certificate" }\n' \
      > "$WORK/incomplete.json"
    expect 2 -- "$TAPECHECK" certify --kernels aten --baseline "$WORK/incomplete.json" \
      --out "$WORK/a"
    grep -q 'missing required member' "$WORK/last.log" || fail "schema violations not named"
    expect 2 -- "$TAPECHECK" certify --kernels aten --baseline "$WORK/none.json" --out "$WORK/a"
    expect 2 -- "$TAPECHECK" certify --kernels aten --shard 0/2 --baseline "$WORK/incomplete.json" \
      --out "$WORK/a"
    expect 2 -- "$TAPECHECK" certify merge --out "$WORK/a"
    expect 2 -- "$TAPECHECK" certify merge "$WORK/none"
    expect 2 -- "$TAPECHECK" certify merge --out "$WORK/a" "$WORK/none"
    touch "$WORK/file"
    expect 2 -- "$TAPECHECK" certify --kernels aten --out "$WORK/file/below"
    expect_nothing_written "$WORK/a"
    ;;

  rejected-plugin)  # ARGS: PLUGIN...  plugins the loader refuses: exit 2, nothing written
    for plugin in "$@"; do
      out="$WORK/$(basename "$plugin" .so)"
      expect 2 -- "$TAPECHECK" certify --kernels "$plugin" --device cpu "${K[@]}" --out "$out"
      grep -q 'unusable kernels' "$WORK/last.log" || fail "no reason on stderr for $plugin"
      expect_nothing_written "$out"
    done
    ;;

  certified)  # ARGS: KERNELS [OUT]: certify, exit 0, a valid certificate
    out=${2:-$WORK/out}
    expect 0 -- "$TAPECHECK" certify --kernels "$1" --device cpu "${K[@]}" --out "$out"
    expect_certificate "$out"
    [ "$(verdict_of "$out")" = certified ] || fail "verdict in $out is not certified"
    grep -q 'CERTIFIED' "$out/report.html" || fail "report.html lacks the verdict"
    ;;

  mutants)  # ARGS: LIST PLUGIN_DIR [PREFIX]: every lib<PREFIX>-<name>.so of LIST ("<name> <op>
            # ...") exits 1 with its op named in the reasons; PREFIX is mutant by default
    list=$1 dir=$2 prefix=${3:-mutant}
    n=0
    while read -r name op rest; do
      case "$name" in ''|'#'*) continue ;; esac
      n=$((n + 1))
      out="$WORK/$name"
      if expect 1 -- "$TAPECHECK" certify --kernels "$dir/lib$prefix-$name.so" --device cpu \
        "${K[@]}" --out "$out"; then
        [ "$(verdict_of "$out")" = rejected ] || fail "$name: verdict is not rejected"
        TAPECHECK_CERT_FILES="$out/certificate.json" TAPECHECK_CERT_EXPECT_OP="$op" \
          expect 0 -- "$CERTIFY_TESTS" "a rejected certificate names the broken op" ||
          fail "$name: no reason names $op"
        (cd "$out" && sha256sum -c --strict certificate.sha256 > /dev/null) ||
          fail "$name: sha256sum -c failed"
      fi
    done < "$list"
    [ "$n" -gt 0 ] || fail "no plugin listed in $list"
    say "$n $prefix plugins checked"
    ;;

  legit)  # ARGS: LEGIT_TXT PLUGIN_DIR: every liblegit-<name>.so certified, exit 0
    list=$1 dir=$2
    n=0
    while read -r name rest; do
      case "$name" in ''|'#'*) continue ;; esac
      n=$((n + 1))
      out="$WORK/$name"
      start=$SECONDS
      if expect 0 -- "$TAPECHECK" certify --kernels "$dir/liblegit-$name.so" --device cpu \
        "${K[@]}" --out "$out"; then
        say "  $name: $((SECONDS - start)) s"
        expect_certificate "$out"
        [ "$(verdict_of "$out")" = certified ] || fail "$name: verdict is not certified"
      fi
    done < "$list"
    [ "$n" -gt 0 ] || fail "no plugin listed in $list"
    say "$n legit plugins certified"
    ;;

  partial)  # ARGS: PLUGIN: a partial table is certified for what it provides, coverage shown
    out="$WORK/partial"
    expect 0 -- "$TAPECHECK" certify --kernels "$1" --device cpu "${K[@]}" --out "$out"
    grep -q '^coverage: 4 of 33 passes provided; not provided: logSoftmaxLast (fwd, bwd, errors, vectors);' \
      "$WORK/last.log" || fail "no coverage line on stdout"
    expect_certificate "$out"
    [ "$(verdict_of "$out")" = certified ] || fail "verdict in $out is not certified"
    grep -q '"verdict": "not provided"' "$out/certificate.json" ||
      fail "no op or pass is marked not provided"
    grep -q '"missingEntries": \[' "$out/certificate.json" || fail "no missing entry listed"
    TAPECHECK_CERT_FILES="$out/certificate.json" \
      expect 0 -- "$CERTIFY_TESTS" "a partial certificate lists provided and not provided passes" ||
      fail "the certificate does not list coverage per op and pass"
    grep -q 'NOT PROVIDED' "$out/report.html" || fail "report.html does not show NOT PROVIDED"
    grep -q 'A partial kernel table' "$out/report.html" || fail "report.html lacks the coverage"
    ;;

  faults)  # ARGS: (PLUGIN TEXT)...: each misbehaving plugin exit 1, a certificate naming the case
    while [ "$#" -ge 2 ]; do
      plugin=$1 text=$2
      shift 2
      out="$WORK/$(basename "$plugin" .so)"
      if expect 1 -- "$TAPECHECK" certify --kernels "$plugin" --device cpu "${K[@]}" \
        --case-timeout 3 --out "$out"; then
        grep -qF -- "$text" "$WORK/last.log" || fail "$plugin: stdout does not name '$text'"
        expect_certificate "$out"
        [ "$(verdict_of "$out")" = rejected ] || fail "$plugin: verdict is not rejected"
        grep -qF -- "$text" "$out/certificate.json" || fail "$plugin: certificate lacks '$text'"
      fi
    done
    ;;

  shards)  # merge of 2 shards equals the unsharded certificate ($SHARED/aten)
    full="$SHARED/aten"
    [ -f "$full/certificate.json" ] || { fail "fixture $full missing"; exit 1; }
    expect 0 -- "$TAPECHECK" certify --kernels aten --device cpu "${K[@]}" --shard 0/2 \
      --out "$WORK/s0"
    expect 0 -- "$TAPECHECK" certify --kernels aten --device cpu "${K[@]}" --shard 1/2 \
      --out "$WORK/s1"
    expect_certificate "$WORK/s0"
    grep -q '^  "kind": "shard",$' "$WORK/s0/certificate.json" || fail "s0 is not marked a shard"
    # Shards are not final: as a baseline, refused; merging one alone, refused (shard 1 missing).
    expect 2 -- "$TAPECHECK" certify --kernels aten --baseline "$WORK/s0/certificate.json" \
      --out "$WORK/x"
    expect 2 -- "$TAPECHECK" certify merge --out "$WORK/x" "$WORK/s0"
    expect 2 -- "$TAPECHECK" certify merge --out "$WORK/x" "$WORK/s0" "$WORK/s0"
    expect_nothing_written "$WORK/x"
    expect 0 -- "$TAPECHECK" certify merge --out "$WORK/merged" "$WORK/s1" "$WORK/s0"
    expect_certificate "$WORK/merged"
    TAPECHECK_CERT_COMPARE="$WORK/merged/certificate.json:$full/certificate.json" \
      expect 0 -- "$CERTIFY_TESTS" "a merged certificate equals the unsharded one in every count"
    # A shard altered after it was written no longer matches its digest.
    cp -r "$WORK/s0" "$WORK/s0-edited"
    sed -i 's/"seed": /"seed":  /' "$WORK/s0-edited/certificate.json"
    expect 2 -- "$TAPECHECK" certify merge --out "$WORK/x" "$WORK/s0-edited" "$WORK/s1"
    expect_nothing_written "$WORK/x"
    ;;

  baseline)  # the same kernels against their own certificate: no growth; a doctored one: growth
    full="$SHARED/aten"
    [ -f "$full/certificate.json" ] || { fail "fixture $full missing"; exit 1; }
    expect 0 -- "$TAPECHECK" certify --kernels aten --device cpu "${K[@]}" \
      --baseline "$full/certificate.json" --out "$WORK/same"
    expect_certificate "$WORK/same"
    grep -q '"baseline": {' "$WORK/same/certificate.json" || fail "no baseline section"
    grep -q 'Changes since the baseline' "$WORK/same/report.html" || fail "no baseline in report"
    # A baseline whose every max error was 0: whatever grew past 1 ulp is rejected, by name.
    sed -E 's/"maxUlps": [0-9.eE+-]+/"maxUlps": 0.0/' "$full/certificate.json" > "$WORK/zero.json"
    if awk -F'"maxUlps": ' 'NF > 1 { v = $2; sub(/,$/, "", v); if (v + 0 > 1.5) found = 1 }
                           END { exit found ? 0 : 1 }' "$full/certificate.json"; then
      expect 1 -- "$TAPECHECK" certify --kernels aten --device cpu "${K[@]}" \
        --baseline "$WORK/zero.json" --out "$WORK/grew"
      grep -q 'max error grew from 0 ulps' "$WORK/grew/certificate.json" ||
        fail "growth reason missing"
      grep -q 'error-growth' "$WORK/grew/report.html" || fail "growth not in the report"
    else
      say "note: no pass above 1.5 ulps; growth check on real kernels skipped"
    fi
    ;;

  html)  # ARGS: CERT_DIR MUTANT.so: both reports (certified, rejected) render in headless Chromium
    chromium=${CHROMIUM:-/usr/bin/chromium}
    if [ ! -x "$chromium" ]; then
      say "SKIP: $chromium is absent"
      exit 77
    fi
    certified=$1 mutant=$2
    [ -f "$certified/report.html" ] || { fail "$certified/report.html missing"; exit 1; }
    expect 1 -- "$TAPECHECK" certify --kernels "$mutant" --device cpu "${K[@]}" \
      --out "$WORK/rejected"
    for pair in "$certified:CERTIFIED" "$WORK/rejected:REJECTED"; do
      dir=${pair%:*} word=${pair##*:}
      profile=$(mktemp -d)
      flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
             --disable-background-networking --disable-component-update --disable-sync
             --user-data-dir="$profile" --window-size=1200,2000)
      url="file://$(cd "$dir" && pwd)/report.html"
      png="$WORK/$word.png"
      timeout 120 "$chromium" "${flags[@]}" --screenshot="$png" "$url" \
        > "$WORK/chromium.log" 2>&1
      if [ -s "$png" ]; then
        head -c 8 "$png" | od -An -tx1 | grep -q '89 50 4e 47 0d 0a 1a 0a' ||
          fail "$png is not a PNG"
        say "ok: screenshot $png"
      else
        fail "no screenshot of $url"
        tail -20 "$WORK/chromium.log"
      fi
      timeout 120 "$chromium" "${flags[@]}" --dump-dom "$url" > "$WORK/$word.dom.html" \
        2> "$WORK/chromium.log"
      grep -q "$word" "$WORK/$word.dom.html" || fail "the rendered DOM of $url lacks $word"
      grep -q '<svg' "$WORK/$word.dom.html" || fail "the rendered DOM of $url lacks histograms"
      rm -rf "$profile"
    done
    ;;

  *)
    fail "unknown check $check"
    ;;
esac

if [ "$fails" -ne 0 ]; then
  say "$check: $fails failure(s)"
  exit 1
fi
say "$check: all passed"
