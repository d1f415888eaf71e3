#!/usr/bin/env bash
# Command-line checks of tapecheck as a kernel author meets it (DESIGN.md section 5), run by ctest
# (tools/cli/tests/CMakeLists.txt). Usage: cli_checks.sh CHECK [ARGS...]
#
# Environment (set by CMake):
#   TAPECHECK    the tapecheck executable
#   SOURCE       the source tree (for tools/tapecheck and the test vectors)
#   WORK         a scratch folder for this check
set -u
check=$1
shift
fails=0

say() { printf '%s\n' "$*"; }
fail() { say "FAIL: $*"; fails=$((fails + 1)); }

# run_cli LIMIT COMMAND...: runs COMMAND with at most LIMIT seconds; stdout to $WORK/out,
# stderr to $WORK/err, the exit status in $rc (124: it ran out of time).
run_cli() {
  local limit=$1
  shift
  timeout "$limit" "$@" > "$WORK/out" 2> "$WORK/err"
  rc=$?
}

show() {
  say "    command: $*"
  say "    --- stdout"; head -c 2000 "$WORK/out" | sed 's/^/    | /'
  say "    --- stderr"; head -c 2000 "$WORK/err" | sed 's/^/    | /'
}

# expect CODE LIMIT COMMAND...: the exit status must be CODE within LIMIT seconds.
expect() {
  local want=$1 limit=$2
  shift 2
  run_cli "$limit" "$@"
  if [ "$rc" -ne "$want" ]; then
    fail "exit $rc, expected $want$([ "$rc" -eq 124 ] && echo " (still running after ${limit} s)")"
    show "$@"
    return 1
  fi
  say "ok (exit $rc): $*"
}

stdout_has() { grep -qF -- "$1" "$WORK/out" || { fail "stdout lacks '$1'"; show; }; }
stderr_has() { grep -qF -- "$1" "$WORK/err" || { fail "stderr lacks '$1'"; show; }; }
stdout_lacks() { ! grep -qF -- "$1" "$WORK/out" || { fail "stdout has '$1'"; show; }; }
stdout_empty() { [ ! -s "$WORK/out" ] || { fail "stdout is not empty"; show; }; }
stdout_is() { [ "$(cat "$WORK/out")" = "$1" ] || { fail "stdout is not just '$1'"; show; }; }
stderr_empty() { [ ! -s "$WORK/err" ] || { fail "stderr is not empty"; show; }; }

# An unwritable output path: exit 2 at once (before any case runs), nothing on stdout, the path
# and the reason on stderr. --cases is large, so a run that starts anyway runs out of time.
refused_at_once() {
  local path=$1
  shift
  expect 2 30 "$TAPECHECK" "$@" || return
  stdout_empty
  stderr_has "$path: "
}

xml_well_formed() {
  xmllint --noout "$1" 2> "$WORK/xmllint.log" ||
    { fail "$1 is not well-formed XML"; cat "$WORK/xmllint.log"; }
}

need_xmllint() {
  if ! command -v xmllint > /dev/null; then
    say "SKIP: xmllint is absent (Debian package libxml2-utils, tools/packages.txt)"
    exit 77
  fi
}

rm -rf "$WORK"
mkdir -p "$WORK"
DATA="$SOURCE/vectors/tests/data"
PROC=/proc/tapecheck-no-such-folder
MANY=(--cases 200000)

