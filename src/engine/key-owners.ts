/**
 * The owner of a key: its API id, that API's workspace id and the key's refill settings, one
 * frozen object shared by the API's keys of that refill (a pointer per key instead of three, and
 * one copy of each id string however the keys were made; see key-record.ts). Refill settings are
 * interned (credits.ts), so an API's keys have a handful of owners: one without refill and one
 * per plan in use.
 *
 * Owners are shared through a `KeyOwners` that belongs to whoever builds the keys, never to the
 * module: the state has one (state.ts), so a reset or a restore, which replace the state, drop its
 * owners with it, and no simulator shares an owner with another; a snapshot being read has its
 * own (snapshot-builder.ts), garbage once the read ends. A state's holds one family of owners
 * per API that has keys, and APIs are never deleted: it is bounded by the state's APIs, each
 * family by MAX_SHARED_REFILLS.
 */
import { flatString } from './flat-string.js';
import type { RefillConfig } from './refill-config.js';

/**
 * Refill settings an API's owners are shared for; a key with yet another one gets an owner of
 * its own (refill settings are interned up to a bound too, credits.ts).
 */
const MAX_SHARED_REFILLS = 1_000;

export interface KeyOwner {
  readonly apiId: string;
  readonly workspaceId: string;
  /** The refill of the keys that share this owner (interned, frozen: never changed in place). */
  readonly refill: RefillConfig | null;
  /** The owners of the same API and workspace, one per refill: where a key finds its next one. */
  readonly family: OwnerFamily;
}

/** The owners of one API and workspace, by refill settings. */
export class OwnerFamily {
  readonly apiId: string;
  readonly workspaceId: string;
  readonly #byRefill = new Map<RefillConfig | null, KeyOwner>();

  constructor(apiId: string, workspaceId: string) {
    this.apiId = flatString(apiId);
    this.workspaceId = flatString(workspaceId);
  }

  /** The shared owner of this API's keys with `refill`. */
  withRefill(refill: RefillConfig | null): KeyOwner {
    const known = this.#byRefill.get(refill);
    if (known !== undefined) return known;
    const owner: KeyOwner = Object.freeze({ apiId: this.apiId, workspaceId: this.workspaceId, refill, family: this });
    if (this.#byRefill.size < MAX_SHARED_REFILLS) this.#byRefill.set(refill, owner);
    return owner;
  }
}

/** A new owner in a family of its own, shared with nothing (its id strings flat copies, see flat-string.ts). */
export function newKeyOwner(apiId: string, workspaceId: string, refill: RefillConfig | null = null): KeyOwner {
  return new OwnerFamily(apiId, workspaceId).withRefill(refill);
}

/** Owner families by API id. */
export class KeyOwners {
  readonly #byApi = new Map<string, OwnerFamily>();

  /** The shared owner of the keys of `apiId` in `workspaceId` with `refill`. */
  of(apiId: string, workspaceId: string, refill: RefillConfig | null = null): KeyOwner {
    const known = this.#byApi.get(apiId);
    if (known !== undefined && known.workspaceId === workspaceId) return known.withRefill(refill);
    const family = new OwnerFamily(apiId, workspaceId);
    // An API id is in one workspace; a snapshot naming it in another (refused by its checks) gets
    // a family of its own, and the first one stays the shared one.
    if (known === undefined) this.#byApi.set(family.apiId, family);
    return family.withRefill(refill);
  }

  /**
   * Makes the family of `owner` the shared one of its API unless there is one already (a restored
   * state takes the owners its keys were built with, so keys created after the restore share them).
   */
  adopt(owner: KeyOwner): void {
    if (!this.#byApi.has(owner.apiId)) this.#byApi.set(owner.apiId, owner.family);
  }

  /** How many families are shared (one per API that has had keys). */
  get size(): number {
    return this.#byApi.size;
  }
}
