/**
 * What a segment of a shared set-up hands to the teardown after the last segment
 * (resource-handover.ts): its ledger's open entries, ids only, read back whole; a file of another
 * run's tag or of another shape is refused, so that a cleanup never deletes another run's keys.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { RESOURCES_FILE, ResourcesFileError, readOpenResources, writeOpenResources } from '../../src/load/resources/resource-handover.js';
import { ResourceLedger } from '../../src/load/resources/resources.js';

const dir = mkdtempSync(join(tmpdir(), 'keysim-handover-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ok = (data: unknown) => ({ status: 200, body: { meta: { requestId: 'req_1' }, data } });
const TAG = 'keysim-20260102T030405-9';

describe('resources.json', () => {
  test('the open entries, ids only (no name, no secret), read back from the file or its folder', () => {
    const ledger = new ResourceLedger(TAG);
    ledger.observe('keys.createKey', { apiId: 'api_1', name: 'named' }, ok({ keyId: 'key_1', key: 'secret_plaintext' }));
    ledger.observe('keys.createKey', { apiId: 'api_1' }, ok({ keyId: 'key_2', key: 'secret_plaintext' }));
    ledger.observe('keys.deleteKey', { keyId: 'key_1' }, ok({}));
    ledger.observe('ratelimit.setOverride', { namespace: 'ns', identifier: `${TAG}-u1`, limit: 1, duration: 1000 }, ok({ overrideId: 'rlor_1' }));
    const folder = join(dir, 'segment-0of2');
    mkdirSync(folder);
    writeOpenResources(join(folder, RESOURCES_FILE), ledger);
    const text = readFileSync(join(folder, RESOURCES_FILE), 'utf8');
    expect(text).not.toContain('secret');
    expect(text).not.toContain('named');
    const back = readOpenResources(folder, TAG);
    expect(back.tag).toBe(TAG);
    expect(back.open).toEqual([
      { kind: 'keys', id: 'key_2' },
      { kind: 'overrides', id: `${TAG}-u1`, namespace: 'ns' },
    ]);
    expect(readOpenResources(join(folder, RESOURCES_FILE)).open).toHaveLength(2);
  });

  test("another run's file, another shape, a missing file: refused with the reason", () => {
    const folder = join(dir, 'other');
    mkdirSync(folder);
    writeOpenResources(join(folder, RESOURCES_FILE), new ResourceLedger('keysim-20990101T000000-1'));
    expect(() => readOpenResources(folder, TAG)).toThrow(/lists what run keysim-20990101T000000-1 created, not run keysim-20260102T030405-9/);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ schema: 'keysim-resources', version: 1, tag: TAG, open: [{ kind: 'secrets', id: 'x' }] }));
    expect(() => readOpenResources(bad, TAG)).toThrow(ResourcesFileError);
    writeFileSync(bad, JSON.stringify({ schema: 'keysim-report', version: 1 }));
    expect(() => readOpenResources(bad, TAG)).toThrow(/is not a segment's resources\.json/);
    expect(() => readOpenResources(join(dir, 'missing'), TAG)).toThrow(/cannot read/);
  });
});
