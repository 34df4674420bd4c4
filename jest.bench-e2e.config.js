// `npm run bench:e2e`: the scale benchmark (test/e2e/*.bench.ts) on the e2e suite's control plane,
// with the same globalSetup (builds floatip and, on first use, the control plane) and teardown.
import e2e from './jest.e2e.config.js';

/** @type {import('jest').Config} */
export default {
  ...e2e,
  testMatch: ['**/*.bench.ts'],
  testTimeout: 60 * 60_000,
  slowTestThreshold: 3600,
};
