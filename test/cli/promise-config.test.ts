/**
 * `consistency` and `promises` in the configuration file, and their layering under the flags:
 * a known set and figures are kept, a flag wins figure by figure, and anything keysim does not
 * know is a usage error naming the file, the key and what is allowed.
 */
import { expect, test } from 'vitest';
import { checkConfig } from '../../src/cli/config.js';
import { UsageError } from '../../src/cli/exit-codes.js';
import { promisesOf } from '../../src/cli/promise-flags.js';

const FILE = 'keysim.config.json';

test('the file sets the promise set; --consistency and --promise win over it, figure by figure', () => {
  const config = checkConfig({ consistency: 'production', promises: { regions: 3, creditTtlMs: 30_000 } }, FILE);
  expect(config.promises).toEqual({ consistency: 'production', promises: { regions: 3, creditTtlMs: 30_000 } });
  const fromFile = promisesOf({}, config.promises);
  expect(fromFile).toMatchObject({ name: 'production', regions: 3, creditTtlMs: 30_000, refillLagMs: 60_000 });
  const flagged = promisesOf({ promise: ['regions=4'] }, config.promises);
  expect(flagged).toMatchObject({ name: 'production', regions: 4, creditTtlMs: 30_000 });
  expect(promisesOf({ consistency: 'exact' }, config.promises)).toMatchObject({ name: 'exact', regions: 3 });
});

test('neither flags nor file: no promise set (exact, judged as before)', () => {
  expect(promisesOf({})).toBeUndefined();
  expect(checkConfig({}, FILE).promises).toBeUndefined();
});

test('an unknown consistency, figure or value in the file is a usage error naming the file and the key', () => {
  expect(() => checkConfig({ consistency: 'eventual' }, FILE)).toThrow(
    new UsageError(`${FILE}: "consistency" must be "exact" or "production", got "eventual".`),
  );
  expect(() => checkConfig({ promises: { nope: 1 } }, FILE)).toThrow(/keysim\.config\.json: "promises" must be an object whose keys are regions, creditTtlMs/);
  expect(() => checkConfig({ promises: { regions: 'two' } }, FILE)).toThrow(/"promises\.regions" must be a number/);
  expect(() => checkConfig({ promises: { regions: 0 } }, FILE)).toThrow(/"promises": regions=0: regions must be a whole number ≥ 1/);
  expect(() => checkConfig({ promises: { rateLimitUnderAdmission: 1.5 } }, FILE)).toThrow(/rateLimitUnderAdmission must be a share of the limit in \(0, 1\]/);
});

test('a flag keysim does not know is a usage error with the allowed values', () => {
  expect(() => promisesOf({ consistency: 'bogus' })).toThrow(new UsageError('--consistency bogus: unknown consistency model; use one of exact, production.'));
  expect(() => promisesOf({ promise: 'creditTtlMs' })).toThrow(/--promise creditTtlMs: the value of creditTtlMs must be a number, as creditTtlMs=<number>/);
  expect(() => promisesOf({ promise: ['regions=-1'] })).toThrow(/--promise regions=-1: regions must be a whole number ≥ 1/);
});
