/**
 * One declaration per request and response body (docs/architecture.md#conventions): a schema gives the
 * TypeScript type (`Infer<typeof s>`), a validator that reports every violation with its
 * location, and the JSON Schema that goes into the OpenAPI document the simulator serves.
 * Deliberately small: exactly the shapes the service's interface needs.
 *
 * Each schema has two validators of the same meaning: `test`, a predicate compiled once when the
 * schema is declared (closures over its settings, nothing built per call), which answers every
 * conforming request; and `check`, which builds each violation's location and message, run only
 * once `test` has said no. Most requests conform, so the hot path allocates nothing to validate.
 */
import { type FieldError, type JsonObject, MAX_META_DEPTH, nestingDepth } from '../engine/index.js';

export type JsonSchema = { [key: string]: unknown };

export interface Schema<T> {
  /** Phantom field carrying the type; never set. */
  readonly _type?: T;
  /** Appends violations to `errors`; true when `value` conforms. */
  check(value: unknown, location: string, errors: FieldError[]): boolean;
  /**
   * True when `value` conforms, exactly when `check` would say so, without describing why not.
   * Optional for hand-written schemas: `predicate()` derives one from `check`.
   */
  test?(value: unknown): boolean;
  jsonSchema(): JsonSchema;
}

export type Infer<S> = S extends Schema<infer T> ? T : never;

/** Marks a property as optional (may be absent; never `undefined` once parsed from JSON). */
export interface OptionalSchema<T> extends Schema<T> {
  readonly optional: true;
}

type Shape = Record<string, Schema<unknown>>;
type OptionalKeys<S extends Shape> = { [K in keyof S]: S[K] extends OptionalSchema<unknown> ? K : never }[keyof S];
type RequiredKeys<S extends Shape> = Exclude<keyof S, OptionalKeys<S>>;
type Simplify<T> = { [K in keyof T]: T[K] } & {};
export type InferShape<S extends Shape> = Simplify<{ [K in RequiredKeys<S>]: Infer<S[K]> } & { [K in OptionalKeys<S>]?: Infer<S[K]> }>;

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number' && !Number.isFinite(value)) return 'a non-finite number';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** The schema's compiled predicate (derived from `check` for schemas that declare none). */
export function predicate(schema: Schema<unknown>): (value: unknown) => boolean {
  const test = schema.test;
  if (test !== undefined) return test;
  const check = schema.check;
  return (value) => check(value, '', []);
}

function push(errors: FieldError[], location: string, message: string, fix?: string): false {
  errors.push(fix === undefined ? { location, message } : { location, message, fix });
  return false;
}

export interface StringOptions {
  minLength?: number;
  maxLength?: number;
  pattern?: RegExp;
  /** Shown in the error when the pattern fails, e.g. "letters, digits and _". */
  patternHint?: string;
  description?: string;
}

export function string(options: StringOptions = {}): Schema<string> {
  const minLength = options.minLength ?? 0;
  const maxLength = options.maxLength ?? Number.POSITIVE_INFINITY;
  const pattern = options.pattern;
  return {
    test:
      pattern === undefined
        ? (value) => typeof value === 'string' && value.length >= minLength && value.length <= maxLength
        : (value) => typeof value === 'string' && value.length >= minLength && value.length <= maxLength && pattern.test(value),
    check(value, location, errors) {
      if (typeof value !== 'string') return push(errors, location, `must be a string, got ${describeType(value)}`);
      if (options.minLength !== undefined && value.length < options.minLength) {
        return push(errors, location, `must be at least ${options.minLength} character${options.minLength === 1 ? '' : 's'} long`);
      }
      if (options.maxLength !== undefined && value.length > options.maxLength) {
        return push(errors, location, `must be at most ${options.maxLength} characters long, got ${value.length}`);
      }
      if (options.pattern !== undefined && !options.pattern.test(value)) {
        return push(errors, location, `must match ${options.patternHint ?? options.pattern.source}`);
      }
      return true;
    },
    jsonSchema() {
      const s: JsonSchema = { type: 'string' };
      if (options.minLength !== undefined) s.minLength = options.minLength;
      if (options.maxLength !== undefined) s.maxLength = options.maxLength;
      if (options.pattern !== undefined) s.pattern = options.pattern.source;
      if (options.description !== undefined) s.description = options.description;
      return s;
    },
  };
}

export interface IntegerOptions {
  minimum?: number;
  maximum?: number;
  description?: string;
}

export function integer(options: IntegerOptions = {}): Schema<number> {
  return bounded(options, {
    accepts: Number.isInteger,
    mismatch: (value) => `must be an integer, got ${describeType(value)}${typeof value === 'number' ? ` (${value})` : ''}`,
    lowest: Number.MIN_SAFE_INTEGER,
    highest: Number.MAX_SAFE_INTEGER,
    json: { type: 'integer', format: 'int64' },
  });
}

export interface NumberOptions {
  minimum?: number;
  maximum?: number;
  description?: string;
}

