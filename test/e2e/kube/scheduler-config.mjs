// The KubeSchedulerConfiguration a test cluster's kube-scheduler is started with, made from the one
// floatip ships (manifests/scheduler-config.yaml: the ConfigMap key for the scheduler's API version),
// so that what the e2e suite tests is the shipped file. Only what must differ on a test cluster is
// set: the kubeconfig, the extender URL (the suite's floatip, not the Service), no leader election (a
// restarted scheduler must not wait out its predecessor's lease), the client QPS, and for v1beta1
// the healthz/metrics address (its default 0.0.0.0:10251 would collide between clusters). Unless
// SCHED_SHIPPED=1, the extender knobs of lib.sh's kr_sched_settings then override the shipped
// extender's fields, as the suite's scenarios choose them.
//
// Usage: node scheduler-config.mjs v1|v1beta1 OUT
// Env: SCHED_KUBECONFIG, EXTENDER_URL ('' drops the extender), SCHED_QPS, SCHED_BURST,
//   SCHED_HEALTHZ_PORT (v1beta1), SCHED_SHIPPED, and the knobs EXTENDER_{FILTER,PRIORITIZE,BIND,
//   PREEMPT}_VERB, EXTENDER_WEIGHT, EXTENDER_HTTP_TIMEOUT, EXTENDER_IGNORABLE, NODE_CACHE_CAPABLE,
//   MANAGED_RESOURCE, MANAGED_RESOURCE_IGNORED_BY_SCHEDULER, SCHED_PERCENTAGE_OF_NODES_TO_SCORE ('' keeps
//   the shipped value, 0 is the scheduler's adaptive default), EXTENDER_TLS_DIR (the shipped tlsConfig's
//   files from there; without it an http:// URL drops tlsConfig and enableHTTPS).
import { readFileSync, writeFileSync } from 'node:fs';
import { URL } from 'node:url';
import { parse, stringify } from 'yaml';

const SHIPPED = new URL('../../../manifests/scheduler-config.yaml', import.meta.url);
const KEYS = { v1: 'scheduler-config.yaml', v1beta1: 'scheduler-config-v1beta1.yaml' };

const [apiVersion, out] = process.argv.slice(2);
const key = KEYS[apiVersion];
if (!key || !out) {
  process.stderr.write('usage: node scheduler-config.mjs v1|v1beta1 OUT\n');
  process.exit(2);
}
const env = process.env;
const text = parse(readFileSync(SHIPPED, 'utf8'))?.data?.[key];
if (typeof text !== 'string') throw new Error(`${SHIPPED.pathname}: no data.${key}`);
const config = parse(text);
if (config.apiVersion !== `kubescheduler.config.k8s.io/${apiVersion}`) {
  throw new Error(`${SHIPPED.pathname} data.${key}: apiVersion ${config.apiVersion}, not ${apiVersion}`);
}

config.clientConnection = { ...config.clientConnection, kubeconfig: env.SCHED_KUBECONFIG };
if (env.SCHED_QPS) config.clientConnection.qps = Number(env.SCHED_QPS);
if (env.SCHED_BURST) config.clientConnection.burst = Number(env.SCHED_BURST);
config.leaderElection = { leaderElect: false };
if (apiVersion === 'v1beta1') {
  config.healthzBindAddress = `127.0.0.1:${env.SCHED_HEALTHZ_PORT}`;
  config.metricsBindAddress = `127.0.0.1:${env.SCHED_HEALTHZ_PORT}`;
}

if (!env.EXTENDER_URL) delete config.extenders;
else {
  const [shipped] = config.extenders ?? [];
  if (!shipped) throw new Error(`${SHIPPED.pathname} data.${key}: no extender`);
  const extender = { ...shipped, urlPrefix: env.EXTENDER_URL };
  if (env.SCHED_SHIPPED !== '1') {
    if (env.SCHED_PERCENTAGE_OF_NODES_TO_SCORE) {
      config.percentageOfNodesToScore = Number(env.SCHED_PERCENTAGE_OF_NODES_TO_SCORE);
    }
    const verbs = {
      filterVerb: 'FILTER',
      prioritizeVerb: 'PRIORITIZE',
      bindVerb: 'BIND',
      preemptVerb: 'PREEMPT',
    };
    for (const [field, name] of Object.entries(verbs)) {
      const verb = env[`EXTENDER_${name}_VERB`] ?? '';
      if (verb) extender[field] = verb;
      else delete extender[field];
    }
    extender.weight = Number(env.EXTENDER_WEIGHT);
    extender.httpTimeout = env.EXTENDER_HTTP_TIMEOUT;
    extender.ignorable = env.EXTENDER_IGNORABLE === 'true';
    extender.nodeCacheCapable = env.NODE_CACHE_CAPABLE === 'true';
    const ignoredByScheduler = env.MANAGED_RESOURCE_IGNORED_BY_SCHEDULER === 'true';
    const resources = (env.MANAGED_RESOURCE ?? '').split(',').filter(Boolean);
    if (resources.length) extender.managedResources = resources.map((name) => ({ name, ignoredByScheduler }));
    else delete extender.managedResources;
  }
  // the shipped entry is mutual TLS; the suite's floatip serves plain HTTP unless a test gives the
  // certificates (scripts/extender-certs.sh's files): then the shipped tlsConfig points at them
  if (env.EXTENDER_TLS_DIR) {
    extender.tlsConfig = {
      ...extender.tlsConfig,
      certFile: `${env.EXTENDER_TLS_DIR}/scheduler.crt`,
      keyFile: `${env.EXTENDER_TLS_DIR}/scheduler.key`,
      caFile: `${env.EXTENDER_TLS_DIR}/ca.crt`,
    };
  } else if (extender.urlPrefix.startsWith('http:')) {
    delete extender.tlsConfig;
    delete extender.enableHTTPS;
  }
  config.extenders = [extender];
}
writeFileSync(out, stringify(config));
