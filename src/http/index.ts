export { createSimulator, nodeSha256, nodeSha256Digest, type Simulator, type SimulatorOptions, type SimulatorProfile } from './simulator.js';
export { parseStoreUrl, type StoreUrl } from './store/store-url.js';
export { DEFAULT_STORE_PREFIX } from './store/open-store.js';
export { REGION_HEADER } from './regions.js';
export { authorizeOperator, randomRootKey, restoreKeepingOperator } from './operator.js';
export { allowedHostEntry, allowedHostsFromEnv, exposureWarning, hostAllowed, isLoopbackAddress, loopbackHosts } from './host-check.js';
export { createSimulatorServer, type SimulatorServer } from './server.js';
export { DEFAULT_KEEP_ALIVE_TIMEOUT_MS, MAX_KEEP_ALIVE_TIMEOUT_MS, type ServerOptions } from './server-options.js';
export { PROBLEMS, DEFAULT_ERRORS_URL, errorTypeUrl } from './problems.js';
export { ROUTES } from './routes.js';
export { viewClock } from './admin.js';
export { parseInstant } from './instant.js';
export type { Route, RouteContext, Reply, Pagination } from './route.js';
export {
  FaultInjector,
  FAULT_KEYS,
  checkFaultsConfig,
  describeFaults,
  parseFaultFlags,
  type FaultDecision,
  type FaultsConfig,
  type FaultsView,
  type LatencySpec,
} from './faults.js';
export { OPERATIONS, operationName } from './operations.js';
export { Journal, DEFAULT_JOURNAL_CAPACITY, MAX_JOURNAL_TAKE, type JournalEntry, type JournalTake } from './journal.js';
export { MAX_WORKERS } from './cluster.js';
export { JournalReplayer, type JournalStart, type ReplayedAnswer } from './replay.js';
export { RESTORE_STREAM_MAX_BODY_BYTES } from './restore-body.js';
export { readSnapshotFile, type SnapshotFileRead } from './snapshot-file.js';
