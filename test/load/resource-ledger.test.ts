/**
 * The ledger of what a run created and deleted: read back from its file after a kill (a line cut
 * short is skipped), identities deleted by either reference, answers that do not prove a creation
 * or a deletion ignored.
 */
import { appendFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { ResourceLedger, ledgerPath } from '../../src/load/resources/resources.js';

const dir = mkdtempSync(join(tmpdir(), 'keysim-ledger-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ok = (data: unknown) => ({ status: 200, body: { meta: { requestId: 'req_1' }, data } });
const TAG = 'keysim-20260102T030405-9';

describe('the resource ledger', () => {
  test('read back after a kill: the events written, a last line cut short skipped; reading on appends to the same file', () => {
    const path = ledgerPath(dir, TAG);
    const ledger = new ResourceLedger(TAG, path);
    ledger.observe('apis.createApi', { name: `${TAG}-x` }, ok({ apiId: 'api_1' }));
    ledger.observe('keys.createKey', { apiId: 'api_1', name: `${TAG}-k1` }, ok({ keyId: 'key_1', key: 'secret' }));
    ledger.observe('keys.createKey', { apiId: 'api_1', name: `${TAG}-k2` }, ok({ keyId: 'key_2', key: 'secret' }));
    ledger.observe('keys.deleteKey', { keyId: 'key_1' }, ok({}));
    appendFileSync(path, '{"event":"created","entry":{"kind":"keys","id":"key_');
    const back = ResourceLedger.read(path, TAG);
    expect(back.open.map((e) => e.id)).toEqual(['api_1', 'key_2']);
    expect(back.counts().keys).toEqual({ created: 2, deleted: 1 });
    // The plaintext key never reaches the file.
    expect(JSON.stringify(back.all)).not.toContain('secret');
    back.observe('keys.deleteKey', { keyId: 'key_2' }, { status: 404, body: {} });
    expect(ResourceLedger.read(path, TAG).open.map((e) => e.id)).toEqual(['api_1']);
    back.discardFile();
    expect(existsSync(path)).toBe(false);
  });

  test('an identity is deleted by its id or its externalId; overrides per namespace; failed calls prove nothing', () => {
    const ledger = new ResourceLedger(TAG);
    ledger.observe('identities.createIdentity', { externalId: `${TAG}-u1` }, ok({ identityId: 'id_1' }));
    ledger.observe('identities.createIdentity', { externalId: `${TAG}-u2` }, ok({ identityId: 'id_2' }));
    ledger.observe('identities.createIdentity', { externalId: `${TAG}-u3` }, { status: 500, body: {} });
    ledger.observe('identities.deleteIdentity', { identity: `${TAG}-u1` }, ok({}));
    ledger.observe('identities.deleteIdentity', { identity: 'id_2' }, { status: 503, body: {} });
    ledger.observe('ratelimit.setOverride', { namespace: 'ns1', identifier: `${TAG}-vip`, limit: 1, duration: 1000 }, ok({ overrideId: 'ovr_1' }));
    ledger.observe('ratelimit.setOverride', { namespace: 'ns1', identifier: `${TAG}-vip`, limit: 2, duration: 1000 }, ok({ overrideId: 'ovr_1' }));
    ledger.observe('ratelimit.setOverride', { namespace: 'ns2', identifier: `${TAG}-vip`, limit: 1, duration: 1000 }, ok({ overrideId: 'ovr_2' }));
    ledger.observe('ratelimit.deleteOverride', { namespace: 'ns1', identifier: `${TAG}-vip` }, { status: 410, body: {} });
    expect(ledger.open).toEqual([
      { kind: 'identities', id: 'id_2', name: `${TAG}-u2` },
      { kind: 'overrides', id: `${TAG}-vip`, namespace: 'ns2' },
    ]);
    expect(ledger.counts()).toMatchObject({ identities: { created: 2, deleted: 1 }, overrides: { created: 2, deleted: 1 } });
  });
});
