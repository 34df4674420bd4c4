// `npm run test:e2e`: the suite against a real Kubernetes v1.20.2 control plane (test/e2e/README.md).
// One cluster, one scheduler and one extender port are shared, so files run serially (--runInBand).
import base from './jest.config.js';

/** @type {import('jest').Config} */
export default {
  ...base,
  roots: ['<rootDir>/test/e2e'],
  testPathIgnorePatterns: ['/node_modules/'],
  globalSetup: '<rootDir>/test/e2e/global-setup.ts',
  globalTeardown: '<rootDir>/test/e2e/global-teardown.ts',
  maxWorkers: 1,
  testTimeout: 180_000,
  slowTestThreshold: 60,
};
