#!/usr/bin/env bash
# The e2e suite's cluster: ensure.sh, up.sh, down.sh and scheduler.sh with the suite's settings, so jest's
# globalSetup, the tests and a developer at a shell all get the same cluster.
#   - its own run directory and non-default ports, so a cluster from the default run directory or on the default
#     ports (a developer's own) is neither in the way nor stopped by `down`;
#   - kube-controller-manager on (Deployments, ReplicaSets, garbage collection, namespace deletion), with the
#     ServiceAccount admission plugin back on as in a real cluster;
#   - client QPS raised for scheduler and controller-manager, so scale runs do not measure client throttling;
#   - the scheduler's extender at E2E_EXTENDER_URL with filter, prioritize, bind and preempt, for pods that request
#     tke.cloud.tencent.com/eni-ip. Any up.sh knob given in the environment wins (EXTENDER_URL= for none).
#   - FLOATIP_E2E_KUBE picks the control plane: v1.20 (default; v1.20.2, ensure.sh) or current (the release
#     current/go.mod pins, build-current.sh). `npm run test:e2e` runs the suite once on each (kube/versions.sh).
# Usage: e2e.sh ensure|up|down|scheduler|env|stop <component>|start <component>
#   up     like up.sh, prints `export KUBECONFIG=...` (so `eval "$(e2e.sh up)"` works)
#   stop|start|ensure <component>  component.sh: one of etcd, kube-apiserver, kube-controller-manager, kube-scheduler
#   env    prints the running cluster's cluster.env as exports (e.g. `eval "$(e2e.sh env)"; $KUBECTL get nodes`)
# Overrides: FLOATIP_E2E_RUN_DIR, FLOATIP_E2E_{ETCD,ETCD_PEER,APISERVER,SCHED_SECURE,SCHED_HEALTHZ,KCM_SECURE,EXTENDER}_PORT,
#   FLOATIP_E2E_{SCHED,KCM}_{QPS,BURST}, and FLOATIP_KUBE_HOME for the build cache.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
case ${FLOATIP_E2E_KUBE:-v1.20} in
  v1.20|current) export FLOATIP_KUBE_VERSION=${FLOATIP_E2E_KUBE:-v1.20} ;;
  *) echo "e2e.sh: FLOATIP_E2E_KUBE must be v1.20 or current, not '$FLOATIP_E2E_KUBE'" >&2; exit 2 ;;
esac
KH=${FLOATIP_KUBE_HOME:-${HOME:?neither FLOATIP_KUBE_HOME nor HOME is set}/.cache/floatip-kube}
export FLOATIP_KUBE_RUN=${FLOATIP_E2E_RUN_DIR:-$KH/run-e2e}
export ETCD_PORT=${FLOATIP_E2E_ETCD_PORT:-23790}
export ETCD_PEER_PORT=${FLOATIP_E2E_ETCD_PEER_PORT:-23791}
export APISERVER_PORT=${FLOATIP_E2E_APISERVER_PORT:-26443}
export SCHED_SECURE_PORT=${FLOATIP_E2E_SCHED_SECURE_PORT:-26259}
export SCHED_HEALTHZ_PORT=${FLOATIP_E2E_SCHED_HEALTHZ_PORT:-26251}
export KCM_SECURE_PORT=${FLOATIP_E2E_KCM_SECURE_PORT:-26257}
export K8S_CONTROLLER_MANAGER=1
export DISABLE_ADMISSION=TaintNodesByCondition
export SCHED_QPS=${FLOATIP_E2E_SCHED_QPS:-500} SCHED_BURST=${FLOATIP_E2E_SCHED_BURST:-1000}
export KCM_QPS=${FLOATIP_E2E_KCM_QPS:-500} KCM_BURST=${FLOATIP_E2E_KCM_BURST:-1000}
E2E_EXTENDER_URL=http://127.0.0.1:${FLOATIP_E2E_EXTENDER_PORT:-26040}/v1
export EXTENDER_URL=${EXTENDER_URL-$E2E_EXTENDER_URL}
export EXTENDER_PREEMPT_VERB=${EXTENDER_PREEMPT_VERB-preempt}

# the suite's own entry in cluster.env/json: where tests start their extender, even when the scheduler has none
record() {
  # shellcheck source=lib.sh
  . "$HERE/lib.sh"
  kr_init
  kr_cluster_files E2E_EXTENDER_URL="$E2E_EXTENDER_URL" FLOATIP_KUBE_RUN="$FLOATIP_KUBE_RUN"
}

case ${1:-} in
  ensure)
    # `ensure <component>` is component.sh's (start it if it exited by itself); bare `ensure` builds
    [ $# -gt 1 ] && exec "$HERE/component.sh" "$@"
    if [ "$FLOATIP_KUBE_VERSION" = current ]; then exec "$HERE/build-current.sh"; else exec "$HERE/ensure.sh"; fi ;;
  down) exec "$HERE/down.sh" ;;
  up) "$HERE/up.sh"; record ;;   # stdout: up.sh's `export KUBECONFIG=...`
  scheduler) "$HERE/scheduler.sh"; record ;;
  stop|start) exec "$HERE/component.sh" "$@" ;;
  env)
    if [ -f "$FLOATIP_KUBE_RUN/cluster.env" ]; then sed 's/^/export /' "$FLOATIP_KUBE_RUN/cluster.env"
    else echo "e2e.sh: no cluster is up in $FLOATIP_KUBE_RUN" >&2; exit 1; fi ;;
  *) echo "usage: $0 ensure|up|down|scheduler|env|stop <component>|start <component>" >&2; exit 2 ;;
esac
