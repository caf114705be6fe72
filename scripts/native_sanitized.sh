#!/usr/bin/env bash
# Run the native loader's tests (and, given a directory, a native-vs-Python comparison of every
# file in it) with the module built under AddressSanitizer and UndefinedBehaviorSanitizer.
#   scripts/native_sanitized.sh [CORPUS_DIR]
# Needs gcc, libyaml's headers and an installed checkout (`pip install -e '.[test]'`); PYTHON names
# that install's interpreter (default: python3). The normal build of the module is put back at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
SO="dralint/inputs/_yamlfast$("$PY" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')"
INC=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
SAVED=$(mktemp)
trap '[ -s "$SAVED" ] && cp "$SAVED" "$SO"; rm -f "$SAVED"' EXIT
[ -e "$SO" ] && cp "$SO" "$SAVED"
gcc -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -fPIC -shared \
    "-I$INC" dralint/inputs/_yamlfast.c -lyaml -o "$SO"
export ASAN_OPTIONS=detect_leaks=0 DRALINT_REQUIRE_NATIVE=1
export LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
"$PY" -m pytest -q -p no:cacheprovider tests/test_native.py
if [ $# -gt 0 ]; then
    "$PY" - "$1" <<'PY'
import pathlib, sys
from dralint.inputs import load
from tests.test_native import _files, _same_file, _parse
n = bad = 0
for p in _files(pathlib.Path(sys.argv[1])):
    raw = p.read_bytes()
    n += 1
    if not _same_file(_parse(raw, True, path=str(p)), _parse(raw, False, path=str(p))):
        bad += 1
        print("differs:", p)
print(f"{n} files compared, {bad} differ")
sys.exit(1 if bad else 0)
PY
fi
