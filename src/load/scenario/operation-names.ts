/**
 * Operation names a scenario gives, checked against the operations keysim knows (scenario.ts's
 * OPERATIONS) before anything is sent: scenario files are loaded at run time, where the type
 * checker cannot catch a misspelt `keys.verifyKye`, and a request to a route the service does not
 * have answers 404 on every call. The message names the nearest valid operation.
 */
import { editDistance } from './edit-distance.js';
import { OPERATIONS, type Operation } from './scenario.js';

const KNOWN: ReadonlySet<string> = new Set(OPERATIONS);

/** Whether `op` is one of the operations keysim can send. */
export function isOperation(op: unknown): op is Operation {
  return typeof op === 'string' && KNOWN.has(op);
}

/** The valid operation closest to `op` (case ignored), for "did you mean …?". */
export function nearestOperation(op: string): Operation {
  let best: Operation = OPERATIONS[0];
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of OPERATIONS) {
    const d = editDistance(op.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** What is wrong with an operation name, with the nearest valid one; undefined when it is valid. */
export function operationProblem(op: unknown, where: string): string | undefined {
  if (isOperation(op)) return undefined;
  if (typeof op !== 'string') return `${where} names no operation (op is ${op === null ? 'null' : typeof op}); the operations are ${OPERATIONS.join(', ')}`;
  return `${where} calls the unknown operation "${op}" (did you mean ${nearestOperation(op)}?); the operations are ${OPERATIONS.join(', ')}`;
}

/** A call of an operation keysim does not know: refused before it is sent. */
export class UnknownOperationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnknownOperationError';
  }
}
