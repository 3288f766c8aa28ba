/**
 * A FaultInjector that says when its configuration changed. With `--workers N` each HTTP worker
 * keeps a local "transport faults on" flag (checked on every request without asking the owner);
 * the engine owner uses this to tell the workers whenever `set`, `clear` or a reset changes it.
 */
import { FaultInjector, type FaultsConfig, type FaultsView } from './faults.js';
import type { Result } from '../engine/index.js';

export class ObservedFaultInjector extends FaultInjector {
  /** Called after every change (set, clear); none by default. */
  onChange: (() => void) | undefined;

  override set(config: FaultsConfig, at = 'body'): Result<FaultsView> {
    const set = super.set(config, at);
    if (set.ok) this.onChange?.();
    return set;
  }

  override clear(): FaultsView {
    const view = super.clear();
    this.onChange?.();
    return view;
  }
}
