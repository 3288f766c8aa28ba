/**
 * Each schema validates twice over: a compiled predicate (`test`) answers the conforming requests
 * and `check` describes the violations of the others. The two must mean the same thing, or a
 * request would be executed that the schema refuses (or refused with no violation to name). For
 * every request and response schema the server serves, values drawn from the schema's own JSON
 * Schema — conforming ones and ones just past a bound, a field missing, an unknown field, a wrong
 * type — get the same verdict from both, and `check` names a violation exactly when it refuses.
 * The text of an answer's envelope is written without building it as an object: it must be the
 * bytes `JSON.stringify` gives for the object.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import type { FieldError } from '../../src/engine/index.js';
import { bearer } from '../../src/http/bearer.js';
import { replyBody, replyText } from '../../src/http/envelope.js';
import { ROUTES } from '../../src/http/routes.js';
import type { Route } from '../../src/http/route.js';
import { type JsonSchema, type Schema, predicate, validate } from '../../src/http/schema.js';
import { assertProperty } from '../helpers/property.js';

type Arb = fc.Arbitrary<unknown>;

const anyJson: Arb = fc.jsonValue({ maxDepth: 2 });

function num(schema: JsonSchema, key: string): number | undefined {
  const v = schema[key];
  return typeof v === 'number' ? v : undefined;
}

/** Numbers within the bounds (edges included), now and then just outside them or fractional. */
function numberArb(schema: JsonSchema, integer: boolean): Arb {
  const min = num(schema, 'minimum') ?? -1e6;
  const max = num(schema, 'maximum') ?? 1e6;
  const inside = integer ? fc.integer({ min: Math.max(min, -1e15), max: Math.min(max, 1e15) }) : fc.double({ min, max, noNaN: true });
  const edges = [min, max].filter((n) => Number.isSafeInteger(n));
  const misses = [min - 1, max + 1, min + 0.5, Number.MAX_SAFE_INTEGER + 2].filter((n) => Number.isFinite(n));
  return nearMiss(edges.length > 0 ? fc.oneof(inside, fc.constantFrom(...edges)) : inside, fc.constantFrom(...misses));
}

function stringArb(schema: JsonSchema): Arb {
  const min = num(schema, 'minLength') ?? 0;
  const max = Math.min(num(schema, 'maxLength') ?? 40, min + 40);
  const pattern = schema.pattern;
  const inside = typeof pattern === 'string' ? fc.stringMatching(new RegExp(pattern)) : fc.string({ minLength: min, maxLength: max });
  const lengths = [min - 1, (num(schema, 'maxLength') ?? -1) + 1].filter((n) => n >= 0 && n < 5000);
  const misses = lengths.length > 0 ? fc.constantFrom(...lengths).map((n) => 'x'.repeat(n)) : fc.constant('a b');
  return nearMiss(inside, typeof pattern === 'string' ? fc.oneof(misses, fc.string({ maxLength: 8 })) : misses);
}

/** Mostly `inside`, one time in ten a value just past a bound. */
function nearMiss(inside: Arb, miss: Arb): Arb {
  return fc.oneof({ weight: 9, arbitrary: inside }, { weight: 1, arbitrary: miss });
}

/**
 * A schema that also admits null, as OpenAPI 3.1 writes it (`type: [T, 'null']`, or `anyOf` with
 * `{ type: 'null' }`), split into the schema without null and whether null is allowed.
 */
function splitNull(schema: JsonSchema): { schema: JsonSchema; nullable: boolean } {
  const { type, anyOf } = schema;
  if (Array.isArray(type) && type.includes('null')) {
    const rest = type.filter((t) => t !== 'null');
    const inner: JsonSchema = { ...schema, type: rest.length === 1 ? rest[0] : rest };
    if (Array.isArray(schema.enum)) inner.enum = schema.enum.filter((v) => v !== null);
    return { schema: inner, nullable: true };
  }
  if (Array.isArray(anyOf) && anyOf.some((s: JsonSchema) => s.type === 'null')) {
    const rest = (anyOf as JsonSchema[]).filter((s) => s.type !== 'null');
    return { schema: rest.length === 1 ? (rest[0] as JsonSchema) : { anyOf: rest }, nullable: true };
  }
  return { schema, nullable: false };
}

