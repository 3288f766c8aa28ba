/**
 * `GET /openapi.json` as OpenAPI 3.1 (JSON Schema 2020-12) reads it: a field that may be null says
 * so with `type: [..., 'null']` (or `anyOf` with `{ type: 'null' }`), never with 3.0's
 * `nullable: true`, which 3.1 ignores — a client generated from it would take `remaining` as never
 * null. The document is compiled by Ajv's 2020-12 validator in strict mode (which refuses keywords
 * it does not know), and real answers of the simulator are validated against it.
 */
import AjvModule, { type ValidateFunction } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Simulator, createSimulator } from '../../src/http/index.js';
import { type JsonSchema, integer, literals, nullable, orNull } from '../../src/http/schema.js';
import { call, isRecord, postJson, send } from '../helpers/http.js';

const Ajv2020 = AjvModule.default;
const DOC_ID = 'https://keysim.invalid/openapi.json';

let sim: Simulator;
let doc: JsonSchema;
let ajv: InstanceType<typeof Ajv2020>;

/**
 * Ajv in strict mode, with the int64 format the document uses, reading the document as a 3.1 tool
 * does: Ajv knows 3.0's `nullable` by default, which no JSON Schema 2020-12 tool does, so it is
 * removed (strict mode then refuses it as an unknown keyword).
 */
function newAjv(): InstanceType<typeof Ajv2020> {
  const a = new Ajv2020({ strict: true, allErrors: true });
  a.removeKeyword('nullable');
  a.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
  return a;
}

