#!/usr/bin/env bash
# Installs the system programs the test suite runs for real (redis-server, Chromium, PostgreSQL) when
# they are missing and we may (root + apt-get). Otherwise says what to install and fails.
set -euo pipefail
missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
[ -x /usr/bin/chromium ] || missing+=(chromium)
ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 || missing+=(postgresql)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing ${missing[*]} from Debian's packages…"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
else
  echo "The tests need: ${missing[*]} (Debian: sudo apt-get install -y ${missing[*]})." >&2
  exit 1
fi
