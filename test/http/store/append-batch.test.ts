/**
 * The append batcher (src/http/store/append-batch.ts): which requests go to Redis together, in
 * what order, and what a failed append tells each of them. The sends are recorded, not made; the
 * live store tests (replicas-exact, store-checkpoints, store-faults) run the batches on Redis.
 */
import { expect, test } from 'vitest';
import { AppendBatcher, BATCH_MAX_BYTES, BATCH_MAX_CALLS, type PendingCall } from '../../../src/http/store/append-batch.js';

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

function recorder(fail?: (calls: readonly PendingCall[]) => Error | undefined) {
  const sends: number[][] = [];
  const batcher = new AppendBatcher((calls) => {
    sends.push(calls.map((call) => call.callNumber));
    const error = fail?.(calls);
    return error === undefined ? Promise.resolve(calls.length) : Promise.reject(error);
  });
  return { sends, batcher };
}

const call = (callNumber: number, payload = '{}'): PendingCall => ({ callNumber, payload });

test('requests made in one turn of the event loop are appended by one send, in the order they were made', async () => {
  const { sends, batcher } = recorder();
  const sent = [0, 1, 2, 3].map((n) => batcher.add(call(n)));
  expect(sends).toEqual([]);
  await Promise.all(sent);
  expect(sends).toEqual([[0, 1, 2, 3]]);
});

test('a request made in a later turn goes in a later send', async () => {
  const { sends, batcher } = recorder();
  const first = batcher.add(call(0));
  await nextTurn();
  const second = batcher.add(call(1));
  await Promise.all([first, second]);
  expect(sends).toEqual([[0], [1]]);
});

test('a full batch leaves at once, without waiting for the end of the turn, and the rest follow in the next', async () => {
  const { sends, batcher } = recorder();
  const sent = Array.from({ length: BATCH_MAX_CALLS + 2 }, (_, n) => batcher.add(call(n)));
  await Promise.resolve();
  await Promise.resolve();
  expect(sends.map((s) => s.length)).toEqual([BATCH_MAX_CALLS]);
  await Promise.all(sent);
  expect(sends.map((s) => s.length)).toEqual([BATCH_MAX_CALLS, 2]);
  expect(sends.flat()).toEqual(Array.from({ length: BATCH_MAX_CALLS + 2 }, (_, n) => n));
});

test('a batch of large requests leaves once it holds about a megabyte, so one script call never carries an unbounded body', async () => {
  const { sends, batcher } = recorder();
  const big = 'x'.repeat(BATCH_MAX_BYTES / 4);
  await Promise.all([0, 1, 2, 3, 4, 5].map((n) => batcher.add(call(n, big))));
  expect(sends).toEqual([
    [0, 1, 2, 3],
    [4, 5],
  ]);
});

test('a failed append fails every request of its batch with its error, and the next batch is sent as usual', async () => {
  const { sends, batcher } = recorder((calls) => (calls[0]?.callNumber === 0 ? new Error('The client is closed') : undefined));
  const failed = [0, 1].map((n) =>
    batcher.add(call(n)).then(
      () => 'appended',
      (e: unknown) => (e as Error).message,
    ),
  );
  expect(await Promise.all(failed)).toEqual(['The client is closed', 'The client is closed']);
  await batcher.add(call(2));
  expect(sends).toEqual([[0, 1], [2]]);
});
