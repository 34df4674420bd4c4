#!/usr/bin/env bash
# `npm run test:e2e`: runs its command (jest on the e2e suite) once per Kubernetes version, with FLOATIP_E2E_KUBE set
# for each run (kube/e2e.sh starts that version's control plane). FLOATIP_E2E_KUBE picks the versions: default
# "v1.20 current"; `FLOATIP_E2E_KUBE=current npm run test:e2e -- test/e2e/x.test.ts` is a quick run on one.
# Every version runs even when one fails; the exit code is non-zero if any did. Each run's time is printed.
# Unless FLOATIP_E2E_RUN_DIR is set, v1.20 runs in run-e2e and current in run-e2e-current, so that a
# failure's logs on the first version are still there after the second.
set -uo pipefail
[ $# -gt 0 ] || { echo "usage: $0 COMMAND [ARGS...]" >&2; exit 2; }
read -r -a versions <<< "${FLOATIP_E2E_KUBE:-v1.20 current}"
[ ${#versions[@]} -gt 0 ] || { echo "versions.sh: FLOATIP_E2E_KUBE names no version" >&2; exit 2; }
failed=0 summary=()
for v in "${versions[@]}"; do
  case $v in v1.20|current) ;; *) echo "versions.sh: FLOATIP_E2E_KUBE: '$v' is not v1.20 or current" >&2; exit 2 ;; esac
  echo "=== e2e on Kubernetes $v" >&2
  t0=$(date +%s)
  # each version its own run directory (unless one is set), so the logs of the first survive the second
  run_dir=${FLOATIP_E2E_RUN_DIR:-${FLOATIP_KUBE_HOME:-$HOME/.cache/floatip-kube}/run-e2e$([ "$v" = current ] && echo -current)}
  FLOATIP_E2E_KUBE=$v FLOATIP_E2E_RUN_DIR=$run_dir "$@"
  rc=$?
  [ $rc -eq 0 ] || failed=1
  summary+=("e2e on Kubernetes $v: $([ $rc -eq 0 ] && echo ok || echo "FAILED (exit $rc)") in $(( $(date +%s) - t0 )) s")
done
printf '%s\n' "${summary[@]}" >&2
exit $failed