/** A finite number (fractions allowed), within bounds. */
export function number(options: NumberOptions = {}): Schema<number> {
  return bounded(options, {
    accepts: Number.isFinite,
    mismatch: (value) => `must be a number, got ${describeType(value)}`,
    lowest: Number.NEGATIVE_INFINITY,
    highest: Number.POSITIVE_INFINITY,
    json: { type: 'number' },
  });
}

/** What sets an integer apart from a number: which numbers it takes, the message for others, its default bounds and JSON type. */
interface NumberKind {
  accepts: (value: number) => boolean;
  mismatch: (value: unknown) => string;
  lowest: number;
  highest: number;
  json: JsonSchema;
}

/** A number of one kind within bounds (the options' or the kind's own). */
function bounded(options: NumberOptions, kind: NumberKind): Schema<number> {
  const minimum = options.minimum ?? kind.lowest;
  const maximum = options.maximum ?? kind.highest;
  const accepts = kind.accepts;
  return {
    test: (value) => typeof value === 'number' && accepts(value) && value >= minimum && value <= maximum,
    check(value, location, errors) {
      if (typeof value !== 'number' || !accepts(value)) return push(errors, location, kind.mismatch(value));
      if (value < minimum) return push(errors, location, `must be ≥ ${minimum}, got ${value}`);
      if (value > maximum) return push(errors, location, `must be ≤ ${maximum}, got ${value}`);
      return true;
    },
    jsonSchema() {
      const s: JsonSchema = { ...kind.json };
      if (options.minimum !== undefined) s.minimum = options.minimum;
      if (options.maximum !== undefined) s.maximum = options.maximum;
      if (options.description !== undefined) s.description = options.description;
      return s;
    },
  };
}

export function boolean(description?: string): Schema<boolean> {
  return {
    test: (value) => typeof value === 'boolean',
    check: (value, location, errors) => typeof value === 'boolean' || push(errors, location, `must be a boolean, got ${describeType(value)}`),
    jsonSchema: () => (description === undefined ? { type: 'boolean' } : { type: 'boolean', description }),
  };
}

export function literals<const L extends readonly string[]>(values: L, description?: string): Schema<L[number]> {
  const allowed: ReadonlySet<unknown> = new Set(values);
  return {
    test: (value) => allowed.has(value),
    check(value, location, errors) {
      if (typeof value === 'string' && values.includes(value)) return true;
      // The value itself is not echoed: errors name the place and the rule, never the client's text.
      return push(
        errors,
        location,
        `must be one of ${values.map((v) => `"${v}"`).join(', ')}, got ${typeof value === 'string' ? 'another string' : describeType(value)}`,
      );
    },
    jsonSchema: () => (description === undefined ? { type: 'string', enum: [...values] } : { type: 'string', enum: [...values], description }),
  };
}

export function nullable<T>(inner: Schema<T>): Schema<T | null> {
  const test = predicate(inner);
  return {
    test: (value) => value === null || test(value),
    check: (value, location, errors) => value === null || inner.check(value, location, errors),
    jsonSchema: () => orNull(inner.jsonSchema()),
  };
}

/**
 * The JSON Schema of `schema` or null, as OpenAPI 3.1 (JSON Schema 2020-12) writes it: `null`
 * added to a single `type` (and to an `enum`, which would refuse it otherwise), or, for a schema
 * without one type (a `$ref`, a `oneOf`), `anyOf` the schema and `{ type: 'null' }`. OpenAPI 3.0's
 * `nullable: true` means nothing in 3.1: a generated client would take the field as never null.
 */
export function orNull(schema: JsonSchema): JsonSchema {
  const { type } = schema;
  if (typeof type !== 'string' || '$ref' in schema) {
    const { description, ...rest } = schema;
    const either: JsonSchema = { anyOf: [rest, { type: 'null' }] };
    if (description !== undefined) either.description = description;
    return either;
  }
  const s: JsonSchema = { ...schema, type: [type, 'null'] };
  if (Array.isArray(schema.enum)) s.enum = [...(schema.enum as unknown[]), null];
  return s;
}

export function optional<T>(inner: Schema<T>): OptionalSchema<T> {
  return { optional: true, check: inner.check, test: predicate(inner), jsonSchema: inner.jsonSchema };
}

export interface ArrayOptions {
  minItems?: number;
  maxItems?: number;
  description?: string;
}

export function array<T>(item: Schema<T>, options: ArrayOptions = {}): Schema<T[]> {
  const minItems = options.minItems ?? 0;
  const maxItems = options.maxItems ?? Number.POSITIVE_INFINITY;
  const itemTest = predicate(item);
  return {
    test(value) {
      if (!Array.isArray(value) || value.length < minItems || value.length > maxItems) return false;
      for (let i = 0; i < value.length; i++) if (!itemTest(value[i])) return false;
      return true;
    },
    check(value, location, errors) {
      if (!Array.isArray(value)) return push(errors, location, `must be an array, got ${describeType(value)}`);
      if (options.minItems !== undefined && value.length < options.minItems) return push(errors, location, `must have at least ${options.minItems} item(s)`);
      if (options.maxItems !== undefined && value.length > options.maxItems)
        return push(errors, location, `must have at most ${options.maxItems} items, got ${value.length}`);
      let ok = true;
      for (let i = 0; i < value.length; i++) {
        // Cap the number of reported violations so a huge bad array cannot blow up the answer.
        if (errors.length >= 50) return false;
        ok = item.check(value[i], `${location}[${i}]`, errors) && ok;
      }
      return ok;
    },
    jsonSchema() {
      const s: JsonSchema = { type: 'array', items: item.jsonSchema() };
      if (options.minItems !== undefined) s.minItems = options.minItems;
      if (options.maxItems !== undefined) s.maxItems = options.maxItems;
      if (options.description !== undefined) s.description = options.description;
      return s;
    },
  };
}

