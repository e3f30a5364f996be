#!/usr/bin/env bash
# What `make test` needs beyond cargo and npm, from Debian's packages: Chromium for the
# end-to-end tests (never a downloaded browser), poppler's pdftotext (reads invoice PDFs
# back), python3-venv (the venv of localstripe and moto) and prometheus (promtool checks
# /metrics; a real Prometheus scrapes two instances). What is missing is installed
# here when we may (root, or sudo without a password); otherwise we stop at once with the
# one command that installs it all.
# CHROMIUM_BIN, PROMTOOL, APT_GET and SUDO are settable so the test of this script can run it
# without touching the machine's packages.
set -euo pipefail

CHROMIUM_BIN=${CHROMIUM_BIN:-/usr/bin/chromium}
PROMTOOL=${PROMTOOL:-promtool}
APT_GET=${APT_GET:-apt-get}
SUDO=${SUDO:-sudo}

missing=()
[ -x "$CHROMIUM_BIN" ] || missing+=(chromium)
command -v pdftotext >/dev/null || missing+=(poppler-utils)
python3 -c 'import ensurepip' 2>/dev/null || missing+=(python3-venv)
command -v "$PROMTOOL" >/dev/null || missing+=(prometheus)
[ ${#missing[@]} -eq 0 ] && exit 0

command_line="apt-get update && apt-get install -y ${missing[*]}"
if [ "${EUID_OVERRIDE:-$EUID}" -eq 0 ]; then
  as_root=()
elif command -v "$SUDO" >/dev/null && "$SUDO" -n true 2>/dev/null; then
  as_root=("$SUDO")
else
  echo "make test needs: ${missing[*]}. Install them with (as root):" >&2
  echo "  $command_line" >&2
  exit 1
fi
echo "installing ${missing[*]} (Debian packages) for the tests" >&2
if ! { "${as_root[@]}" "$APT_GET" update -qq && "${as_root[@]}" "$APT_GET" install -y -qq "${missing[@]}"; }; then
  echo "installing ${missing[*]} failed. Install them with (as root):" >&2
  echo "  $command_line" >&2
  exit 1
fi
