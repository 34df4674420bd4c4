#!/usr/bin/env bash
# Make sure the current Kubernetes control plane (kube-apiserver, kube-scheduler, kube-controller-manager,
# kubectl and etcd, at the versions current/go.mod pins) is in the cache; build it once if not. With the binaries
# cached (their build-id stamp matches this recipe) it returns in well under a second.
#
# Route (Go module proxy only: the project's own module test/e2e/kube/current):
#   - current/go.mod requires k8s.io/kubernetes at the release below, with `replace` directives that pin the staging
#     modules it requires at v0.0.0 (k8s.io/api, apimachinery, client-go, ...) to their v0.x tags of the same
#     release, the usual way to build Kubernetes components as a dependency; current/go.sum fixes every hash;
#   - current/etcd is etcd's own main over go.etcd.io/etcd/server/v3 at the version that release requires
#     (Debian's etcd 3.4 is older than anything a current kube-apiserver is tested against);
#   - Go 1.26 from /usr/local/go (FLOATIP_KUBE_GO overrides), GOTOOLCHAIN=local (never a downloaded toolchain),
#     GOFLAGS=-mod=mod, CGO off, stripped; module and build caches under <cache>/build-current.
# A first build takes about 15 minutes of a 2-core machine (see test/e2e/README.md); later ones reuse the Go build
# cache. The v1.20.2 control plane (ensure.sh, Debian's Go 1.19) is a separate build and sees none of this.
#
# Usage: build-current.sh [--prune]
#   --prune   afterwards delete build-current/ (module and build caches, about 3 GB), keeping bin-<version>/
# Env: FLOATIP_KUBE_HOME (cache dir, default $HOME/.cache/floatip-kube), FLOATIP_KUBE_GO (default /usr/local/go/bin/go)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
export FLOATIP_KUBE_VERSION=current
# shellcheck source=lib.sh
. "$HERE/lib.sh"
kr_init

kr_args_prune "$0" "$@"
MOD=$HERE/current
BUILD=$KR_HOME/build-current
COMPONENTS=(kube-apiserver kube-scheduler kube-controller-manager kubectl etcd)
T0=$(kr_now_ms)

exec 9>"$KR_HOME/.ensure-current.lock"
flock -w 3600 9 || kr_die "could not lock $KR_HOME/.ensure-current.lock"

# the recipe: the module files, the toolchain and the build command's revision (bump r<N> when the go build line or
# its flags change); any change rebuilds
RECIPE_REV=r1
GO=${FLOATIP_KUBE_GO:-/usr/local/go/bin/go}
[ -x "$GO" ] || kr_die "no Go at $GO (Go >= 1.26 is needed for $KR_VERSION; FLOATIP_KUBE_GO names another)"
GOVERSION=$(GOTOOLCHAIN=local GOENV=off "$GO" env GOVERSION)
recipe() { cat "$MOD/go.mod" "$MOD/go.sum" "$MOD/etcd/main.go" | sha256sum | cut -c1-16; }
BUILD_ID="$KR_VERSION+etcd-$KR_ETCD_VERSION+$GOVERSION+$(recipe)+$RECIPE_REV"

missing=()
for c in "${COMPONENTS[@]}"; do
  if ! [ -x "$KR_BIN/$c" ] || [ "$(cat "$KR_BIN/.$c.build-id" 2>/dev/null)" != "$BUILD_ID" ]; then missing+=("$c"); fi
done
if [ ${#missing[@]} -eq 0 ]; then
  [ $PRUNE = 1 ] && [ -d "$BUILD" ] && { rm -rf "$BUILD"; kr_log "pruned build-current/"; }
  kr_log "cached: ${COMPONENTS[*]} ($KR_VERSION, etcd $KR_ETCD_VERSION) in $KR_BIN (check took $(kr_since "$T0"))"
  exit 0
fi
kr_log "building ${missing[*]} ($KR_VERSION, etcd $KR_ETCD_VERSION, $GOVERSION) into $KR_BIN (from nothing: about 15 min on 2 cores)"
command -v curl >/dev/null && command -v openssl >/dev/null && command -v python3 >/dev/null ||
  kr_die "curl, openssl and python3 are needed (ensure.sh installs them)"

# only what is set here reaches go, besides the caller's way to the module proxy (GOPROXY, GOSUMDB, GOPRIVATE...)
for v in $(env | sed -n 's/^\(GO[A-Z0-9_]*\)=.*/\1/p'); do
  case $v in GOPROXY|GOSUMDB|GONOSUMDB|GOPRIVATE|GONOPROXY|GOINSECURE) ;; *) unset "$v" ;; esac
done
export GOENV=off GOTOOLCHAIN=local GOFLAGS='-mod=mod -buildvcs=false' GOWORK=off CGO_ENABLED=0
export GOCACHE=$BUILD/gocache GOMODCACHE=$BUILD/gomod GOPATH=$BUILD/gopath
mkdir -p "$BUILD/logs" "$KR_BIN"
LOG=$BUILD/logs/go-build.log
LD="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  LD="$LD -X $p.gitVersion=$KR_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$(cut -d. -f2 <<<"$KR_VERSION")"
  LD="$LD -X $p.gitTreeState=clean"
done
pkgs=()
for c in "${missing[@]}"; do
  if [ "$c" = etcd ]; then pkgs+=(./etcd); else pkgs+=("k8s.io/kubernetes/cmd/$c"); fi
done
out=$(mktemp -d "$BUILD/.out.XXXXXX")
TS=$(kr_now_ms)
(cd "$MOD" && "$GO" mod download) >"$LOG" 2>&1 || { tail -n 30 "$LOG" >&2; kr_die "go mod download failed (log $LOG)"; }
kr_log "modules downloaded ($(kr_since "$TS"))"
TS=$(kr_now_ms)
(cd "$MOD" && "$GO" build -trimpath -tags selinux,notest -ldflags "$LD" -o "$out/" "${pkgs[@]}") >>"$LOG" 2>&1 ||
  { tail -n 30 "$LOG" >&2; kr_die "go build ${missing[*]} failed (log $LOG)"; }
# go.mod and go.sum are complete (every component is a tool of the module): a build that had to change them
# would stamp a recipe that is not the committed one
[ "$BUILD_ID" = "$KR_VERSION+etcd-$KR_ETCD_VERSION+$GOVERSION+$(recipe)+$RECIPE_REV" ] ||
  kr_die "the build changed $MOD/go.mod or go.sum: run go mod tidy there and commit the result"
for c in "${missing[@]}"; do
  case $c in
    etcd) v=$("$out/etcd" --version 2>/dev/null || true); want="etcd Version: ${KR_ETCD_VERSION#v}" ;;
    kubectl) v=$("$out/kubectl" version --client 2>/dev/null || true); want=$KR_VERSION ;;
    *) v=$("$out/$c" --version 2>/dev/null || true); want=$KR_VERSION ;;
  esac
  grep -q -F "$want" <<<"$v" || kr_die "$c reports '$v', not $want"
  mv -f "$out/$c" "$KR_BIN/$c"
  echo "$BUILD_ID" > "$KR_BIN/.$c.build-id"
done
rmdir "$out"
kr_log "go build ${missing[*]} ($(kr_since "$TS"), $(du -sch "${missing[@]/#/$KR_BIN/}" | tail -n 1 | cut -f1))"
if [ $PRUNE = 1 ]; then rm -rf "$BUILD"; kr_log "pruned build-current/"; fi
kr_log "built ${missing[*]} into $KR_BIN (took $(kr_since "$T0"))"
