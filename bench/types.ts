/** One measured number. `npm run bench` prints these, one line each, with the machine they ran on. */
export interface BenchResult {
  /** What was measured, e.g. "allocate+release, /16 at 99 % used". */
  name: string;
  value: number;
  /** e.g. "ops/s", "ms", "bytes/allocation". */
  unit: string;
  /** The target from the issue, when there is one, e.g. ">= 1,000,000 ops/s". */
  target?: string;
  /** Whether the measured value meets the target (omitted when there is none). */
  met?: boolean;
}
