/**
 * The incremental JSON reader gives back what JSON.parse gives, however the text is cut into
 * pieces (inside strings, escapes, numbers, between a backslash and what it escapes), and refuses
 * what JSON.parse refuses, at the end at the latest.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { JsonReader, type JsonReaderSink, type ReadMode } from '../../src/engine/index.js';
import { assertProperty } from '../helpers/property.js';

/** Rebuilds the document from the reader's calls; objects near the root are descended into, arrays read item by item. */
class Rebuild implements JsonReaderSink {
  root: unknown;
  constructor(readonly depthRead: number) {}

  mode(path: readonly string[]): ReadMode {
    if (path.length > this.depthRead) return 'whole';
    return path.length % 2 === 0 ? 'object' : 'items';
  }

  #set(path: readonly string[], value: unknown): void {
    if (path.length === 0) {
      this.root = value;
      return;
    }
    let at = this.root as Record<string, unknown>;
    for (const name of path.slice(0, -1)) at = at[name] as Record<string, unknown>;
    // As JSON.parse: an own property, even "__proto__".
    Object.defineProperty(at, path[path.length - 1] as string, { value, enumerable: true, writable: true, configurable: true });
  }

  open(path: readonly string[], kind: 'object' | 'array'): void {
    this.#set(path, kind === 'object' ? {} : []);
  }

  value(path: readonly string[], value: unknown): void {
    this.#set(path, value);
  }

  item(path: readonly string[], index: number, value: unknown): void {
    let at = this.root as Record<string, unknown>;
    for (const name of path) at = at[name] as Record<string, unknown>;
    expect((at as unknown as unknown[]).length).toBe(index);
    (at as unknown as unknown[]).push(value);
  }
}

/** Feeds `text` in pieces of the given sizes (cycled); answers the rebuilt value or the problem. */
function read(text: string, sizes: readonly number[], depthRead = 3): { value: unknown } | { problem: string } {
  const sink = new Rebuild(depthRead);
  const reader = new JsonReader(sink);
  let at = 0;
  let n = 0;
  while (at < text.length) {
    const size = sizes[n++ % sizes.length] ?? 1;
    const problem = reader.write(text.slice(at, at + size));
    if (problem !== undefined) return { problem };
    at += size;
  }
  const problem = reader.end();
  if (problem !== undefined) return { problem };
  if (reader.empty) return { problem: 'empty' };
  return { value: sink.root };
}

const tricky = fc.string({ unit: fc.constantFrom('a', '"', '\\', '\n', 'é', '😀', '\u2028', '{', ']', ',', ':', ' ', 'u', '0') });
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    tricky,
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    fc.constantFrom(true, false, null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.oneof(tricky, fc.constantFrom('__proto__', 'constructor')), tie('value'), { maxKeys: 4 }),
  ),
})).value;
const sizes = fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 6 });

describe('JsonReader', () => {
  test('any cut of any document reads back as JSON.parse reads it', () =>
    assertProperty(
      fc.property(json, sizes, fc.boolean(), fc.integer({ min: 0, max: 4 }), (value, cut, pretty, depthRead) => {
        const text = pretty ? JSON.stringify(value, null, 2) : JSON.stringify(value);
        const read1 = read(` ${text}\n`, cut, depthRead);
        expect(read1).toEqual({ value: JSON.parse(text) });
      }),
      { numRuns: 300 },
    ));

  test('what JSON.parse refuses is refused, with a character offset and no excerpt of the text', () =>
    assertProperty(
      fc.property(json, sizes, fc.nat(), fc.constantFrom('x', '"', '\\', '}', ']', ',', ':', '{', '[', '', '\u0001'), (value, cut, where, insert) => {
        const text = JSON.stringify(value);
        const at = where % (text.length + 1);
        const broken = `${text.slice(0, at)}${insert}${text.slice(at + (insert === '' ? 1 : 0))}`;
        let parsed: { value: unknown } | undefined;
        try {
          parsed = { value: JSON.parse(broken) as unknown };
        } catch {
          parsed = undefined;
        }
        const got = read(broken, cut);
        if (parsed === undefined) {
          expect(got).toHaveProperty('problem');
          if ('problem' in got && got.problem !== 'empty') expect(got.problem).toMatch(/(at character \d+|before the JSON value is complete)$/);
        } else {
          expect(got).toEqual(parsed);
        }
      }),
      { numRuns: 500 },
    ));

  test('a backslash ending one piece still escapes the quote starting the next', () => {
    const text = JSON.stringify({ a: ['x\\"y\\\\', 'z'], b: '\\\\\\"' });
    for (let size = 1; size <= text.length; size++) expect(read(text, [size])).toEqual({ value: JSON.parse(text) });
  });

  test('text after the value, and an empty document, are told apart', () => {
    expect(read('{"a":1} x', [3])).toEqual({ problem: 'there is more after the JSON value at character 8' });
    expect(read('{"a":1}{}', [100])).toHaveProperty('problem');
    expect(read('  \n', [1])).toEqual({ problem: 'empty' });
    expect(read('{"a":[1,2', [4])).toEqual({ problem: 'it ends before the JSON value is complete' });
    expect(read('12', [1])).toEqual({ value: 12 });
  });
});
