/**
 * A key's refill settings (credits.ts), in a file of their own so that the key owners
 * (key-owners.ts), which hold them, and the state (state.ts), which holds the owners, both take
 * the type from here without importing each other.
 */
import type { RefillInterval } from './calendar.js';

export interface RefillConfig {
  interval: RefillInterval;
  /** The balance each refill sets. */
  amount: number;
  /** Monthly only: day of the month, 1..31. Null for daily refills. */
  refillDay: number | null;
}
