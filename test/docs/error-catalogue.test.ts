/**
 * docs/errors.md#catalogue is the contract's word on every error: the contract checks read it
 * (test/helpers/error-catalogue.ts). Here the document and the source's table (src/http/problems.ts)
 * are held to each other, so neither can change alone.
 */
import { expect, test } from 'vitest';
import { PROBLEMS } from '../../src/http/problems.js';
import { SPEC_CATALOGUE, catalogueOf } from '../helpers/error-catalogue.js';

test('docs/errors.md lists every error code of the engine, with the status and title the HTTP layer answers', () => {
  expect(SPEC_CATALOGUE).toEqual(PROBLEMS);
});

test('a catalogue row that does not read as code | status | title is an error naming the document and line', () => {
  const doc = [
    '# Errors',
    '',
    '## Catalogue',
    '',
    '| identifier | status | title | when |',
    '| --- | --- | --- | --- |',
    '| `err:service:a:b` | four hundred | Bad | x |',
  ].join('\n');
  expect(() => catalogueOf(doc, 'docs/x.md')).toThrow('docs/x.md:7');
});

test('a document without the catalogue section is an error saying what is missing', () => {
  expect(() => catalogueOf('# Errors\n', 'docs/x.md')).toThrow('docs/x.md has no "## Catalogue" section');
});

test('the catalogue is read as written: a status changed in the document shows', () => {
  const doc = [
    '## Catalogue',
    '',
    '| identifier | status | title | when |',
    '| --- | --- | --- | --- |',
    '| `err:service:data:key_not_found` | 410 | Not Found | x |',
    '',
    'after',
  ].join('\n');
  expect(catalogueOf(doc, 'docs/x.md')).toEqual({ 'err:service:data:key_not_found': { status: 410, title: 'Not Found' } });
});
