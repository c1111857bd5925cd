#!/usr/bin/env bash
# Installs PostgreSQL 15 with pgvector when missing and starts a throwaway server on loopback
# as an ordinary user. Prints the connection URL on its last line of stdout.
#
# Debian bookworm ships PostgreSQL 15 but no pgvector package, so pgvector 0.8.0 is built from
# Debian trixie's source package against postgresql-server-dev-15.
set -euo pipefail

PG_BIN=/usr/lib/postgresql/15/bin
PG_PORT="${MNEMO_CI_PG_PORT:-55432}"
PG_DIR="${MNEMO_CI_PG_DIR:-/tmp/mnemo-ci-pg}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

log() { echo "postgres.sh: $*" >&2; }

apt_updated=""
apt_install() {
    if [ -z "$apt_updated" ]; then
        $SUDO apt-get update -qq >&2
        apt_updated=1
    fi
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >&2
}

if [ ! -x "$PG_BIN/postgres" ]; then
    log "installing postgresql-15"
    apt_install postgresql-15
fi

if [ ! -f /usr/share/postgresql/15/extension/vector.control ]; then
    log "building pgvector from Debian trixie's source package"
    apt_install postgresql-server-dev-15 make gcc dpkg-dev
    work=$(mktemp -d)
    mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial" "$work/src"
    echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main" \
        > "$work/apt/sources.list"
    apt_opts=(-o "Dir::Etc::SourceList=$work/apt/sources.list" -o "Dir::Etc::SourceParts=-"
        -o "Dir::State::Lists=$work/apt/lists" -o "Dir::Cache=$work/apt/cache"
        -o "APT::Sandbox::User=root")
    apt-get "${apt_opts[@]}" update -qq >&2
    (cd "$work/src" && apt-get "${apt_opts[@]}" source -qq --download-only pgvector >&2 \
        && dpkg-source -x ./pgvector_*.dsc pgvector >&2)
    make -s -C "$work/src/pgvector" PG_CONFIG="$PG_BIN/pg_config" OPTFLAGS="" >&2
    $SUDO make -s -C "$work/src/pgvector" PG_CONFIG="$PG_BIN/pg_config" install >&2
    rm -rf "$work"
fi

# PostgreSQL refuses to run as root: run it as the packaged `postgres` user.
RUN=()
if [ "$(id -u)" -eq 0 ]; then
    id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
    RUN=(runuser -u postgres --)
fi

if [ -f "$PG_DIR/data/postmaster.pid" ] \
    && "${RUN[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" status >/dev/null 2>&1; then
    log "already running in $PG_DIR"
else
    rm -rf "$PG_DIR"
    mkdir -p "$PG_DIR"
    [ "$(id -u)" -eq 0 ] && chown postgres "$PG_DIR"
    "${RUN[@]}" "$PG_BIN/initdb" -D "$PG_DIR/data" -U mnemo --auth=trust -E UTF8 >/dev/null
    "${RUN[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w -o \
        "-c listen_addresses=127.0.0.1 -c port=$PG_PORT -c unix_socket_directories=$PG_DIR -c max_connections=200 -c fsync=on" \
        start >&2
fi
"$PG_BIN/psql" -q -h 127.0.0.1 -p "$PG_PORT" -U mnemo -d postgres -c "CREATE EXTENSION IF NOT EXISTS vector" >&2
echo "postgres://mnemo@127.0.0.1:$PG_PORT/postgres"