/** A JSON pointer segment (RFC 6901). */
const segment = (name: string) => name.replace(/~/g, '~0').replace(/\//g, '~1');

/** Where a route's 200 answer, or its request body, is in the document. */
function answerPointer(path: string): string {
  return `#/paths/${segment(path)}/post/responses/200/content/${segment('application/json')}/schema`;
}
function requestPointer(path: string): string {
  return `#/paths/${segment(path)}/post/requestBody/content/${segment('application/json')}/schema`;
}

/** The validator of the schema at `pointer`; its `$ref`s resolve against the whole document. */
function validatorAt(pointer: string): ValidateFunction {
  const validate = ajv.getSchema(`${DOC_ID}${pointer}`);
  if (validate === undefined) throw new Error(`no schema at ${pointer} in the OpenAPI document`);
  return validate;
}

/** The schema of a property down a path of property names, e.g. `data`, `credits`, `remaining`. */
function propertySchema(schema: JsonSchema, ...names: string[]): JsonSchema {
  let at = schema;
  for (const name of names) {
    const properties = at.properties;
    const next = isRecord(properties) ? properties[name] : undefined;
    if (!isRecord(next)) throw new Error(`no property ${name} in ${JSON.stringify(at).slice(0, 200)}`);
    at = next;
  }
  return at;
}

function schemaAt(pointer: string): JsonSchema {
  let at: unknown = doc;
  for (const part of pointer.slice(2).split('/')) {
    at = isRecord(at) ? at[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
  }
  if (!isRecord(at)) throw new Error(`no schema at ${pointer}`);
  return at;
}

/** Every place in `value` where an object has the key `key`, as JSON pointers. */
function keysNamed(value: unknown, key: string, at = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((item, i) => keysNamed(item, key, `${at}/${i}`));
  if (!isRecord(value)) return [];
  return Object.entries(value).flatMap(([name, inner]) => [
    ...(name === key ? [`${at}/${segment(name)}`] : []),
    ...keysNamed(inner, key, `${at}/${segment(name)}`),
  ]);
}

beforeAll(async () => {
  sim = await createSimulator({ startMs: Date.parse('2028-02-28T12:00:00Z'), seed: 7 });
  const answer = await send(sim.url, '/openapi.json', { method: 'GET' });
  expect(answer.status).toBe(200);
  doc = answer.body as JsonSchema;
  ajv = newAjv();
  // The whole document is one schema resource, so `#/components/...` references resolve; the
  // OpenAPI keys around the schemas are not JSON Schema keywords and are declared as such.
  for (const key of ['openapi', 'info', 'paths', 'components']) ajv.addKeyword(key);
  ajv.addSchema({ ...doc, $id: DOC_ID });
});
afterAll(() => sim.close());

describe('the OpenAPI document is 3.1: null is a type', () => {
  test('no nullable key anywhere in the document', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(keysNamed(doc, 'nullable')).toEqual([]);
  });

  test('every operation’s request and answer schema compiles as JSON Schema 2020-12 in strict mode', () => {
    const paths = doc.paths as Record<string, Record<string, { requestBody?: unknown }>>;
    let compiled = 0;
    for (const [path, operations] of Object.entries(paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const base = `#/paths/${segment(path)}/${method}`;
        const pointers = [
          `${base}/responses/200/content/${segment('application/json')}/schema`,
          `${base}/responses/default/content/${segment('application/json')}/schema`,
        ];
        if (operation.requestBody !== undefined) pointers.push(`${base}/requestBody/content/${segment('application/json')}/schema`);
        for (const pointer of pointers) {
          expect(() => validatorAt(pointer), pointer).not.toThrow();
          compiled++;
        }
      }
    }
    expect(compiled).toBeGreaterThan(80);
  });

  test.each([
    ['keys.updateCredits answer: remaining', answerPointer('/v2/keys.updateCredits'), ['data', 'remaining'], 'integer'],
    ['keys.getKey answer: credits.remaining', answerPointer('/v2/keys.getKey'), ['data', 'credits', 'remaining'], 'integer'],
    ['keys.createKey request: credits', requestPointer('/v2/keys.createKey'), ['credits'], 'object'],
    ['keys.createKey request: credits.remaining', requestPointer('/v2/keys.createKey'), ['credits', 'remaining'], 'integer'],
    ['keys.updateKey request: expires', requestPointer('/v2/keys.updateKey'), ['expires'], 'integer'],
    ['keys.updateKey request: credits.refill', requestPointer('/v2/keys.updateKey'), ['credits', 'refill'], 'object'],
    ['keys.updateCredits request: value', requestPointer('/v2/keys.updateCredits'), ['value'], 'integer'],
    ['identities.updateIdentity request: meta', requestPointer('/v2/identities.updateIdentity'), ['meta'], 'object'],
  ] as const)('%s is declared nullable the 3.1 way', (_name, pointer, names, type) => {
    const schema = propertySchema(schemaAt(pointer), ...names);
    expect(schema.type).toEqual([type, 'null']);
    expect(schema).not.toHaveProperty('nullable');
  });

  test('keys.updateCredits: the answer { remaining: null } validates, a string remaining does not', () => {
    const validate = validatorAt(answerPointer('/v2/keys.updateCredits'));
    expect(validate({ meta: { requestId: 'req_1' }, data: { remaining: null } }), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ meta: { requestId: 'req_1' }, data: { remaining: 5 } })).toBe(true);
    expect(validate({ meta: { requestId: 'req_1' }, data: { remaining: 'unlimited' } })).toBe(false);
  });

  test('keys.createKey: a request with credits.remaining null (unlimited) or credits null validates', () => {
    const validate = validatorAt(requestPointer('/v2/keys.createKey'));
    expect(validate({ apiId: 'api_1', credits: { remaining: null } }), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ apiId: 'api_1', credits: null }), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ apiId: 'api_1', credits: { remaining: -1 } })).toBe(false);
  });
});