case "$check" in
  version)
    expect 0 10 "$TAPECHECK" --version
    grep -qxE 'tapecheck [0-9]+\.[0-9]+\.[0-9]+( \(git [0-9a-f]{7,40}\))?' "$WORK/out" ||
      { fail "--version printed something else"; show --version; }
    [ "$(wc -l < "$WORK/out")" -eq 1 ] || fail "--version printed more than one line"
    stderr_empty
    ;;

  help)  # every command and subcommand: --help and -h print help on stdout, exit 0
    for call in "--help" "-h" "run --help" "run -h" "vectors --help" "vectors check --help" \
                "vectors check -h" "vectors generate --help" "vectors import-paramio --help" \
                "certify --help" "certify -h" "certify merge --help"; do
      # shellcheck disable=SC2086  # call is words
      expect 0 10 "$TAPECHECK" $call || continue
      stdout_has "usage: tapecheck"
      stderr_empty
    done
    # Help wins wherever it is among the options.
    expect 0 10 "$TAPECHECK" run --seed 3 --help && stdout_has "--seed S"
    ;;

  help-options)  # ARGS: none. Each option of each command has a meaning and a default.
    options_of() {
      case $1 in
        run) echo --device --kernels --ops --cases --seed --json --junit --case --vectors --out \
               --shard --no-shrink --jobs --case-timeout --in-process ;;
        "vectors check") echo --target --kernels --device --junit --verbose ;;
        "vectors generate") echo --op --out ;;
        certify) echo --kernels --out --device --baseline --cases --seed --shard --jobs --junit \
               --case-timeout --in-process ;;
      esac
    }
    for cmd in run "vectors check" "vectors generate" certify; do
      # shellcheck disable=SC2086
      expect 0 10 "$TAPECHECK" $cmd --help || continue
      stdout_has "exit status: 0"
      for opt in $(options_of "$cmd"); do
        # The option's block: its line and the indented lines under it, up to the next option.
        block=$(awk -v opt="$opt" '
          found && /^  -/ { exit }
          index($0, "  " opt " ") == 1 || $0 == "  " opt { found = 1 }
          found { print }' "$WORK/out")
        if [ -z "$block" ]; then
          fail "tapecheck $cmd --help does not describe $opt"
        elif ! printf '%s' "$block" | grep -qE '\(default|\(required'; then
          fail "tapecheck $cmd --help gives no default for $opt: $block"
        elif [ "$(printf '%s' "$block" | wc -w)" -lt 6 ]; then
          fail "tapecheck $cmd --help does not say what $opt means: $block"
        fi
      done
    done
    ;;

  unknown-option)  # exit 2, the option named, the synopsis and where the help is on stderr
    for cmd in run "vectors check" "vectors generate" "vectors import-paramio" certify \
               "certify merge"; do
      # shellcheck disable=SC2086
      expect 2 10 "$TAPECHECK" $cmd --bogus x || continue
      stdout_empty
      stderr_has "unknown option --bogus"
      stderr_has "usage: tapecheck"
      stderr_has "--help"
    done
    expect 2 10 "$TAPECHECK" && stdout_empty
    expect 2 10 "$TAPECHECK" frobnicate && stdout_empty
    ;;

  run-output-paths)
    # In an existing folder that takes no new file (/proc), and in a missing folder.
    refused_at_once /proc/tapecheck-report.json run --device cpu --kernels aten "${MANY[@]}" \
      --json /proc/tapecheck-report.json
    refused_at_once "$PROC/r.json" run --device cpu --kernels aten "${MANY[@]}" \
      --json "$PROC/r.json"
    refused_at_once "$PROC/r.xml" run --device cpu --kernels aten "${MANY[@]}" \
      --junit "$PROC/r.xml"
    refused_at_once "$PROC" run --device cpu --kernels aten "${MANY[@]}" --out "$PROC"
    refused_at_once "$WORK/none/r.json" run --device cpu --kernels aten "${MANY[@]}" \
      --json "$WORK/none/r.json" && stderr_has "No such file or directory"
    refused_at_once "$WORK" run --device cpu --kernels aten "${MANY[@]}" --junit "$WORK"
    touch "$WORK/file"
    refused_at_once "$WORK/file/values" run --device cpu --kernels aten "${MANY[@]}" \
      --out "$WORK/file/values"
    [ ! -e "$WORK/none" ] || fail "a refused run left $WORK/none behind"
    ;;

  certify-output-paths)
    refused_at_once "$PROC/cert" certify --kernels aten --device cpu "${MANY[@]}" \
      --out "$PROC/cert"
    refused_at_once "$PROC/c.xml" certify --kernels aten --device cpu "${MANY[@]}" \
      --out "$WORK/cert" --junit "$PROC/c.xml"
    [ ! -e "$WORK/cert" ] || fail "a refused certify left $WORK/cert behind"
    refused_at_once "$PROC/merged" certify merge --out "$PROC/merged" "$WORK/shard"
    ;;

  generate-output-path)
    refused_at_once "$PROC/golden" vectors generate --out "$PROC/golden"
    refused_at_once "$PROC/golden" vectors generate --op softmaxLast --out "$PROC/golden"
    ;;

  vectors-check-output-path)
    refused_at_once "$PROC/v.xml" vectors check --junit "$PROC/v.xml" "$DATA/pass"
    ;;

  progress)  # progress on stderr, named after the command; stdout only the report
    expect 0 300 "$TAPECHECK" certify --kernels aten --device cpu --cases 4 --out "$WORK/cert" ||
      true
    stderr_has "tapecheck certify: 0% (0/"
    stdout_lacks "% ("
    stdout_lacks "tapecheck run"
    stdout_has "tapecheck certify: CERTIFIED"
    grep -q "tapecheck run" "$WORK/err" && fail "certify's progress is labelled tapecheck run"
    expect 0 300 "$TAPECHECK" run --device cpu --kernels aten --cases 4 --vectors none ||
      true
    stderr_has "tapecheck run: 0% (0/"
    stdout_lacks "% ("
    stdout_has "tests:"
    ;;

  junit-vectors)
    need_xmllint
    expect 1 300 "$TAPECHECK" vectors check --junit "$WORK/fail.xml" "$DATA/fail"
    xml_well_formed "$WORK/fail.xml"
    # tcIds 2 to 7 of the file fail, tcId 1 passes (the file's header says so).
    counts='tests="7" failures="6" errors="0" skipped="0"'
    grep -qF "<testsuites name=\"tapecheck vectors check\" $counts>" "$WORK/fail.xml" ||
      fail "wrong counts in $WORK/fail.xml"
    grep -qF '<testcase name="tcId 1" classname="softmaxLast"/>' "$WORK/fail.xml" ||
      fail "tcId 1 is not a passing test case"
    grep -qF "reproduce: tapecheck vectors check $DATA/fail/softmaxLast-off.json" \
      "$WORK/fail.xml" || fail "no reproduce command in $WORK/fail.xml"
    expect 0 300 "$TAPECHECK" vectors check --junit "$WORK/pass.xml" "$DATA/pass"
    xml_well_formed "$WORK/pass.xml"
    grep -qF 'tests="11" failures="0" errors="0" skipped="0">' "$WORK/pass.xml" ||
      fail "wrong counts in $WORK/pass.xml"
    ;;

  junit-run)  # ARGS: [MUTANT.so OP]: aten passes; the mutant's failure names its reproducer
    need_xmllint
    expect 0 300 "$TAPECHECK" run --device cpu --kernels aten --cases 6 --vectors none \
      --ops softmaxLast --junit "$WORK/aten.xml"
    xml_well_formed "$WORK/aten.xml"
    grep -qE '<testsuites name="tapecheck run: [^"]*" tests="[1-9][0-9]*" failures="0"' \
      "$WORK/aten.xml" || fail "aten's report is not all passing"
    grep -qF '<testsuite name="softmaxLast"' "$WORK/aten.xml" || fail "no softmaxLast suite"
    if [ $# -ge 2 ]; then
      expect 1 300 "$TAPECHECK" run --device cpu --kernels "$1" --cases 24 --vectors none \
        --ops "$2" --junit "$WORK/mutant.xml"
      xml_well_formed "$WORK/mutant.xml"
      grep -qE "<testcase [^>]*classname=\"$2\"" "$WORK/mutant.xml" || fail "no $2 test case"
      grep -qE '<failure message="[^"]*; reproduce: tapecheck run --device cpu' \
        "$WORK/mutant.xml" || fail "no failure with its reproduce command"
    fi
    ;;

  junit-certify)  # ARGS: [MUTANT.so]: certified has no failure; rejected fails the verdict
    need_xmllint
    expect 0 300 "$TAPECHECK" certify --kernels aten --device cpu --cases 6 \
      --out "$WORK/cert" --junit "$WORK/cert.xml"
    xml_well_formed "$WORK/cert.xml"
    grep -qE '<testsuites name="tapecheck certify: [^"]*" tests="[1-9][0-9]*" failures="0"' \
      "$WORK/cert.xml" || fail "a certified run's report has failures"
    grep -qF '<testcase name="verdict" classname="certificate"/>' "$WORK/cert.xml" ||
      fail "no passing verdict"
    if [ $# -ge 1 ]; then
      expect 1 300 "$TAPECHECK" certify --kernels "$1" --device cpu --cases 24 \
        --out "$WORK/rejected" --junit "$WORK/rejected.xml"
      xml_well_formed "$WORK/rejected.xml"
      grep -qF '<failure message="REJECTED: ' "$WORK/rejected.xml" || fail "verdict not failed"
    fi
    ;;

  quiet-wrapper)  # tools/tapecheck: silent when the build is up to date, build output on stderr
    for p in $(grep -v '^#' "$SOURCE/tools/packages.txt"); do
      if ! dpkg-query -W -f='${Status}' "$p" 2> /dev/null | grep -q "install ok installed"; then
        say "SKIP: $p is not installed (the wrapper would install it)"
        exit 77
      fi
    done
    # A stand-in build: tools/tapecheck is a script that prints its arguments.
    mkdir -p "$WORK/project"
    printf '#!/bin/sh\necho "stand-in: $*"\n' > "$WORK/project/stand_in.sh"
    chmod +x "$WORK/project/stand_in.sh"
    cat > "$WORK/project/CMakeLists.txt" << 'CMAKE'
