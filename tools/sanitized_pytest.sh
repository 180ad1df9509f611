#!/usr/bin/env bash
# Run pytest on the sanitizer build of the kernels (CONTRIBUTING.md,
# "Sanitizer build") and say whether any sanitizer reported anything.
#
#   NORMOPS_SANITIZE=address,undefined python setup.py build_ext --inplace
#   tools/sanitized_pytest.sh [pytest arguments]          # e.g. -q tests/test_softmax.py
#   SANITIZE_LEAKS=1 tools/sanitized_pytest.sh [...]      # leak check at exit too
#
# Environment: PYTHON (default python), SANITIZE_LOGS (a directory for the
# reports, default a new one under /tmp), SANITIZE_ASAN_OPTIONS (more
# ASAN_OPTIONS, e.g. quarantine_size_mb=0 for the 8 GiB tests).
#
# Exit status: 0 when pytest passed and no report names our code; 1 when
# pytest failed; 2 when a sanitizer reported (the reports' files are named).
# Leak reports count only when a frame of the allocation is in our kernels
# (isa_*.so, normops/_kernels/): the interpreter's own objects alive at exit are
# always reported and are not ours.
set -uo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python}
logs=${SANITIZE_LOGS:-$(mktemp -d /tmp/normops-sanitize.XXXXXX)}
mkdir -p "$logs"
rm -f "$logs"/san.* "$logs"/pytest.log

if ! grep -q __asan_init normops/_kernels/isa_*.so 2> /dev/null; then
    echo "sanitized_pytest: the kernels are not a sanitizer build (build them with NORMOPS_SANITIZE=address,undefined)" >&2
    exit 1
fi

if [ "${SANITIZE_LEAKS:-0}" = 1 ]; then leaks=1; else leaks=0; fi
# The ASan, LSan and UBSan runtimes share log_path and exitcode (the last
# options parsed win), so both get the same log_path and nobody sets exitcode.
# GCC's UBSan prints its reports on file descriptor 2 whatever log_path says:
# --capture=sys leaves fd 2 alone, so they land in pytest.log, not in a
# capture buffer that a halted process takes with it.
env LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libstdc++.so)" \
    PYTHONMALLOC=malloc \
    ASAN_OPTIONS="detect_leaks=$leaks:allocator_may_return_null=1${SANITIZE_ASAN_OPTIONS:+:$SANITIZE_ASAN_OPTIONS}:log_path=$logs/san" \
    UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:log_path=$logs/san" \
    PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" \
    "$python" -m pytest -p no:cacheprovider --capture=sys "$@" 2>&1 | tee "$logs/pytest.log"
status=${PIPESTATUS[0]}

found=0
for f in "$logs"/san.*; do
    [ -e "$f" ] || continue
    if grep -q "ERROR: AddressSanitizer\|runtime error:" "$f"; then
        echo "sanitized_pytest: REPORT in $f" >&2; found=1
    fi
    if grep -q "ERROR: LeakSanitizer" "$f"; then
        # one leak report per block "Direct/Indirect leak of ..." up to a blank line
        if awk -v ours='isa_[a-z0-9]+[.]cpython|normops/_kernels/' '/leak of/{blk=""} {blk=blk $0 "\n"} /^$/{if (blk ~ ours) hit=1; blk=""}
                END{if (blk ~ ours) hit=1; exit !hit}' "$f"; then
            echo "sanitized_pytest: LEAK from our code in $f" >&2; found=1
        else
            echo "sanitized_pytest: $f: leaks of the interpreter or other libraries only (no frame of ours)" >&2
        fi
    fi
done
if grep -q "runtime error:" "$logs/pytest.log"; then
    echo "sanitized_pytest: UBSan REPORT in $logs/pytest.log" >&2; found=1
fi
echo "sanitized_pytest: logs in $logs; pytest exit status $status" >&2
if [ "$found" = 1 ]; then exit 2; fi
# at the end of a leak run LSan exits with status 1 for the interpreter's
# own leaks: pytest's summary says whether the tests themselves passed
if [ "$leaks" = 1 ] && [ "$status" = 1 ] && grep -qE "[0-9]+ passed" "$logs/pytest.log" \
        && ! grep -qE "[0-9]+ (failed|errors?)([ ,]|$)" "$logs/pytest.log"; then
    status=0
fi
[ "$status" = 0 ] || exit 1
exit 0
