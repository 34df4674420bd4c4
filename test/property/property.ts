// Running a property over live servers: a fixed seed (FLOATIP_PROPERTY_SEED to change it), failures
// that say which request, what came back and what was wrong, with the request as a curl command.
// FLOATIP_PROPERTY_REPORT=<file> runs every case to the end instead, appending each violation to the
// file as a JSON line: the list of everything a branch gets wrong, rather than the first thing.
// FLOATIP_PROPERTY_SCALE=<n> runs n times as many cases.
import { appendFileSync } from 'node:fs';
import fc from 'fast-check';
import { type Answer, type Req, send } from './http.js';

export const SEED = Number(process.env.FLOATIP_PROPERTY_SEED ?? 20261113);
const REPORT = process.env.FLOATIP_PROPERTY_REPORT;
const SCALE = Number(process.env.FLOATIP_PROPERTY_SCALE ?? 1);

const failed: string[] = [];

/** The properties that failed in this file, whose remaining cases were not sent. */
export const failedProperties = (): readonly string[] => failed;

/** A test's time limit, for its share of the cases. */
export const timeLimit = (ms: number) => ms * Math.max(1, SCALE);

export interface Violation {
  /** The request at fault, or the batch among which one was (a state change seen after it). */
  readonly requests: readonly Req[];
  readonly answer?: Answer;
  readonly problem: string;
}

const excerpt = (text: string) =>
  text.length > 600 ? `${text.slice(0, 600)}... (${text.length} chars)` : text;

function describe(v: Violation): string {
  const answered = v.answer ? `\n  answered ${v.answer.status}: ${excerpt(v.answer.text)}` : '';
  return `${v.problem}\n  ${v.requests.map((r) => r.curl()).join('\n  ')}${answered}`;
}

class PropertyViolation extends Error {
  constructor(violations: readonly Violation[]) {
    super(violations.map(describe).join('\n'));
  }
}

/** Sends `r`, turning "no answer" (a crash, a hang) into a violation. */
export async function answer(base: string, r: Req): Promise<Answer | Violation> {
  try {
    return await send(base, r);
  } catch (err) {
    return { requests: [r], problem: `no answer: ${(err as Error).message}` };
  }
}

export const isViolation = (a: Answer | Violation): a is Violation => 'problem' in a;

/**
 * Checks that `check` finds nothing wrong for `numRuns` generated inputs. On a failure fast-check
 * shrinks the input, and the error names the seed, the shrunk requests as curl commands, the
 * answers and the problems.
 */
export async function holds<T>(
  name: string,
  input: fc.Arbitrary<T>,
  numRuns: number,
  check: (value: T) => Promise<Violation[]>,
): Promise<void> {
  numRuns = Math.round(numRuns * SCALE);
  if (REPORT) {
    await fc.assert(
      fc.asyncProperty(input, async (value) => {
        for (const v of await check(value)) {
          const line = {
            property: name,
            endpoint: v.requests.map((r) => r.endpoint).join(' | '),
            problem: v.problem,
            status: v.answer?.status,
            body: v.answer ? excerpt(v.answer.text) : undefined,
            curl: v.requests.map((r) => r.curl()),
          };
          appendFileSync(REPORT, `${JSON.stringify(line)}\n`);
        }
      }),
      { seed: SEED, numRuns },
    );
    return;
  }
  try {
    await fc.assert(
      fc.asyncProperty(input, async (value) => {
        const violations = await check(value);
        if (violations.length > 0) throw new PropertyViolation(violations);
      }),
      {
        seed: SEED,
        numRuns,
        includeErrorInReport: true,
        interruptAfterTimeLimit: timeLimit(120_000),
        markInterruptAsFailure: true,
      },
    );
  } catch (err) {
    failed.push(name);
    throw new Error(
      `${name}: failed with FLOATIP_PROPERTY_SEED=${SEED} (set it to replay; the curl commands replay one request against \`floatip serve\`)\n${(err as Error).message}`,
    );
  }
}
