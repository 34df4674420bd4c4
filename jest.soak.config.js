// `npm run soak`: the churn (test/e2e/churn.ts) at length, on the e2e suite's control plane, with
// the same globalSetup and teardown. Knobs: FLOATIP_SOAK_OPERATIONS, FLOATIP_SOAK_MINUTES.
import e2e from './jest.e2e.config.js';

/** @type {import('jest').Config} */
export default {
  ...e2e,
  testMatch: ['**/*.soak.ts'],
  testTimeout: 6 * 60 * 60_000,
  slowTestThreshold: 6 * 3600,
};
