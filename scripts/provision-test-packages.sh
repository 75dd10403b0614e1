#!/usr/bin/env bash
# Installs, from Debian's packages, the system programs the test suites run when they are missing:
# Redis and PostgreSQL (each test run starts its own, test/support/services.js), nginx (the cluster
# tests' balancer), Chromium (the page tests), OpenStack Swift with memcached (the S3 server of the
# object-store tests), and Ceph's monitor, OSD and RADOS Gateway (the S3 server with STS and
# conditional PUTs), and NATS with JetStream (the change feed's tests start their own). Needs root, or sudo without a password.
set -euo pipefail

missing=()
# A Redis or PostgreSQL of the developer's own (TEST_REDIS_URL, PG_TEST_URL) needs neither installed.
[ -n "${TEST_REDIS_URL:-}" ] || command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
[ -n "${PG_TEST_URL:-}" ] || compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null || missing+=(postgresql)
[ -x /usr/sbin/nginx ] || missing+=(nginx-light)
[ -x /usr/bin/chromium ] || missing+=(chromium)
for p in swift-proxy swift-object swift-container swift-account; do
  [ -x "/usr/bin/${p}-server" ] || missing+=("$p")
done
[ -x /usr/bin/memcached ] || missing+=(memcached)
[ -x /usr/bin/ceph-mon ] || missing+=(ceph-mon)
[ -x /usr/bin/ceph-osd ] || missing+=(ceph-osd)
[ -x /usr/bin/radosgw ] || missing+=(radosgw)
[ -x /usr/bin/radosgw-admin ] && [ -x /usr/bin/ceph ] || missing+=(ceph-common)
[ -x /usr/sbin/nats-server ] || missing+=(nats-server)
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  as_root=(sudo -n)
else
  echo "The tests need these Debian packages: ${missing[*]}." >&2
  echo "Install them as root: apt-get install -y --no-install-recommends ${missing[*]}" >&2
  exit 1
fi

echo "== installing ${missing[*]} from Debian's packages (for the tests)"
"${as_root[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
