#!/bin/sh
# run-fuzzers.sh [SECONDS [TARGET...]]: build the libFuzzer targets in a separate build
# directory (clang, --enable-fuzzing) and run each for SECONDS (default 30), starting
# from the seed corpus in tests/fuzz/corpus/TARGET (whose regression inputs therefore
# run first). Prints "FUZZ PASS: TARGET" or "FUZZ FAIL: TARGET" per target and exits 1
# if any target crashed, leaked, timed out or failed to build. See doc/fuzzing.md.
#
# Environment: LDP_FUZZ_BUILD_DIR (default: fuzz-build/ in the source tree),
# CC (default clang), LDP_FUZZ_JOBS (make -j, default 2), LDP_FUZZ_ARGS (extra
# libFuzzer options).
set -u
secs=${1:-30}
[ $# -gt 0 ] && shift
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${LDP_FUZZ_BUILD_DIR:-$src/fuzz-build}
jobs=${LDP_FUZZ_JOBS:-2}
all="fuzz-pipeline fuzz-dataset-gin_text fuzz-dataset-linqs fuzz-dataset-musae fuzz-dataset-pubmed fuzz-dataset-tu"
targets=${*:-$all}

fail_all() { # a build problem fails every target, so CI counts it
  for t in $targets; do echo "FUZZ FAIL: $t ($1)"; done
  exit 1
}

mkdir -p "$build" || fail_all "cannot create $build"
build=$(cd "$build" && pwd)

# A clean copy of the sources: the tree itself may be configured in place, which
# rules out a VPATH build from it. `make distdir` keeps file times, so the object
# directory below stays incremental across runs.
if [ -f "$src/Makefile" ]; then
  rm -rf "$build/src"
  make -s -C "$src" distdir distdir="$build/src" >"$build/distdir.log" 2>&1 || {
    tail -n 20 "$build/distdir.log"; fail_all "make distdir failed"; }
  srcdir="$build/src"
else
  [ -x "$src/configure" ] || (cd "$src" && ./bootstrap) || fail_all "bootstrap failed"
  srcdir="$src"
fi

mkdir -p "$build/obj"
cd "$build/obj" || fail_all "no object directory"
if [ ! -f config.status ] || [ "$srcdir/configure" -nt config.status ]; then
  # No OpenMP: one thread per run keeps executions deterministic and fast.
  "$srcdir/configure" CC="${CC:-clang}" --enable-fuzzing --disable-openmp >"$build/configure.log" 2>&1 || {
    tail -n 30 "$build/configure.log"; fail_all "configure failed (is clang installed?)"; }
fi
progs=""
for t in $targets; do progs="$progs tests/fuzz/$t"; done
# shellcheck disable=SC2086
make -j"$jobs" all >"$build/make.log" 2>&1 || { tail -n 40 "$build/make.log"; fail_all "build failed"; }

failed=0
for t in $targets; do
  seeds="$src/tests/fuzz/corpus/$t"
  work="$build/corpus/$t"
  mkdir -p "$work" "$build/artifacts"
  # New inputs go to the work corpus (first directory), never into the source tree.
  # shellcheck disable=SC2086
  ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:${ASAN_OPTIONS:-}" \
  UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
  LDPGNN_PLUGIN_PATH="" \
    "./tests/fuzz/$t" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -malloc_limit_mb=1024 \
      -max_len=16384 -print_final_stats=1 -artifact_prefix="$build/artifacts/$t-" ${LDP_FUZZ_ARGS:-} \
      "$work" "$seeds" >"$build/$t.log" 2>&1
  rc=$?
  if [ $rc -eq 0 ]; then
    echo "FUZZ PASS: $t ($(grep -o 'stat::number_of_executed_units: *[0-9]*' "$build/$t.log" | grep -o '[0-9]*$') runs in ${secs}s)"
  else
    failed=$((failed + 1))
    echo "FUZZ FAIL: $t (exit $rc; log $build/$t.log)"
    grep -E -m1 -A25 '^==[0-9]+==ERROR|runtime error|CRITICAL|ERROR: libFuzzer|deadly signal' "$build/$t.log" | sed 's/^/  /'
    ls "$build/artifacts/$t-"* 2>/dev/null | sed 's/^/  reproducer: /'
  fi
done
[ $failed -eq 0 ]
