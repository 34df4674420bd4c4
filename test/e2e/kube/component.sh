#!/usr/bin/env bash
# Stop or start one component of a cluster that up.sh started, leaving the others (and etcd's data) as they are:
# the faults an operator meets most (kube-apiserver or etcd restarted, controller-manager restarted).
#   component.sh stop  etcd|kube-apiserver|kube-controller-manager|kube-scheduler
#   component.sh start etcd|kube-apiserver|kube-controller-manager|kube-scheduler
#   component.sh ensure kube-scheduler   (start it again if it exited by itself, as a kubelet would)
# stop sends SIGKILL (a crash, and kube-apiserver 1.20 would otherwise wait up to 60 s for its watches) after
# recording the process's exact command line; start runs that command line again, appending to the component's log,
# and returns once it answers its health check (kube-apiserver: /readyz, which needs etcd up). etcd's data dir is
# not touched (up.sh wipes it; this does not). Ports come from the environment as e2e.sh sets them.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"
kr_init
usage() { kr_die "usage: component.sh stop|start|ensure etcd|kube-apiserver|kube-controller-manager|kube-scheduler"; }
[ $# -eq 2 ] || usage
action=$1 c=$2
case $c in etcd|kube-apiserver|kube-controller-manager|kube-scheduler) ;; *) usage ;; esac
argv=$KR_RUN/$c.argv
T0=$(kr_now_ms)

healthy() {
  case $c in
    etcd) curl -sf "http://127.0.0.1:${ETCD_PORT:?}/health" >/dev/null 2>&1 ;;
    kube-apiserver) [ "$(curl -s --cacert "$KR_PKI/ca.crt" "https://127.0.0.1:${APISERVER_PORT:?}/readyz" 2>/dev/null)" = ok ] ;;
    kube-controller-manager) [ "$(curl -sk "https://127.0.0.1:${KCM_SECURE_PORT:?}/healthz" 2>/dev/null)" = ok ] ;;
    kube-scheduler) kr_sched_healthy ;;
  esac
}

if [ "$action" = ensure ]; then
  kr_pid_of "$c" "$c" >/dev/null && exit 0
  kr_log "$c had exited by itself (see $KR_RUN/$c.log); starting it again"
  action=start
fi

case $action in
  stop)
    if ! pid=$(kr_pid_of "$c" "$c"); then
      # kube-scheduler exits by itself when it finds its cache corrupted (a pod bound elsewhere
      # than it assumed): already stopped, as a static pod's kubelet would find it; started again from
      # the command line kr_start_scheduler recorded
      [ "$c" = kube-scheduler ] && [ -s "$argv" ] || kr_die "$c of $KR_RUN is not running"
      kr_log "kube-scheduler had already exited by itself (see $KR_RUN/$c.log)"
      exit 0
    fi
    tr '\0' '\n' < "/proc/$pid/cmdline" > "$argv.tmp" && mv "$argv.tmp" "$argv"
    kill -9 "$pid" 2>/dev/null || true
    for _ in $(seq 1 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.025; done
    kill -0 "$pid" 2>/dev/null && kr_die "$c (pid $pid) does not go away"
    rm -f "$KR_RUN/$c.pid"
    kr_log "stopped $c (pid $pid) after $(kr_since "$T0")" ;;
  start)
    if pid=$(kr_pid_of "$c" "$c"); then kr_die "$c of $KR_RUN is already running (pid $pid)"; fi
    [ -s "$argv" ] || kr_die "no $argv: stop $c with this script first"
    mapfile -t cmd < "$argv"
    echo "=== $c started again $(date -u +%FT%TZ) by component.sh" >> "$KR_RUN/$c.log"
    nohup "${cmd[@]}" </dev/null >>"$KR_RUN/$c.log" 2>&1 &
    echo $! > "$KR_RUN/$c.pid"
    for _ in $(seq 1 600); do
      healthy && break
      kill -0 "$(cat "$KR_RUN/$c.pid")" 2>/dev/null || { tail -n 20 "$KR_RUN/$c.log" >&2; kr_die "$c died; see $KR_RUN/$c.log"; }
      sleep 0.1
    done
    healthy || kr_die "$c not healthy 60 s after its start; see $KR_RUN/$c.log"
    kr_log "started $c (pid $(cat "$KR_RUN/$c.pid")) in $(kr_since "$T0")" ;;
  *) usage ;;
esac
