# Shared by scripts/dev-up, dev-down, test and bench/: packages, build, and
# the local PostgreSQL cluster. Source it; it defines functions only.

BDS_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PG_BIN=/usr/lib/postgresql/15/bin

# Debian 12 packages the project builds, tests and runs with.
BDS_PKGS="build-essential autoconf automake libtool pkg-config
  libfcgi-dev libjson-c-dev libpq-dev libsodium-dev libssl-dev
  libcurl4-openssl-dev check postgresql-15 postgresql-client-15 nginx
  spawn-fcgi curl ca-certificates openssl procps util-linux systemd
  libidn2-dev libpsl-dev publicsuffix"	# lib/rtl: onboarding URLs (IDNA, registrable domain)
# lib/billers: biller logos typed from their content (libmagic)
BDS_PKGS="$BDS_PKGS libmagic-dev"
# tools/biller-sim and its self-test run on Debian's python3.
# the browser suite (Debian chromium, chromedriver, selenium).
BDS_PKGS="$BDS_PKGS python3 chromium chromium-driver python3-selenium"
# the OpenAPI document's checks: YAML, JSON Schema (Draft 2020-12), the
# schema-driven fuzzer; Node.js and npm for the reference page, the linter
# and the generated TypeScript client (npm comes with NodeSource's nodejs;
# scripts/npm-tools installs Debian's npm where it is missing).
BDS_PKGS="$BDS_PKGS python3-yaml python3-jsonschema python3-hypothesis nodejs"
# bill imports: bds-extract reads documents with MuPDF (Debian's static
# library, whose -dev package depends on none of its third-party libraries:
# they are named here), Tesseract's English model and Leptonica for OCR,
# libseccomp for its sandbox; the test documents come from mupdf-tools,
# python3-reportlab, python3-pil and ImageMagick.
BDS_PKGS="$BDS_PKGS libmupdf-dev mupdf-tools libfreetype-dev libharfbuzz-dev
  libjbig2dec0-dev libopenjp2-7-dev libjpeg-dev libgumbo-dev libmujs-dev
  libtesseract-dev tesseract-ocr-eng libleptonica-dev libseccomp-dev
  python3-reportlab python3-pil imagemagick"
# partitions (pg_partman), and the libFuzzer targets (clang with its runtime)
BDS_PKGS="$BDS_PKGS postgresql-15-partman clang libclang-rt-14-dev"
# high availability: pg_auto_failover's extension and pg_autoctl (scripts/ha)
BDS_PKGS="$BDS_PKGS postgresql-15-auto-failover pg-auto-failover-cli"

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Install whatever of the given packages is missing (as root, or via sudo).
need_pkgs() {
  local missing="" p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
      || missing="$missing $p"
  done
  [ -z "$missing" ] && return 0
  say "installing:$missing"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  # policy-rc.d keeps package scripts from starting system services we do not use.
  local prc=/usr/sbin/policy-rc.d created_prc=""
  if [ ! -e "$prc" ] && [ -z "$sudo" ]; then
    printf '#!/bin/sh\nexit 101\n' > "$prc"; chmod 755 "$prc"; created_prc=1
  fi
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
    --no-install-recommends $missing >/dev/null
  local rc=$?
  [ -n "$created_prc" ] && rm -f "$prc"
  return $rc
}

# build DIR [configure args...]: out-of-tree autotools build.
build_tree() {
  local dir=$1; shift
  if [ ! -x "$BDS_TOP/configure" ] || [ "$BDS_TOP/configure.ac" -nt "$BDS_TOP/configure" ] \
     || [ "$BDS_TOP/Makefile.am" -nt "$BDS_TOP/Makefile.in" ]; then
    say "autoreconf"
    (cd "$BDS_TOP" && autoreconf -fi >/dev/null 2>&1) || die "autoreconf failed"
  fi
  mkdir -p "$dir"
  if [ ! -f "$dir/Makefile" ] || [ "$BDS_TOP/configure" -nt "$dir/Makefile" ] \
     || [ "$(cat "$dir/.configure-args" 2>/dev/null)" != "$*" ]; then
    say "configure $dir $*"
    (cd "$dir" && "$BDS_TOP/configure" "$@" >configure.out 2>&1) \
      || { tail -20 "$dir/configure.out"; die "configure failed"; }
    echo "$*" > "$dir/.configure-args"
  fi
  say "make ($dir)"
  make -C "$dir" -j"$(nproc)" >"$dir/make.out" 2>&1 \
    || { tail -40 "$dir/make.out"; die "build failed"; }
}

# The user PostgreSQL runs as: ourselves, or `postgres` when we are root.
pg_user() { if [ "$(id -u)" -eq 0 ]; then echo postgres; else id -un; fi; }
as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# pg_up DATADIR SOCKDIR LOGFILE: init (once) and start a private cluster
# listening only on a unix socket in SOCKDIR; database `bds`, role `bds`.
pg_up() {
  local data=$1 sock=$2 log=$3 u
  u=$(pg_user)
  mkdir -p "$data" "$sock" "$(dirname "$log")"
  chmod 0755 "$sock"
  [ "$(id -u)" -eq 0 ] && chown "$u" "$data" "$sock" "$(dirname "$log")"
  chmod 0700 "$data"
  if [ ! -f "$data/PG_VERSION" ]; then
    as_pg "$PG_BIN/initdb" -D "$data" -U bds -A trust --no-sync -E UTF8 \
      --locale=C.UTF-8 >/dev/null || die "initdb failed"
  fi
  if ! as_pg "$PG_BIN/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    as_pg "$PG_BIN/pg_ctl" -D "$data" -l "$log" -w -t 30 \
      -o "-k $sock -c listen_addresses= -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
      start >/dev/null || { tail -20 "$log"; die "postgres failed to start"; }
  fi
  as_pg "$PG_BIN/psql" -h "$sock" -U bds -d postgres -Atqc \
    "SELECT 1 FROM pg_database WHERE datname = 'bds'" | grep -q 1 \
    || as_pg "$PG_BIN/createdb" -h "$sock" -U bds bds || die "createdb failed"
}

pg_down() {
  local data=$1
  [ -f "$data/postmaster.pid" ] || return 0
  as_pg "$PG_BIN/pg_ctl" -D "$data" -m fast -w stop >/dev/null 2>&1 || true
}

# render_nginx TEMPLATE OUT key=value...: substitute @KEY@ placeholders.
render_nginx() {
  local tpl=$1 out=$2; shift 2
  local expr=() kv
  for kv in "$@"; do expr+=(-e "s|@${kv%%=*}@|${kv#*=}|g"); done
  sed "${expr[@]}" "$tpl" > "$out"
  ! grep -n '@[A-Z_]*@' "$out" || die "unrendered placeholder in $out"
}

# wait_http URL SECONDS: until it answers 200.
wait_http() {
  local url=$1 secs=${2:-15} i
  for ((i = 0; i < secs * 10; i++)); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$url")" = 200 ] && return 0
    sleep 0.1
  done
  return 1
}
