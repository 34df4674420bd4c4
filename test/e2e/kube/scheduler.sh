#!/usr/bin/env bash
# Restart only the kube-scheduler of a cluster that up.sh started, with a configuration taken from the environment:
# the same knobs and defaults as up.sh (EXTENDER_URL, the EXTENDER_*_VERBs, NODE_CACHE_CAPABLE, MANAGED_RESOURCE,
# SCHED_QPS, SCHED_CONFIG, SCHED_V, ...). EXTENDER_URL= (empty) gives a scheduler without extender.
# etcd, kube-apiserver and kube-controller-manager keep running, so every object survives; pods still pending are
# scheduled by the new scheduler. Knobs left out fall back to up.sh's defaults, NOT to the previous scheduler's
# settings: pass the whole configuration every time. Takes about 2 s (down.sh + up.sh: 8 to 13 s).
# Updates the scheduler's entries in run/cluster.env and run/cluster.json.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"
kr_init
[ -f "$KR_RUN/cluster.env" ] || kr_die "no cluster.env in $KR_RUN: start a cluster with up.sh first"
# one value of the running cluster's description, without letting it override the caller's environment
cluster() { ( # shellcheck disable=SC1091
  . "$KR_RUN/cluster.env"; printf '%s' "${!1-}" ); }
[ "$(cluster KR_KUBE)" = "$KR_KUBE" ] ||
  kr_die "the cluster in $KR_RUN runs $(cluster KR_VERSION), not FLOATIP_KUBE_VERSION=$KR_KUBE ($KR_VERSION)"
SCHED_SECURE_PORT=$(cluster SCHED_SECURE_PORT)
SCHED_HEALTHZ_PORT=$(cluster SCHED_HEALTHZ_PORT)
[ -n "$SCHED_SECURE_PORT" ] && [ -n "$SCHED_HEALTHZ_PORT" ] ||
  kr_die "$KR_RUN/cluster.env names no scheduler ports; restart the cluster with this directory's up.sh"
kr_pid_of kube-apiserver kube-apiserver >/dev/null || kr_die "the kube-apiserver of $KR_RUN is not running"
[ -x "$KR_BIN/kube-scheduler" ] || kr_die "no $KR_BIN/kube-scheduler: run $HERE/ensure.sh (current: build-current.sh) first"
kr_sched_settings
T0=$(kr_now_ms)

if pid=$(kr_pid_of kube-scheduler kube-scheduler); then
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid" 2>/dev/null || true; fi
  for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  kill -0 "$pid" 2>/dev/null && kr_die "old kube-scheduler (pid $pid) does not go away"
  kr_log "stopped kube-scheduler (pid $pid) after $(kr_since "$T0")"
fi
rm -f "$KR_RUN/kube-scheduler.pid"
for p in "$SCHED_SECURE_PORT" "$SCHED_HEALTHZ_PORT"; do
  for _ in $(seq 1 100); do kr_port_busy "$p" || break; sleep 0.05; done
  kr_port_busy "$p" && kr_die "port 127.0.0.1:$p is still in use after the old scheduler stopped"
done

if [ -n "${SCHED_CONFIG:-}" ]; then
  SCHED_CONFIG_USED=$SCHED_CONFIG
else
  SCHED_CONFIG_USED=$KR_RUN/scheduler-config.yaml
  kr_write_sched_config "$SCHED_CONFIG_USED"
fi
kr_start_scheduler "$SCHED_CONFIG_USED"
kr_cluster_files K8S_SCHEDULER=1 SCHED_CONFIG="$SCHED_CONFIG_USED" EXTENDER_URL="$EXTENDER_URL" \
  EXTENDER_FILTER_VERB="$EXTENDER_FILTER_VERB" EXTENDER_PRIORITIZE_VERB="$EXTENDER_PRIORITIZE_VERB" \
  EXTENDER_BIND_VERB="$EXTENDER_BIND_VERB" EXTENDER_PREEMPT_VERB="$EXTENDER_PREEMPT_VERB" \
  NODE_CACHE_CAPABLE="$NODE_CACHE_CAPABLE" MANAGED_RESOURCE="$MANAGED_RESOURCE" \
  SCHED_QPS="$SCHED_QPS" SCHED_BURST="$SCHED_BURST"
kr_log "kube-scheduler restarted (pid $(cat "$KR_RUN/kube-scheduler.pid"), extender ${EXTENDER_URL:-none}, nodeCacheCapable $NODE_CACHE_CAPABLE) in $(kr_since "$T0")"