/** Mostly conforming values of `schema`, with every kind of near miss among them. */
function arbitraryFor(declared: JsonSchema, depth = 0): Arb {
  const { schema, nullable } = splitNull(declared);
  const base = baseArb(schema, depth);
  const withNull = nullable ? fc.oneof(base, fc.constant(null)) : base;
  // A value of the wrong type now and then.
  return fc.oneof({ weight: 30, arbitrary: withNull }, { weight: 1, arbitrary: anyJson });
}

function baseArb(schema: JsonSchema, depth: number): Arb {
  if (Array.isArray(schema.oneOf)) return fc.oneof(...(schema.oneOf as JsonSchema[]).map((s) => arbitraryFor(s, depth + 1)));
  if (Array.isArray(schema.enum)) return nearMiss(fc.constantFrom(...(schema.enum as string[])), fc.string({ maxLength: 8 }));
  switch (schema.type) {
    case 'string':
      return stringArb(schema);
    case 'integer':
      return numberArb(schema, true);
    case 'number':
      return numberArb(schema, false);
    case 'boolean':
      return fc.boolean();
    case 'array': {
      const items = schema.items as JsonSchema;
      const min = num(schema, 'minItems') ?? 0;
      const max = Math.min(num(schema, 'maxItems') ?? 4, min + 4);
      if (depth > 3) return fc.constant([]);
      return fc.array(arbitraryFor(items, depth + 1), { minLength: Math.max(0, min - 1), maxLength: max + 1 });
    }
    case 'object': {
      if (schema.additionalProperties === true || schema.properties === undefined) {
        // Free-form metadata: small, sometimes deep objects.
        return fc.oneof(fc.dictionary(fc.string({ maxLength: 6 }), anyJson, { maxKeys: 4 }), fc.constant(nest(14)), fc.constant(nest(3)));
      }
      const properties = schema.properties as Record<string, JsonSchema>;
      const required = new Set((schema.required as string[] | undefined) ?? []);
      const fields = Object.keys(properties);
      if (depth > 3) return fc.constant({});
      const entries = fields.map((key) =>
        fc.option(
          arbitraryFor(properties[key] as JsonSchema, depth + 1).map((value) => [key, value] as const),
          {
            // Required fields are there most of the time, optional ones half of it.
            freq: required.has(key) ? 40 : 2,
            nil: undefined,
          },
        ),
      );
      // An unknown field one time in twenty (fc.option's freq is the odds of its nil).
      const extraName = fc.oneof(
        { weight: 19, arbitrary: fc.constant(undefined) },
        { weight: 1, arbitrary: fc.constantFrom('unknownField', 'typo', '__proto__', 'constructor') },
      );
      return fc.tuple(fc.tuple(...entries), extraName, anyJson).map(([present, extra, extraValue]) => {
        const value: Record<string, unknown> = {};
        for (const entry of present) if (entry !== undefined) value[entry[0]] = entry[1];
        // As JSON.parse would build it: an own property, even named __proto__.
        if (extra !== undefined) Object.defineProperty(value, extra, { value: extraValue, enumerable: true, writable: true, configurable: true });
        return value;
      });
    }
    default:
      return anyJson;
  }
}

