/**
 * The requests a replica appends to the store's log within one turn of its event loop, sent as one
 * call of the append script (log-script.ts) instead of one call each. Under load a replica parses
 * many requests in one turn; one call for them all spends Redis one script run instead of many,
 * and wakes each replica's blocked read once, so every replica reads them in one reply instead of
 * several. A request waits for no other: the batch leaves at the end of the turn it was made in,
 * or at once when it is full.
 */

/** One request to append: its number at this replica and the request itself. */
export interface PendingCall {
  callNumber: number;
  payload: string;
}

/** At most this many requests, or about this many bytes of them, in one append script call. */
export const BATCH_MAX_CALLS = 500;
export const BATCH_MAX_BYTES = 1 << 20;

interface Batch {
  calls: PendingCall[];
  bytes: number;
  /** Settles when the batch's append does: every request in it was appended, or none was. */
  sent: Promise<void>;
  release: () => void;
}

export class AppendBatcher {
  readonly #send: (calls: readonly PendingCall[]) => Promise<unknown>;
  #open: Batch | undefined;

  /** `send` appends the calls, in order, in one script call. */
  constructor(send: (calls: readonly PendingCall[]) => Promise<unknown>) {
    this.#send = send;
  }

  /** Adds a request to the open batch; settles when that batch's append does. */
  add(call: PendingCall): Promise<void> {
    const batch = this.#open ?? this.#openBatch();
    batch.calls.push(call);
    batch.bytes += call.payload.length;
    if (batch.calls.length >= BATCH_MAX_CALLS || batch.bytes >= BATCH_MAX_BYTES) batch.release();
    return batch.sent;
  }

  #openBatch(): Batch {
    let release!: () => void;
    const opened = new Promise<void>((resolve) => (release = resolve));
    const batch: Batch = {
      calls: [],
      bytes: 0,
      release: () => {
        if (this.#open === batch) this.#open = undefined;
        release();
      },
      sent: opened.then(() => this.#send(batch.calls)).then(() => undefined),
    };
    this.#open = batch;
    setImmediate(batch.release);
    return batch;
  }
}
