/**
 * The owner of a key: its API id and that API's workspace id, one frozen object shared by the
 * API's keys (a pointer per key instead of two, and one copy of each id string however the keys
 * were made; see key-record.ts).
 *
 * Owners are shared through a `KeyOwners` that belongs to whoever builds the keys, never to the
 * module: the state has one (state.ts), so a reset or a restore, which replace the state, drop its
 * owners with it, and no simulator shares an owner with another; a snapshot being read has its
 * own (snapshot-builder.ts), garbage once the read ends. A state's holds one owner per API that
 * has keys, and APIs are never deleted: it is bounded by the state's APIs.
 */
import { flatString } from './flat-string.js';

export interface KeyOwner {
  readonly apiId: string;
  readonly workspaceId: string;
}

/** A new owner, shared with nothing (its id strings flat copies, see flat-string.ts). */
export function newKeyOwner(apiId: string, workspaceId: string): KeyOwner {
  return Object.freeze({ apiId: flatString(apiId), workspaceId: flatString(workspaceId) });
}

/** Owners by API id. */
export class KeyOwners {
  readonly #byApi = new Map<string, KeyOwner>();

  /** The shared owner of the keys of `apiId` in `workspaceId`. */
  of(apiId: string, workspaceId: string): KeyOwner {
    const known = this.#byApi.get(apiId);
    if (known !== undefined && known.workspaceId === workspaceId) return known;
    const owner = newKeyOwner(apiId, workspaceId);
    // An API id is in one workspace; a snapshot naming it in another (refused by its checks) gets
    // an owner of its own, and the first one stays the shared one.
    if (known === undefined) this.#byApi.set(owner.apiId, owner);
    return owner;
  }

  /**
   * Makes `owner` the shared one of its API unless there is one already (a restored state takes
   * the owners its keys were built with, so keys created after the restore share them).
   */
  adopt(owner: KeyOwner): void {
    if (!this.#byApi.has(owner.apiId)) this.#byApi.set(owner.apiId, owner);
  }

  /** How many owners are shared (one per API that has had keys). */
  get size(): number {
    return this.#byApi.size;
  }
}