function nest(levels: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

function schemasOf(route: Route): Array<[string, Schema<unknown>]> {
  const list: Array<[string, Schema<unknown>]> = [[`${route.path} request`, route.request]];
  if (route.response !== undefined) list.push([`${route.path} response`, route.response]);
  return list;
}

describe('compiled schema predicates', () => {
  const all = ROUTES.flatMap(schemasOf);

  test('every route schema has a compiled predicate (hand-written ones derive it from check)', () => {
    for (const [, schema] of all) expect(typeof predicate(schema)).toBe('function');
  });

  test.each(all)('%s: test and check agree, and check names a violation exactly when it refuses', (_name, schema) => {
    const test = predicate(schema);
    let conforming = 0;
    assertProperty(
      fc.property(arbitraryFor(schema.jsonSchema()), (value) => {
        const errors: FieldError[] = [];
        const checked = schema.check(value, 'body', errors);
        expect(test(value)).toBe(checked);
        expect(errors.length === 0).toBe(checked);
        const validated = validate(schema, value);
        expect(validated.ok).toBe(checked);
        if (!validated.ok) expect(validated.errors).toEqual(errors);
        if (checked) conforming++;
      }),
      { numRuns: 200 },
    );
    // The generator reaches both verdicts for schemas that accept anything at all.
    expect(conforming).toBeGreaterThan(0);
  });
});

describe('answer text', () => {
  // A route with its own data writer (dataText) answers one shape only: tested with that shape below.
  const routes = ROUTES.filter((r) => r.streamReply !== true && r.dataText === undefined);
  test('replyText writes the bytes JSON.stringify(replyBody(...)) gives, for any data and pagination', () => {
    assertProperty(
      fc.property(
        fc.constantFrom(...routes),
        fc.stringMatching(/^req_[0-9a-f]{16}[0-9a-z]{6,8}$/),
        fc.option(fc.jsonValue(), { nil: undefined }),
        fc.option(fc.tuple(fc.boolean(), fc.option(fc.string(), { nil: undefined })), { nil: undefined }),
        (route, requestId, data, page) => {
          const pagination = page === undefined ? undefined : page[1] === undefined ? { hasMore: page[0] } : { hasMore: page[0], cursor: page[1] };
          const reply = { ...(data === undefined ? {} : { data }), ...(pagination === undefined ? {} : { pagination }) };
          expect(replyText(route, requestId, reply)).toBe(JSON.stringify(replyBody(route, requestId, reply)));
        },
      ),
      { numRuns: 300 },
    );
  });

  test('ratelimit.limit: its data writer gives the bytes JSON.stringify gives, for every answer the engine can make', () => {
    const route = ROUTES.find((r) => r.path === '/v2/ratelimit.limit');
    if (route?.dataText === undefined) throw new Error('ratelimit.limit has no data writer');
    const count = fc.oneof(
      fc.integer({ min: 0, max: 1_000_000 }),
      fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
      fc.constantFrom(0, 1, 2 ** 31, 2 ** 53 - 1, 1e21),
    );
    const output = fc.record(
      {
        limit: count,
        remaining: count,
        reset: fc.oneof(fc.integer({ min: 0, max: 8.64e15 }), fc.constant(1795629660000)),
        success: fc.boolean(),
        overrideId: fc.oneof(fc.stringMatching(/^rlor_[1-9A-HJ-NP-Za-km-z]{10,20}$/), fc.string({ unit: 'binary' })),
      },
      { requiredKeys: ['limit', 'remaining', 'reset', 'success'] },
    );
    assertProperty(
      fc.property(output, fc.stringMatching(/^req_[0-9a-f]{16}[0-9a-z]{6,8}$/), (data, requestId) => {
        expect(replyText(route, requestId, { data })).toBe(JSON.stringify(replyBody(route, requestId, { data })));
      }),
      { numRuns: 500 },
    );
  });
});

describe('Authorization header', () => {
  /** The rule as the pattern states it (the parser answers the usual spelling without running it). */
  const byPattern = (header: string) => /^Bearer +(\S+) *$/i.exec(header)?.[1];
  test('the fast path and the pattern take the same token from any header', () => {
    const token = fc.oneof(fc.string({ maxLength: 12 }), fc.stringMatching(/^[A-Za-z0-9_]{1,40}$/), fc.string({ unit: 'binary', maxLength: 6 }));
    const scheme = fc.constantFrom('Bearer ', 'bearer ', 'Bearer  ', 'BEARER ', 'Bearer', 'Basic ', '');
    const tail = fc.constantFrom('', ' ', '  ', '\t', ' x');
    assertProperty(
      fc.property(scheme, token, tail, (s, t, end) => {
        const header = `${s}${t}${end}`;
        const parsed = bearer(header);
        const expected = byPattern(header);
        if (expected === undefined) expect(parsed.ok).toBe(false);
        else expect(parsed).toEqual({ ok: true, token: expected });
      }),
      { numRuns: 500 },
    );
  });
});
