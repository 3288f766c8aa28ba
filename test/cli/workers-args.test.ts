/** `--workers`: each child gets the parent's command line without the flags the parent sets per child or keeps for itself. */
import { expect, test } from 'vitest';
import { childArguments } from '../../src/cli/workers.js';

test('childArguments drops --workers, --out, --target, --fault and the parent-only outputs, in both flag forms, and keeps the rest', () => {
  const argv = [
    'run',
    'mixed',
    '--workers',
    '4',
    '--rate',
    '400',
    '--out=reports',
    '--target',
    'sim',
    '--fault',
    'latencyMs=5',
    '--junit',
    'j.xml',
    '--history',
    '--threshold',
    'errors == 0',
  ];
  expect(childArguments(argv)).toEqual(['run', 'mixed', '--rate', '400', '--history', '--threshold', 'errors == 0']);
});

test('childArguments drops the switches the parent sets for every child (--keep, --oracle, --no-oracle) without eating the argument after them', () => {
  const argv = ['run', '--keep', 'mixed', '--no-oracle', '--history', '--fixtures', 'f.json', '--oracle', '--rate', '10'];
  expect(childArguments(argv)).toEqual(['run', 'mixed', '--history', '--rate', '10']);
});