describe('real answers of the simulator validate against the document', () => {
  async function answerOf(path: string, body: unknown): Promise<unknown> {
    const answer = await postJson(sim.url, path, body, sim.rootKey);
    expect(answer.status, `${path}: ${answer.text.slice(0, 300)}`).toBe(200);
    return answer.body;
  }

  function expectValid(path: string, answer: unknown): void {
    const validate = validatorAt(answerPointer(path));
    expect(validate(answer), `${path} ${JSON.stringify(answer).slice(0, 300)}: ${JSON.stringify(validate.errors)}`).toBe(true);
  }

  test('creating, reading, updating and verifying keys, whose remaining is null when unlimited', async () => {
    const { apiId } = await call<{ apiId: string }>(sim, '/v2/apis.createApi', { name: 'openapi-test' });
    const created = await answerOf('/v2/keys.createKey', { apiId, credits: { remaining: 3, refill: { interval: 'monthly', amount: 3, refillDay: 31 } } });
    expectValid('/v2/keys.createKey', created);
    const keyId = (created as { data: { keyId: string } }).data.keyId;
    const key = (created as { data: { key: string } }).data.key;

    expectValid('/v2/keys.getKey', await answerOf('/v2/keys.getKey', { keyId }));
    expectValid('/v2/keys.verifyKey', await answerOf('/v2/keys.verifyKey', { key }));

    const unlimited = await answerOf('/v2/keys.updateCredits', { keyId, operation: 'set', value: null });
    expect((unlimited as { data: { remaining: unknown } }).data.remaining).toBeNull();
    expectValid('/v2/keys.updateCredits', unlimited);
    const read = await answerOf('/v2/keys.getKey', { keyId });
    expectValid('/v2/keys.getKey', read);

    expectValid('/v2/keys.updateKey', await answerOf('/v2/keys.updateKey', { keyId, expires: null, meta: null, credits: { remaining: 10 } }));
  });

  test('an identity, its metadata cleared with null', async () => {
    const { identityId } = await call<{ identityId: string }>(sim, '/v2/identities.createIdentity', { externalId: 'openapi-user', meta: { plan: 'pro' } });
    expectValid('/v2/identities.updateIdentity', await answerOf('/v2/identities.updateIdentity', { identity: identityId, meta: null }));
    expectValid('/v2/identities.getIdentity', await answerOf('/v2/identities.getIdentity', { identity: identityId }));
  });

  test('an error answer validates against the operation’s default answer', async () => {
    const answer = await postJson(sim.url, '/v2/keys.getKey', { keyId: 42 }, sim.rootKey);
    expect(answer.status).toBe(400);
    const validate = validatorAt(`#/paths/${segment('/v2/keys.getKey')}/post/responses/default/content/${segment('application/json')}/schema`);
    expect(validate(answer.body), JSON.stringify(validate.errors)).toBe(true);
  });
});

describe('orNull: the 3.1 form of "this schema, or null"', () => {
  /** A fresh strict 2020-12 validator of one schema, its `$ref`s resolved in `defs`. */
  function compile(schema: JsonSchema): ValidateFunction {
    return newAjv().compile({ $defs: { Refill: { type: 'object', required: ['amount'], properties: { amount: { type: 'integer' } } } }, ...schema });
  }

  test('a single type gains null; an enum gains null too, or it would still refuse it', () => {
    const n = nullable(integer({ minimum: 0 })).jsonSchema();
    expect(n).toEqual({ type: ['integer', 'null'], format: 'int64', minimum: 0 });
    const e = nullable(literals(['daily', 'monthly'] as const)).jsonSchema();
    expect(e).toEqual({ type: ['string', 'null'], enum: ['daily', 'monthly', null] });
    const validate = compile(e);
    expect([null, 'daily', 'weekly', 3].map((v) => validate(v))).toEqual([true, true, false, false]);
  });

  test('a $ref or a schema of several types becomes anyOf with { type: "null" }, its description outside', () => {
    const ref = orNull({ $ref: '#/$defs/Refill', description: 'The refill.' });
    expect(ref).toEqual({ anyOf: [{ $ref: '#/$defs/Refill' }, { type: 'null' }], description: 'The refill.' });
    const either = orNull({ oneOf: [{ type: 'integer' }, { type: 'string' }] });
    expect(either).toEqual({ anyOf: [{ oneOf: [{ type: 'integer' }, { type: 'string' }] }, { type: 'null' }] });
    const validateRef = compile(ref);
    expect([null, { amount: 1 }, { amount: 'x' }, 'x'].map((v) => validateRef(v))).toEqual([true, true, false, false]);
    const validateEither = compile(either);
    expect([null, 1, 'a', true].map((v) => validateEither(v))).toEqual([true, true, true, false]);
  });
});
