// The REST API (docs/galaxy.md#rest-api): the express app and what others reuse from it.
export { type RestDeps, restApp } from './app.js';
export { ApiError } from './envelope.js';
export { type Identity, actorOf } from './identity.js';
export { OPENAPI_FILE, documentedOperations, openApiDocument } from './openapi.js';
export { type ReleaseItem, type ReleaseReport, releaseIPs, requestedKey } from './release.js';
export { type Route, apiRoutes, expressPath } from './routes.js';
export {
  type AuditSink,
  RELEASED_EVENT_REASON,
  type ReleaseAuditRecord,
  type ReleaseAttribution,
  type ReleaseCause,
  auditRelease,
  releaseAudited,
} from '../store/release-audit.js';
