/**
 * The order in which a lost Redis fails a request, which a real Redis cannot be made to show on
 * demand: here a link whose every step the test releases by hand. The reader loses Redis while an
 * append is still on its way, then the append fails too.
 */
import { expect, test } from 'vitest';
import type { RedisLink } from '../../../src/http/store/redis-link.js';
import { ReplicatedLog, StoreUnavailable } from '../../../src/http/store/replicated-log.js';

/** A promise and the hands that settle it. */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: Error) => void } {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const KEYS = { stream: '{t}:log', stamp: '{t}:stamp', genesis: '{t}:genesis', count: '{t}:count', checkpoint: '{t}:checkpoint' };

test('an answer refused by the lost reader while its append was on its way, the append then failing too, gives the append’s error and leaves no rejection unhandled (one ended the process)', async () => {
  const append = deferred<string>();
  const read = deferred<unknown>();
  let reads = 0;
  const reader: RedisLink = {
    append: () => Promise.reject(new Error('the reader never appends')),
    checkpoint: () => Promise.reject(new Error('the reader keeps no checkpoint')),
    // The first read (catching up) finds an empty log; the next one is the blocking read the test fails.
    command: () => (reads++ === 0 ? Promise.resolve(null) : read.promise),
    duplicate: () => Promise.reject(new Error('no duplicate of the reader')),
    close: () => Promise.resolve(),
  };
  const link: RedisLink = {
    append: () => append.promise,
    checkpoint: () => Promise.resolve(false),
    command: () => Promise.resolve(null),
    duplicate: () => Promise.resolve(reader),
    close: () => Promise.resolve(),
  };
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    const log = new ReplicatedLog(link, KEYS, 60_000);
    await log.start(
      () => undefined,
      () => Promise.resolve({ id: '0', count: 0 }),
    );
    const submitted = log.submit('{"k":"now"}');
    read.reject(new Error('Socket closed unexpectedly'));
    await new Promise((resolve) => setImmediate(resolve));
    append.reject(new Error('The client is closed'));
    const error = await submitted.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(StoreUnavailable);
    expect((error as Error).message).toMatch(/cannot be reached \(The client is closed\); nothing was changed/);
    await log.close();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(unhandled).toEqual([]);
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});

/** An XREAD reply holding these entries of `{t}:log` (RESP2), each with its number and sender. */
function xread(entries: Array<{ count: number; origin: string; callNumber: number }>): unknown {
  return [['{t}:log', entries.map((e) => [`1-${e.count}`, ['s', '1000', 'c', String(e.count), 'o', e.origin, 'n', String(e.callNumber), 'p', '{}']])]];
}

test('a replica that finds entries missing from the log (trimmed before it read them) fails the answers it waits for as unknown, resumes from the checkpoint, and applies on from there', async () => {
  const batch = deferred<unknown>();
  const next = deferred<unknown>();
  // Catching up finds an empty log; then the batch with a gap, then what follows the checkpoint.
  // After those, a read that waits until the reader is closed (as a blocking XREAD does).
  const closed = deferred<unknown>();
  const replies: Array<Promise<unknown>> = [Promise.resolve(null), batch.promise, next.promise];
  const reader: RedisLink = {
    append: () => Promise.reject(new Error('the reader never appends')),
    checkpoint: () => Promise.reject(new Error('the reader keeps no checkpoint')),
    command: () => replies.shift() ?? closed.promise,
    duplicate: () => Promise.reject(new Error('no duplicate of the reader')),
    close: () => {
      closed.reject(new Error('closed'));
      return Promise.resolve();
    },
  };
  const link: RedisLink = {
    append: () => Promise.resolve(1),
    checkpoint: () => Promise.resolve(false),
    command: () => Promise.resolve(null),
    duplicate: () => Promise.resolve(reader),
    close: () => Promise.resolve(),
  };
  const log = new ReplicatedLog(link, KEYS, 60_000);
  const applied: number[] = [];
  const resumes: boolean[] = [];
  const resume = (starting: boolean) => {
    resumes.push(starting);
    return Promise.resolve(starting ? { id: '0', count: 0 } : { id: '1-7', count: 7 });
  };
  await log.start((entry) => applied.push(entry.count), resume);
  const waiting = log.submit('{}');
  // Entries 1 and 2 come, then 5: 3 and 4 were trimmed away; the checkpoint stands after 7.
  batch.resolve(xread([1, 2, 5].map((count) => ({ count, origin: 'elsewhere', callNumber: 0 }))));
  const error = await waiting.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StoreUnavailable);
  expect((error as Error).message).toMatch(
    /fell behind the store's log \(after entry 2 came entry 5\) and resumed from its newest checkpoint; the request may or may not have taken effect/,
  );
  expect(resumes).toEqual([true, false]);
  const answered = log.submit('{}');
  next.resolve(xread([{ count: 8, origin: log.origin, callNumber: 1 }]));
  await answered;
  expect(applied).toEqual([1, 2, 8]);
  await log.close();
});