cmake_minimum_required(VERSION 3.16)
project(stand_in NONE)
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/tools/tapecheck
  COMMAND ${CMAKE_COMMAND} -E copy ${CMAKE_SOURCE_DIR}/stand_in.sh
          ${CMAKE_BINARY_DIR}/tools/tapecheck
  DEPENDS ${CMAKE_SOURCE_DIR}/stand_in.sh)
add_custom_target(stand_in ALL DEPENDS ${CMAKE_BINARY_DIR}/tools/tapecheck)
CMAKE
    cmake -S "$WORK/project" -B "$WORK/build" -G Ninja > "$WORK/configure.log" 2>&1 ||
      { fail "cannot configure the stand-in"; cat "$WORK/configure.log"; }
    export TAPECHECK_BUILD_DIR="$WORK/build"
    expect 0 120 "$SOURCE/tools/tapecheck" --version one
    stdout_is "stand-in: --version one"
    [ -s "$WORK/err" ] || fail "a build happened and nothing said so on stderr"
    expect 0 120 "$SOURCE/tools/tapecheck" --version two
    stdout_is "stand-in: --version two"
    stderr_empty
    printf '#!/bin/sh\necho "rebuilt: $*"\n' > "$WORK/project/stand_in.sh"
    expect 0 120 "$SOURCE/tools/tapecheck" three
    stdout_is "rebuilt: three"
    stderr_has "bootstrap: building"
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
