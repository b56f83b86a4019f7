#!/usr/bin/env bash
# The shared-state tests need a PostgreSQL server binary (Debian's postgresql package). Install it when
# missing and we are root (CI, the project's machines); otherwise say how. The tests start their own
# server in a temporary directory: the package's own cluster is not created or started here.
set -euo pipefail
if compgen -G "/usr/lib/postgresql/*/bin/postgres" >/dev/null; then exit 0; fi
if [[ $(id -u) != 0 ]] || ! command -v apt-get >/dev/null; then
  echo "ensure-postgres: no PostgreSQL server in /usr/lib/postgresql; install Debian's postgresql package (apt-get install postgresql)" >&2
  exit 1
fi
echo "ensure-postgres: installing Debian's postgresql package" >&2
mkdir -p /etc/postgresql-common
[[ -f /etc/postgresql-common/createcluster.conf ]] || echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.conf
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq -o Dpkg::Options::=--force-confold postgresql >/dev/null
compgen -G "/usr/lib/postgresql/*/bin/postgres" >/dev/null || { echo "ensure-postgres: postgresql installed but no server binary found" >&2; exit 1; }
