/** The one edit distance behind every "did you mean …?" (CLI flags and names, scenarios' operation names). */
import { expect, test } from 'vitest';
import { editDistance } from '../../src/load/scenario/edit-distance.js';
import { nearestOperation } from '../../src/load/scenario/operation-names.js';

test('a swap of two neighbours is one edit, as a typist sees it; insertions, deletions and substitutions one each', () => {
  expect(editDistance('rnu', 'run')).toBe(1);
  expect(editDistance('keys.verifyKye', 'keys.verifyKey')).toBe(1);
  expect(editDistance('run', 'runs')).toBe(1);
  expect(editDistance('runs', 'run')).toBe(1);
  expect(editDistance('run', 'ran')).toBe(1);
  expect(editDistance('', 'abc')).toBe(3);
  expect(editDistance('same', 'same')).toBe(0);
  expect(editDistance('kitten', 'sitting')).toBe(3);
});

test('the operation names and the CLI use the same distance: a misspelt operation finds its nearest', () => {
  expect(nearestOperation('keys.verifyKye')).toBe('keys.verifyKey');
  expect(nearestOperation('ratelimit.limt')).toBe('ratelimit.limit');
});
