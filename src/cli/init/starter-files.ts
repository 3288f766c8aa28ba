/**
 * What `keysim init` writes into a project: a starter scenario and a vitest test on the
 * simulator. Both pass as written (the outside-project test runs them from a packed keysim).
 */

/** A small scenario: a key with credits, verified under load, with per-answer and end-of-run checks. */
export const FIRST_CHECK = `/**
 * A first keysim scenario: one key with 100 usage credits, verified under load.
 * Run it: npx keysim run ./checks/first-check.ts   (list it: npx keysim list ./checks)
 */
import { checkResult, codeCount, createKey, createTaggedApi, defineScenario, okData, withoutAnswer } from 'keysim';

const CREDITS = 100;

export default defineScenario({
  name: 'first-check',
  description: 'A key with 100 credits: never more VALID answers than credits',
  defaults: { rate: 50, durationMs: 3_000, warmupMs: 0 },

  // Fixtures through the public API, named after the run (ctx.tag) and deleted at its end.
  async setup(ctx) {
    const apiId = await createTaggedApi(ctx, 'first-check');
    const { key } = await createKey(ctx, { apiId, credits: { remaining: CREDITS } });
    return { key };
  },

  // The load: every request verifies the key; each answer is checked as it arrives.
  mix: [
    {
      weight: 1,
      build: (fixtures) => ({ op: 'keys.verifyKey', body: { key: fixtures.key } }),
      check: (response) => {
        const data = okData(response);
        if (typeof data === 'string') return data;
        return data.code === 'VALID' || data.code === 'USAGE_EXCEEDED' ? undefined : \`unexpected code \${String(data.code)}\`;
      },
    },
  ],

  // After the load: the figures of the whole run.
  async finish(_ctx, _fixtures, results) {
    const verify = results.operation('keys.verifyKey');
    const valid = codeCount(verify, 'VALID');
    const exceeded = codeCount(verify, 'USAGE_EXCEEDED');
    const answered = (verify?.requests ?? 0) - withoutAnswer(verify);
    return [
      checkResult('no more VALID than credits', valid <= CREDITS, \`\${valid} VALID for \${CREDITS} credits\`),
      checkResult('every answer VALID or USAGE_EXCEEDED', valid + exceeded === answered, \`\${valid} + \${exceeded} of \${answered} answers\`),
    ];
  },

  thresholds: ['errors == 0', 'checks == 0'],
});
`;

/** A vitest test on the simulator in-process: a monthly refill at a month end, on a clock the test moves. */
export const FIRST_TEST = `/**
 * keysim's simulator in a vitest test: a real HTTP server on 127.0.0.1 whose clock the test moves.
 * Run it: npx vitest run test/keysim.test.ts
 */
import { createSimulator, type Simulator } from 'keysim';
import { afterAll, beforeAll, expect, test } from 'vitest';

let sim: Simulator;

/** POST /v2/<operation> with the simulator's root key; the answer's \`data\`. */
async function call(operation: string, body: unknown): Promise<Record<string, any>> {
  const response = await fetch(\`\${sim.url}/v2/\${operation}\`, {
    method: 'POST',
    headers: { authorization: \`Bearer \${sim.rootKey}\`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { data: Record<string, any> }).data;
}

beforeAll(async () => {
  // One millisecond before 30 April: the clock stands still until the test moves it.
  sim = await createSimulator({ startMs: Date.parse('2027-04-29T23:59:59.999Z') });
});
afterAll(() => sim.close());

test('a monthly refill on day 31 happens on the last day of a 30-day month', async () => {
  const { apiId } = await call('apis.createApi', { name: 'billing' });
  const { key } = await call('keys.createKey', {
    apiId,
    credits: { remaining: 1, refill: { interval: 'monthly', amount: 10, refillDay: 31 } },
  });
  expect((await call('keys.verifyKey', { key })).code).toBe('VALID');
  expect((await call('keys.verifyKey', { key })).code).toBe('USAGE_EXCEEDED');

  sim.clock.advance(1); // → 2027-04-30T00:00:00.000Z: April has no 31st, so the refill comes on the 30th

  const after = await call('keys.verifyKey', { key });
  expect(after.code).toBe('VALID');
  expect(after.credits).toBe(9);
});
`;
