/**
 * Write coalescing changes when bytes reach the kernel, never which bytes (write-coalescing.ts):
 * two simulators built alike — same seed, clock and fixture, one with `coalesceWrites: false` —
 * fresh for every case, are sent the same random pipelined batches (valid and unknown-key verifications, createKey,
 * 404, 405, invalid JSON, a body over maxBodyBytes, health, the OpenAPI document (an answer too
 * large to keep), missing authentication; some batches end with a refused operator call or a
 * request node:http cannot parse, after which the server closes), in one write or several. The
 * answer streams must be byte for byte the same once the Date headers and the per-server request
 * id prefix are masked. Seeds are printed on failure (test/helpers/property.ts).
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { type Simulator, createSimulator } from '../../src/http/index.js';
import { assertProperty } from '../helpers/property.js';
import { exchange, rawPost, rawRequest } from '../helpers/raw-http.js';

const START_MS = Date.parse('2028-06-01T09:30:00.000Z');
const MAX_BODY = 1024;

interface Side {
  sim: Simulator;
  apiId: string;
  key: string;
}

/** A simulator with one API and one key; two built alike hold the same ids and keys (same seed). */
async function side(coalesceWrites: boolean): Promise<Side> {
  const sim = await createSimulator({ startMs: START_MS, seed: 31, checkHost: false, maxBodyBytes: MAX_BODY, coalesceWrites });
  const api = sim.engine.apis.createApi(sim.rootKey, { name: 'differential' });
  if (!api.ok) throw new Error(api.error.detail);
  const created = sim.engine.keys.createKey(sim.rootKey, { apiId: api.value.apiId, credits: { remaining: 1000 } });
  if (!created.ok) throw new Error(created.error.detail);
  return { sim, apiId: api.value.apiId, key: created.value.key };
}

type Kind = 'verify' | 'unknownKey' | 'createKey' | 'notFound' | 'wrongMethod' | 'badJson' | 'tooLarge' | 'health' | 'openApi' | 'noAuth';
type Last = 'none' | 'refusedOperator' | 'unparsable';

/** The request of `kind` against `s` (the same bytes for both simulators: same seed, same ids). */
function requestOf(kind: Kind, s: Side, n: number): Buffer {
  const root = s.sim.rootKey;
  switch (kind) {
    case 'verify':
      return rawPost('/v2/keys.verifyKey', { key: s.key }, root);
    case 'unknownKey':
      return rawPost('/v2/keys.verifyKey', { key: `sk_unknown_${n}` }, root);
    case 'createKey':
      return rawPost('/v2/keys.createKey', { apiId: s.apiId, name: `k${n}` }, root);
    case 'notFound':
      return rawPost('/v2/keys.nothingHere', {}, root);
    case 'wrongMethod':
      return rawRequest('GET', '/v2/keys.verifyKey', { authorization: `Bearer ${root}` });
    case 'badJson':
      return rawPost('/v2/keys.verifyKey', '{"key": ', root);
    case 'tooLarge':
      return rawPost('/v2/keys.verifyKey', JSON.stringify({ key: s.key, padding: 'p'.repeat(MAX_BODY + n) }), root);
    case 'health':
      return rawRequest('GET', '/_sim/health');
    case 'openApi':
      return rawRequest('GET', '/openapi.json');
    case 'noAuth':
      return rawPost('/v2/keys.verifyKey', { key: s.key }, null);
  }
}

function lastOf(last: Last, s: Side): Buffer | undefined {
  if (last === 'refusedOperator') return rawPost('/_sim/clock.advance', { ms: 1 }, `${s.sim.rootKey}x`);
  if (last === 'unparsable') return Buffer.from('NOT HTTP AT ALL\r\n\r\n', 'latin1');
  return undefined;
}

/** The batch's bytes cut at the given fractions of its length. */
function piecesOf(bytes: Buffer, cuts: number[]): Buffer[] {
  const at = [...new Set(cuts.map((c) => Math.floor(c * bytes.length)))].filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let from = 0;
  for (const cut of [...at, bytes.length]) {
    pieces.push(bytes.subarray(from, cut));
    from = cut;
  }
  return pieces;
}

/** What legitimately differs between two servers: the Date header and the request id's random prefix. */
function masked(bytes: Buffer): string {
  return bytes
    .toString('latin1')
    .replace(/^date: [^\r]*/gim, 'date: -')
    .replace(/req_[0-9a-f]{16}/g, 'req_-');
}

const kinds = fc.constantFrom<Kind>('verify', 'unknownKey', 'createKey', 'notFound', 'wrongMethod', 'badJson', 'tooLarge', 'health', 'openApi', 'noAuth');

describe('coalesced and plain answers are the same bytes', () => {
  test('random pipelined batches, in one write or several', async () => {
    let n = 0;
    await assertProperty(
      fc.asyncProperty(
        fc.array(kinds, { minLength: 1, maxLength: 24 }),
        fc.constantFrom<Last>('none', 'none', 'refusedOperator', 'unparsable'),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 4 }),
        fc.boolean(),
        async (batch, last, cuts, spread) => {
          const streams: string[] = [];
          // Fresh simulators for every case: a case (and its shrinking) starts from one state.
          for (const coalesceWrites of [true, false]) {
            n++;
            const s = await side(coalesceWrites);
            const requests = batch.map((kind, i) => requestOf(kind, s, i));
            const final = lastOf(last, s);
            // The last request may be cut too: a refused call's rest arriving after its answer
            // finds the connection lingering, not reset (body.ts, lingeringClose).
            if (final !== undefined) requests.push(final);
            const pieces = piecesOf(Buffer.concat(requests), cuts);
            const out = await exchange(s.sim.url, pieces, requests.length, { spread });
            // Every request answered, the last one included (an unparsable one's 400 after the
            // answers owed before it: client-error.ts), and nothing else.
            expect(
              out.answers.length,
              `coalesceWrites ${String(coalesceWrites)}, ${out.error?.code ?? 'no error'}, ${out.bytes.length} bytes, statuses ${out.answers.map((a) => a.status).join(' ')}`,
            ).toBe(requests.length);
            expect(out.answers.reduce((sum, a) => sum + a.raw.length, 0)).toBe(out.bytes.length);
            if (last !== 'none') expect(out.answers.at(-1)?.headers.connection).toBe('close');
            streams.push(masked(out.bytes));
            await s.sim.close();
          }
          expect(streams[0]).toBe(streams[1]);
        },
      ),
      { numRuns: 40 },
    );
    expect(n).toBeGreaterThan(0);
  });
});
