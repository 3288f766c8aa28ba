import { defineScenario } from './keysim.js';

// 2096 is a leap year, so a monthly refill on day 31 falls on 29 February.
const FEB_28 = Date.parse('2096-02-28T12:00:00Z');
const FEB_29 = Date.parse('2096-02-29T00:00:00Z');

/** Verifies the key; every answer must carry the expected code. */
function verify(expected: 'VALID' | 'USAGE_EXCEEDED') {
  return {
    weight: 1,
    build: (f: { key: string }) => ({ op: 'keys.verifyKey' as const, body: { key: f.key } }),
    check: (res: { body: unknown }) => {
      const code = (res.body as { data?: { code?: string } }).data?.code;
      return code === expected ? undefined : `expected ${expected}, got ${code}`;
    },
  };
}

export default defineScenario({
  name: 'leap-refill',
  description: 'refillDay 31 refills on 29 February in a leap year',
  requires: ['clock'], // moves the service clock: runs on the simulator only
  defaults: { rate: 50 },
  async setup(ctx) {
    if (ctx.admin === undefined) throw new Error('leap-refill needs the simulator');
    // Move the clock first: a key is first refilled at the next boundary after its creation.
    await ctx.admin.clockSet(FEB_28);
    const { apiId } = await ctx.api.data<{ apiId: string }>('apis.createApi', { name: `${ctx.tag}-billing` });
    const { keyId, key } = await ctx.api.data<{ keyId: string; key: string }>('keys.createKey', {
      apiId,
      credits: { remaining: 0, refill: { interval: 'monthly', amount: 1_000_000, refillDay: 31 } },
    });
    ctx.onCleanup(async () => void (await ctx.api.call('keys.deleteKey', { keyId })));
    return { key };
  },
  mix: [verify('VALID')],
  phases: () => [
    { name: 'on 28 February: no credits', durationMs: 1_000, mix: [verify('USAGE_EXCEEDED')] },
    {
      name: 'on 29 February: refilled',
      durationMs: 1_000,
      before: async (ctx) => void (await ctx.admin?.clockSet(FEB_29)),
      mix: [verify('VALID')],
    },
  ],
  thresholds: ['errors == 0', 'checks == 0'],
});
