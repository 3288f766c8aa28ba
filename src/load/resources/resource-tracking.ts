/**
 * Wrappers that note in the run's ledger (resources.ts) what the calls of a scenario created and
 * deleted, so that scenarios need not declare it: fixtures through the ServiceApi, namespaces
 * through the admin surface, and the load's own requests through their answers.
 */
import { ServiceCallError, serviceApiFrom } from '../target/index.js';
import { UnknownOperationError, operationProblem } from '../scenario/index.js';
import type { ResourceLedger } from './resources.js';
import type { ApiResponse, Operation, ServiceApi, SimulatorAdmin } from '../scenario/index.js';

export function trackingServiceApi(api: ServiceApi, ledger: ResourceLedger): ServiceApi {
  const call = async (op: Operation, body: unknown, options?: Parameters<ServiceApi['call']>[2]): Promise<ApiResponse> => {
    // Scenario files are loaded at run time: a misspelt operation is refused, never sent.
    const problem = operationProblem(op, 'the scenario');
    if (problem !== undefined) throw new UnknownOperationError(problem);
    const response = await api.call(op, body, options);
    if (options?.auth !== 'none') ledger.observe(op, body, response);
    return response;
  };
  return serviceApiFrom(call);
}

export function trackingAdmin(admin: SimulatorAdmin, ledger: ResourceLedger): SimulatorAdmin {
  return {
    ...admin,
    async createNamespace(name) {
      const id = await admin.createNamespace(name);
      ledger.created({ kind: 'namespaces', id: name });
      return id;
    },
    async deleteNamespace(name) {
      try {
        await admin.deleteNamespace(name);
      } catch (error) {
        // Already gone (410, or 404): deleted all the same.
        if (!(error instanceof ServiceCallError && (error.status === 404 || error.status === 410))) throw error;
      }
      ledger.deleted('namespaces', name);
    },
  };
}

/** Wraps a load request's per-response check so that its answer is noted in the ledger too. */
export function trackingCheck<R extends ApiResponse>(
  op: Operation,
  body: unknown,
  auth: 'root' | 'none' | undefined,
  check: ((response: R) => string | undefined) | undefined,
  ledger: ResourceLedger,
): ((response: R) => string | undefined) | undefined {
  if (auth === 'none' || !CHANGING_OPERATIONS.has(op)) return check;
  return (response) => {
    ledger.observe(op, body, response);
    return check?.(response);
  };
}

/** The operations that create or delete a resource the ledger counts. */
const CHANGING_OPERATIONS: ReadonlySet<Operation> = new Set<Operation>([
  'apis.createApi',
  'keys.createKey',
  'keys.deleteKey',
  'identities.createIdentity',
  'identities.deleteIdentity',
  'ratelimit.setOverride',
  'ratelimit.deleteOverride',
]);
