/** 429 through the official SDK: the simulator's own API rate limit (/_sim/apiRateLimit.set). */
import { TooManyRequestsErrorResponse } from '@unkey/api/models/errors';
import { describe, expect, it } from 'vitest';
import { admin, rejectsWith, sdk, useSimulator } from '../helpers/sdk.js';

describe('@unkey/api against the API rate limit', () => {
  const sim = useSimulator({ startMs: Date.UTC(2027, 5, 1) });

  it('answers 429 as TooManyRequestsErrorResponse beyond the limit, per root key, until the window passes', async () => {
    const { unkey, sent } = sdk(sim());
    const apiId = (await unkey.apis.createApi({ name: 'a' })).data.apiId;
    expect(await admin(sim(), 'apiRateLimit.set', { limit: 2, durationMs: 1000 })).toEqual({ limit: 2, durationMs: 1000 });

    await unkey.keys.createKey({ apiId });
    await unkey.identities.listIdentities({});
    const error = await rejectsWith(unkey.keys.createKey({ apiId }), TooManyRequestsErrorResponse);
    expect(error.data$.error.status).toBe(429);
    expect(error.data$.error.type).toMatch(/\/service\/ratelimit\/too_many_requests$/);
    expect(sent.filter((line) => line.endsWith('keys.createKey'))).toHaveLength(2);

    // Another root key has its own budget; the admin surface is never limited.
    const { rootKey } = await admin<{ rootKey: string }>(sim(), 'rootKeys.create', { permissions: ['*'] });
    expect((await sdk(sim(), rootKey).unkey.apis.createApi({ name: 'b' })).data.apiId).toMatch(/^api_/);

    // The window is on the service clock: moving it past the window lets requests through again.
    await admin(sim(), 'clock.advance', { byMs: 2000 });
    expect((await unkey.keys.createKey({ apiId })).data.keyId).toMatch(/^key_/);
  });

  it('limit null removes the limit, and reset removes it too', async () => {
    const { unkey } = sdk(sim());
    await admin(sim(), 'apiRateLimit.set', { limit: 1 });
    await unkey.apis.createApi({ name: 'a' });
    await rejectsWith(unkey.apis.createApi({ name: 'b' }), TooManyRequestsErrorResponse);
    expect(await admin(sim(), 'apiRateLimit.set', { limit: null })).toEqual({ limit: null, durationMs: null });
    await unkey.apis.createApi({ name: 'c' });
    await admin(sim(), 'apiRateLimit.set', { limit: 1 });
    sim().reset();
    await unkey.apis.createApi({ name: 'd' });
    expect((await unkey.apis.createApi({ name: 'e' })).data.apiId).toMatch(/^api_/);
  });
});
