// The validating admission webhook (README "Admission webhook"): bad configuration refused when it
// is written, in the words floatip would otherwise put in an Event afterwards.
export {
  type AdmissionRequest,
  type Verdict,
  decodeAdmissionReview,
  admissionResponse,
} from './admission-review.js';
export { ALLOW_ORPHANS_ANNOTATION, type JudgeDeps, judge } from './judges.js';
export { MAX_REVIEW_BYTES, webhookApp } from './http.js';
