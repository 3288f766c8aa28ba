/**
 * The tuples calls and answers travel in between HTTP workers and the engine owner
 * (cluster-protocol.ts): whatever a worker sends, the owner reads the same call after node's IPC
 * has stringified and parsed it, and the worker reads the owner's answer as the owner meant it —
 * an absent token, seq, rejection or input stays absent, and a seq of 0 or an empty token stays.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  ANSWER_FAILED,
  ANSWER_VALUE,
  CALL_RUN,
  type RunCall,
  type WireAnswer,
  type WireCall,
  decodeAnswer,
  decodeRun,
  encodeOutcome,
  encodeRun,
} from '../../src/http/cluster-protocol.js';
import type { EngineOutcome } from '../../src/http/engine-backend.js';
import type { Problem } from '../../src/http/envelope.js';
import type { Reply } from '../../src/http/route.js';
import { assertProperty } from '../helpers/property.js';

/** What node's IPC channel (serialization 'json') does to a message. */
function overIpc<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** JSON values, once through JSON (-0 becomes 0 there: node's IPC channel never could keep it). */
const json = fc.jsonValue({ maxDepth: 3 }).map((v) => overIpc(v));
const problem: fc.Arbitrary<Problem> = fc.record(
  {
    status: fc.constantFrom(400, 401, 403, 404, 429, 500),
    title: fc.string(),
    identifier: fc.string(),
    detail: fc.string(),
  },
  { noNullPrototype: true },
);

const runCall: fc.Arbitrary<RunCall> = fc
  .record(
    {
      route: fc.nat({ max: 200 }),
      token: fc.option(fc.string(), { nil: undefined }),
      input: fc.option(json, { nil: undefined }),
      rejection: problem,
      seq: fc.nat(),
    },
    { requiredKeys: ['route', 'token', 'input'], noNullPrototype: true },
  )
  .map((call) => call as RunCall);

describe('calls and answers between HTTP workers and the engine owner', () => {
  test('a run call reaches the owner as the worker made it', async () => {
    assertProperty(
      fc.property(fc.nat(), runCall, (id, call) => {
        const { route, ...rest } = call;
        const wire = overIpc(encodeRun(id, route, rest));
        expect(wire[0]).toBe(id);
        expect(wire[1]).toBe(CALL_RUN);
        expect(decodeRun(wire as Extract<WireCall, [number, typeof CALL_RUN, ...unknown[]]>)).toStrictEqual(call);
      }),
    );
  });

  test('seq 0, an empty token and a null input survive, and absent ones stay absent', () => {
    const wire = (call: RunCall) => overIpc(encodeRun(7, call.route, call)) as Extract<WireCall, [number, typeof CALL_RUN, ...unknown[]]>;
    expect(decodeRun(wire({ route: 3, token: '', input: null, seq: 0 }))).toStrictEqual({ route: 3, token: '', input: null, seq: 0 });
    const bare = decodeRun(wire({ route: 0, token: undefined, input: undefined }));
    expect(bare).toStrictEqual({ route: 0, token: undefined, input: undefined });
    expect(Object.keys(bare).sort()).toEqual(['input', 'route', 'token']);
  });

  test("a run's outcome reaches the worker as the owner computed it", async () => {
    const reply = fc.record(
      { data: json, pagination: fc.record({ cursor: fc.string(), hasMore: fc.boolean() }, { noNullPrototype: true }) },
      { requiredKeys: [], noNullPrototype: true },
    );
    const outcome: fc.Arbitrary<EngineOutcome> = fc.oneof(
      reply.map((r) => ({ ok: true as const, reply: r as Reply })),
      problem.map((p) => ({ ok: false as const, problem: p })),
    );
    assertProperty(
      fc.property(fc.nat(), outcome, (id, sent) => {
        const wire = overIpc(encodeOutcome(id, sent));
        expect(wire[0]).toBe(id);
        expect(decodeAnswer(wire)).toStrictEqual(sent);
      }),
    );
  });

  test("another call's value comes back as it was, null included, and a failure throws with the owner's error", () => {
    for (const value of [null, 0, 1_700_000_000_000, { kind: 'latency', ms: 20 }]) {
      expect(decodeAnswer(overIpc([1, ANSWER_VALUE, value] as WireAnswer))).toStrictEqual(value);
    }
    expect(() => decodeAnswer(overIpc([2, ANSWER_FAILED, 'TypeError: x is undefined'] as WireAnswer))).toThrow(
      'the engine owner failed: TypeError: x is undefined',
    );
  });
});