export interface ObjectSchema<S extends Shape> extends Schema<InferShape<S>> {
  readonly shape: S;
}

/** A closed object: unknown properties are violations (they are usually typos). */
export function object<S extends Shape>(shape: S, description?: string): ObjectSchema<S> {
  const keys = Object.keys(shape);
  // Compiled once: per field its name, its predicate and whether it may be absent.
  const fields = keys.map((key) => {
    const schema = shape[key] as Schema<unknown>;
    return { key, test: predicate(schema), optional: 'optional' in schema };
  });
  return {
    shape,
    test(value) {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
      const record = value as Record<string, unknown>;
      for (const field of fields) {
        const v = record[field.key];
        if (v === undefined || !Object.hasOwn(record, field.key)) {
          if (!field.optional) return false;
        } else if (!field.test(v)) {
          return false;
        }
      }
      // Unknown own properties are violations (for…in also walks inherited ones: skip those).
      for (const key in record) if (!Object.hasOwn(shape, key) && Object.hasOwn(record, key)) return false;
      return true;
    },
    check(value, location, errors) {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return push(errors, location, `must be an object, got ${describeType(value)}`);
      const record = value as Record<string, unknown>;
      let ok = true;
      for (const key of keys) {
        const schema = shape[key] as Schema<unknown>;
        const present = Object.hasOwn(record, key) && record[key] !== undefined;
        if (!present) {
          if (!('optional' in schema)) ok = push(errors, `${location}.${key}`, 'is required');
          continue;
        }
        ok = schema.check(record[key], `${location}.${key}`, errors) && ok;
      }
      for (const key of Object.keys(record)) {
        if (!Object.hasOwn(shape, key)) {
          ok = push(errors, `${location}.${key.slice(0, 100)}`, 'is not a known field', `Remove it; the known fields are ${keys.join(', ') || 'none'}.`);
        }
        if (errors.length >= 50) return false;
      }
      return ok;
    },
    jsonSchema() {
      const properties: Record<string, JsonSchema> = {};
      const required: string[] = [];
      for (const key of keys) {
        const schema = shape[key] as Schema<unknown>;
        properties[key] = schema.jsonSchema();
        if (!('optional' in schema)) required.push(key);
      }
      const s: JsonSchema = { type: 'object', properties, additionalProperties: false };
      if (required.length > 0) s.required = required;
      if (description !== undefined) s.description = description;
      return s;
    },
  };
}

/**
 * Free-form JSON metadata: any object, bounded in depth so that no request can exhaust the
 * stack. (A value parsed from JSON is JSON by construction, so only the depth is checked.)
 */
export function jsonObject(maxDepth = MAX_META_DEPTH, description = 'Free-form JSON metadata.'): Schema<JsonObject> {
  return {
    test: (value) => typeof value === 'object' && value !== null && !Array.isArray(value) && nestingDepth(value, maxDepth) <= maxDepth,
    check(value, location, errors) {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return push(errors, location, `must be an object, got ${describeType(value)}`);
      // Counted as the engine counts metadata (objects and arrays are levels), so the limits agree.
      if (nestingDepth(value, maxDepth) > maxDepth) return push(errors, location, `is nested deeper than ${maxDepth} levels`);
      return true;
    },
    jsonSchema: () => ({ type: 'object', additionalProperties: true, description }),
  };
}

/** One of several schemas (tried in order; violations of the closest are reported). */
export function oneOf<A, B>(a: Schema<A>, b: Schema<B>, description?: string): Schema<A | B> {
  const testA = predicate(a);
  const testB = predicate(b);
  return {
    test: (value) => testA(value) || testB(value),
    check(value, location, errors) {
      const first: FieldError[] = [];
      if (a.check(value, location, first)) return true;
      const second: FieldError[] = [];
      if (b.check(value, location, second)) return true;
      errors.push(...(first.length <= second.length ? first : second));
      return false;
    },
    jsonSchema: () => (description === undefined ? { oneOf: [a.jsonSchema(), b.jsonSchema()] } : { oneOf: [a.jsonSchema(), b.jsonSchema()], description }),
  };
}

/** Validates `value`; on failure returns every violation. */
export function validate<T>(schema: Schema<T>, value: unknown, location = 'body'): { ok: true; value: T } | { ok: false; errors: FieldError[] } {
  // The compiled predicate answers conforming values; only a violation pays for its description.
  if (schema.test !== undefined && schema.test(value)) return { ok: true, value: value as T };
  const errors: FieldError[] = [];
  return schema.check(value, location, errors) ? { ok: true, value: value as T } : { ok: false, errors };
}
