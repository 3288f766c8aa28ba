/**
 * The outline language of report.json (json.ts): shapes of strings, numbers, literals, arrays,
 * records and objects typed against the model, with the two walks over a value by its outline —
 * `canonical` (fields in outline order, record keys sorted: equal reports, equal bytes) and
 * `validate` (each field that departs from the outline, by its path).
 */
import { compareKeys } from './format.js';

export type Shape =
  | { kind: 'string'; pattern?: RegExp; patternName?: string }
  | { kind: 'number'; min?: number }
  | { kind: 'boolean' }
  | { kind: 'literal'; values: ReadonlyArray<string | number> }
  | { kind: 'nullable'; of: Shape }
  | { kind: 'array'; of: Shape }
  | { kind: 'record'; of: Shape }
  | { kind: 'object'; fields: Readonly<Record<string, Shape>>; optional: ReadonlySet<string> };

export const str: Shape = { kind: 'string' };
export const num: Shape = { kind: 'number' };
export const count: Shape = { kind: 'number', min: 0 };
export const bool: Shape = { kind: 'boolean' };
export const base64: Shape = { kind: 'string', pattern: /^[A-Za-z0-9+/=]*$/, patternName: 'base64' };
export const oneOf = (...values: ReadonlyArray<string | number>): Shape => ({ kind: 'literal', values });
export const arrayOf = (of: Shape): Shape => ({ kind: 'array', of });
export const recordOf = (of: Shape): Shape => ({ kind: 'record', of });
export const nullable = (of: Shape): Shape => ({ kind: 'nullable', of });

/** An object outline with exactly the keys of `T` (checked by the compiler). */
export function object<T>(fields: { [K in keyof T]-?: Shape }, optional: ReadonlyArray<keyof T & string> = []): Shape {
  return { kind: 'object', fields: fields as Record<string, Shape>, optional: new Set(optional) };
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Rebuilds `value` with object keys in outline order (unknown keys after, sorted) and record keys sorted. */
export function canonical(value: unknown, shape: Shape): unknown {
  switch (shape.kind) {
    case 'nullable':
      return value === null ? null : canonical(value, shape.of);
    case 'array':
      return Array.isArray(value) ? value.map((item) => canonical(item, shape.of)) : value;
    case 'record': {
      if (!isPlainObject(value)) return value;
      const out: Record<string, unknown> = {};
      for (const key of Object.keys(value).sort(compareKeys)) out[key] = canonical(value[key], shape.of);
      return out;
    }
    case 'object': {
      if (!isPlainObject(value)) return value;
      const out: Record<string, unknown> = {};
      for (const [key, fieldShape] of Object.entries(shape.fields)) {
        if (key in value && value[key] !== undefined) out[key] = canonical(value[key], fieldShape);
      }
      for (const key of Object.keys(value).sort()) if (!(key in shape.fields)) out[key] = value[key];
      return out;
    }
    default:
      return value;
  }
}

/** Problems listed at most, per report read. */
export const MAX_ISSUES = 12;

export function describe(value: unknown): string {
  if (value === undefined) return 'nothing (missing)';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  const text = JSON.stringify(value);
  return `${typeof value} ${text.length > 40 ? `${text.slice(0, 37)}...` : text}`;
}

/** Pushes onto `issues` each place where `value` departs from `shape`, by its path. */
export function validate(value: unknown, shape: Shape, path: string, issues: string[]): void {
  if (issues.length >= MAX_ISSUES) return;
  const fail = (expected: string) => {
    issues.push(`${path}: expected ${expected}, got ${describe(value)}`);
  };
  switch (shape.kind) {
    case 'string':
      if (typeof value !== 'string') fail('a string');
      else if (shape.pattern !== undefined && !shape.pattern.test(value)) fail(`a ${shape.patternName ?? 'matching'} string`);
      return;
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) fail('a number');
      else if (shape.min !== undefined && value < shape.min) fail(`a number >= ${shape.min}`);
      return;
    case 'boolean':
      if (typeof value !== 'boolean') fail('true or false');
      return;
    case 'literal':
      if (!shape.values.some((allowed) => allowed === value)) fail(`one of ${shape.values.map((v) => JSON.stringify(v)).join(', ')}`);
      return;
    case 'nullable':
      if (value !== null) validate(value, shape.of, path, issues);
      return;
    case 'array':
      if (!Array.isArray(value)) return fail('an array');
      value.forEach((item, i) => validate(item, shape.of, `${path}[${i}]`, issues));
      return;
    case 'record':
      if (!isPlainObject(value)) return fail('an object');
      for (const [key, item] of Object.entries(value)) validate(item, shape.of, `${path}[${JSON.stringify(key)}]`, issues);
      return;
    case 'object':
      if (!isPlainObject(value)) return fail('an object');
      for (const [key, fieldShape] of Object.entries(shape.fields)) {
        const fieldPath = path === '' ? key : `${path}.${key}`;
        if (!(key in value)) {
          if (!shape.optional.has(key)) issues.push(`${fieldPath}: missing`);
        } else {
          validate(value[key], fieldShape, fieldPath, issues);
        }
        if (issues.length >= MAX_ISSUES) return;
      }
      return;
  }
}
