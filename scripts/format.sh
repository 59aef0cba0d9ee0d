#!/usr/bin/env bash
# Formats the tracked C/C++ files (*.cc, *.h) with clang-format and the repository's .clang-format.
# Usage: scripts/format.sh [--check] [FILE...]
#   (no option)  formats the files in place
#   --check      changes nothing; lists the files whose formatting differs and exits 1 if there are any
# FILE...: only these files (default: every tracked *.cc and *.h). CLANG_FORMAT picks the binary
# (default clang-format; the .clang-format is written for version 14, which scripts/install-deps.sh
# installs: other versions format some constructs differently). Exit status 2 when clang-format
# is missing or fails on a file.
set -euo pipefail

check=0
files=()
for arg in "$@"; do
  case "$arg" in
    --check) check=1 ;;
    -h|--help) sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "format.sh: unknown option '$arg' (see --help)" >&2; exit 2 ;;
    *) files+=("$arg") ;;
  esac
done

cd "$(git rev-parse --show-toplevel)"
clang_format=${CLANG_FORMAT:-clang-format}
if ! command -v "$clang_format" >/dev/null 2>&1; then
  echo "format.sh: $clang_format not found (scripts/install-deps.sh installs it)" >&2
  exit 2
fi
version=$("$clang_format" --version 2>/dev/null | sed -n 's/.*version \([0-9][0-9]*\)\..*/\1/p' || true)
if [[ "$version" != "14" ]]; then
  echo "format.sh: warning: $clang_format is version ${version:-unknown}, .clang-format is written for 14" >&2
fi
if [[ ${#files[@]} -eq 0 ]]; then
  mapfile -t files < <(git ls-files '*.cc' '*.h')
fi
[[ ${#files[@]} -gt 0 ]] || exit 0

jobs=$(nproc 2>/dev/null || echo 2)
if [[ $check -eq 0 ]]; then
  printf '%s\0' "${files[@]}" | xargs -0 -P "$jobs" -n 20 "$clang_format" -i --style=file || {
    echo "format.sh: $clang_format failed" >&2
    exit 2
  }
  exit 0
fi

# --check: one line per file that differs, "!file" for a file clang-format could not format.
export clang_format
results=$(printf '%s\0' "${files[@]}" | xargs -0 -P "$jobs" -n 20 bash -c '
  formatted=$(mktemp)
  trap "rm -f \"$formatted\"" EXIT
  for f in "$@"; do
    if ! "$clang_format" --style=file "$f" >"$formatted"; then
      echo "!$f"
    elif ! cmp -s "$formatted" "$f"; then
      echo "$f"
    fi
  done' _)
if grep -q '^!' <<<"$results"; then
  grep '^!' <<<"$results" | sed 's/^!/format.sh: clang-format failed on /' >&2
  exit 2
fi
if [[ -n "$results" ]]; then
  echo "Files not formatted as .clang-format says (scripts/format.sh formats them):"
  sort <<<"$results"
  exit 1
fi
