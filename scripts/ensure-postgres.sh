#!/usr/bin/env bash
# Make sure PostgreSQL's server programs (initdb, pg_ctl) are installed: the
# runner's tests start a throwaway server on loopback with them, and they fail
# (never skip) without it. Installs Debian's `postgresql` when it is missing.
set -euo pipefail
if compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "PostgreSQL is not installed and this is not root: run 'apt-get install -y postgresql'" >&2
    exit 1
fi
apt-get update
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || {
    echo "postgresql was installed but no initdb was found under /usr/lib/postgresql" >&2
    exit 1
}
