/**
 * The operation history of a run: `history.jsonl.gz` beside the report, read back by
 * `keysim check` and by the invariant checkers (`checks/`).
 *
 * Format (gzip of JSON lines, UTF-8):
 *   line 1   header  {"format":"keysim-history","version":1,"startedAt"?,"run"?,"wallSkewMs"?,"host"?,"combined"?}
 *   line 2…  one HistoryEvent per operation, in completion order (seq gives the invoke order)
 *
 * `run` names the run (scenario, seed, target, tag, segment, where its fixtures came from) so that
 * the histories of one run's set-up and segments can be combined and the rest refused
 * (history-combine.ts); a combined history lists its parts in `combined`, and each of its events
 * says in `origin` which part recorded it under which number. An event answered with an
 * `x-keysim-region` header carries it in `region` (docs/consistency.md#regions); older histories have none.
 *
 * Times: `invokeMs` / `completeMs` are Unix ms from a monotonic source (performance.timeOrigin +
 * performance.now()), fractions allowed. `serviceInvokeMs` / `serviceCompleteMs`, when the target
 * can tell (the simulator's clock), bracket the service clock: the first is at most the service
 * clock when the request was sent, the second at least the service clock when the answer arrived.
 * Without them the checkers use the wall times widened by `wallSkewMs`.
 *
 * No secret is ever written: a verification records the key's id (looked up from what createKey
 * answered), never the key; the root key is never seen here. Records are built field by field
 * from a whitelist, so an unexpected field of a request body cannot slip through.
 *
 * Memory stays bounded while recording: every record is serialised at once and written through a
 * gzip stream; nothing is kept but the current ≤ 32 KiB chunk and the streams' own buffers, which
 * `record()` reports through its return value (false = above the high-water mark: await
 * `drain()`). The only per-run state is the key-id directory (one entry per created key).
 */
export * from './history-format.js';
export { KeyDirectory, historyOutcome, historyRequest } from './history-events.js';
export { validateHistoryEvent } from './history-validate.js';
export { HistoryWriter, type HistoryWriterOptions, type RecordedCall } from './history-writer.js';
export { type CheckablePrefix, HistoryFileError, type OpenedHistory, type ReadOptions, checkablePrefix, openHistory, readHistory } from './history-reader.js';
export {
  type CombineOptions,
  type CombinedHistory,
  DEFAULT_HOST_SKEW_MS,
  HistoryCombineError,
  type HistoryPart,
  combineHistories,
  partLabel,
} from './history-combine.js';
