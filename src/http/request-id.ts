/**
 * Request ids `req_<random per server><counter>`: unique per server run and unguessable across
 * runs, at the cost of a counter increment (a UUID per request was a measurable share of the
 * simulator's CPU per request).
 */
import { randomBytes } from 'node:crypto';

export function requestIdSource(): () => string {
  const prefix = `req_${randomBytes(8).toString('hex')}`;
  let counter = 0;
  return () => `${prefix}${(counter++).toString(36).padStart(6, '0')}`;
}
