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

test('an answer refused by the lost reader while its append was on its way, the append then failing too, gives the append’s error and leaves no rejection unhandled (one ended the process)', async () => {
  const append = deferred<string>();
  const read = deferred<unknown>();
  let reads = 0;
  const reader: RedisLink = {
    append: () => Promise.reject(new Error('the reader never appends')),
    // The first read (catching up) finds an empty log; the next one is the blocking read the test fails.
    command: () => (reads++ === 0 ? Promise.resolve(null) : read.promise),
    duplicate: () => Promise.reject(new Error('no duplicate of the reader')),
    close: () => Promise.resolve(),
  };
  const link: RedisLink = {
    append: () => append.promise,
    command: () => Promise.resolve(null),
    duplicate: () => Promise.resolve(reader),
    close: () => Promise.resolve(),
  };
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    const log = new ReplicatedLog(link, { stream: '{t}:log', stamp: '{t}:stamp', genesis: '{t}:genesis' }, 60_000);
    await log.start(() => undefined);
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
