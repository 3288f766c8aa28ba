export { createSimulator, nodeSha256, type Simulator, type SimulatorOptions } from './simulator.js';
export { createSimulatorServer, type ServerOptions, type SimulatorServer } from './server.js';
export { PROBLEMS, DEFAULT_ERRORS_URL, errorTypeUrl } from './problems.js';
export { ROUTES } from './routes.js';
export { parseInstant, viewClock } from './admin.js';
export type { Route, RouteContext, Reply, Pagination } from './route.js';
export { FaultInjector, FAULT_KEYS, checkFaultsConfig, describeFaults, parseFaultFlags, type FaultDecision, type FaultsConfig, type FaultsView, type LatencySpec } from './faults.js';
export { OPERATIONS, operationName } from './operations.js';
