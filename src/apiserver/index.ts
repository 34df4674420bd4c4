// The embedded Kubernetes-API-compatible server: a development aid and test backend, never a production store.
export { startApiServer, type ApiServerOptions, type EmbeddedApiServer } from './server.js';
export type { FaultController, FaultMatch, FaultRule, InjectedFault } from './faults.js';
export type { KubeObject, ObjectMeta, Verb } from './types.js';
export * from './seed.js';
