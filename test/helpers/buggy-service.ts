/**
 * A small, independent implementation of the service endpoints the live scenarios use (APIs,
 * keys with credits, refill and rate limits, verification, top-ups, identities, ratelimit.limit),
 * on real HTTP (127.0.0.1, port 0), written apart from keysim's engine so that it can carry the
 * bugs a real deployment shows. Its clock is the real clock plus a settable offset (so that a UTC
 * midnight can be seconds away in a test), and its `Date` header tells that clock, as a
 * deployment's does. It creates rate-limit namespaces on first use, as production does.
 *
 * `bug` switches on one realistic bug; undefined is a correct service:
 * - rateLimitedSpends: a verification refused by a rate limit still spends its credits;
 * - fixedWindow: the rate limiter counts fixed windows (the previous window is forgotten at an edge);
 * - localMidnight: daily and monthly refills happen at midnight UTC+2 (22:00 UTC) instead of UTC;
 * - skipMonth: the next monthly refill is computed a month too late (this month's day is skipped);
 * - offByOne: a limit admits one request more than it allows;
 * - lostTopUp: every third credit increment is answered as applied but lost (the effect of a
 *   read-modify-write race with a verification, made deterministic so that a test is reliable).
 */
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ServiceBug = 'rateLimitedSpends' | 'fixedWindow' | 'localMidnight' | 'skipMonth' | 'offByOne' | 'lostTopUp';
export const SERVICE_BUGS: readonly ServiceBug[] = ['rateLimitedSpends', 'fixedWindow', 'localMidnight', 'skipMonth', 'offByOne', 'lostTopUp'];

export interface TestService {
  url: string;
  rootKey: string;
  /** The service clock, Unix ms (real time plus the offset). */
  nowMs(): number;
  setClockOffsetMs(offsetMs: number): void;
  /** Keys and identities it holds (not deleted). */
  held(): { keys: number; identities: number };
  close(): Promise<void>;
}

const DAY_MS = 86_400_000;
const LOCAL_OFFSET_MS = 2 * 3_600_000;

interface Limit {
  id: string;
  name: string;
  limit: number;
  duration: number;
  autoApply: boolean;
}
interface Refill {
  interval: 'daily' | 'monthly';
  amount: number;
  refillDay?: number;
}
interface Key {
  keyId: string;
  key: string;
  createdAt: number;
  credits: number | null;
  refill: Refill | null;
  /** Refills are settled up to this service instant. */
  settledMs: number;
  identityId: string | undefined;
  ratelimits: Limit[];
}
interface Identity {
  id: string;
  externalId: string;
  meta: Record<string, unknown>;
  ratelimits: Limit[];
}
interface Window {
  window: number;
  current: number;
  previous: number;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly kind: string,
    message: string,
  ) {
    super(message);
  }
}

const TITLES: Record<number, string> = { 400: 'Bad Request', 401: 'Unauthorized', 404: 'Not Found', 409: 'Conflicting Resource' };

function utcMonthInstant(year: number, month: number, day: number): number {
  const last = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return Date.UTC(year, month, Math.min(day, last));
}

export interface TestServiceOptions {
  bug?: ServiceBug;
  /** Service clock − real clock, ms. */
  clockOffsetMs?: number;
  /** Refills land this long after their boundary, as a deployment's batch job does (not a bug within a tolerance). */
  refillDelayMs?: number;
}

export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const bug = options.bug;
  let offsetMs = options.clockOffsetMs ?? 0;
  const now = () => Date.now() + offsetMs;
  const rootKey = `root_test_${Math.random().toString(36).slice(2)}`;
  let nextId = 1;
  const newId = (prefix: string) => `${prefix}_${(nextId++).toString(36).padStart(6, '0')}`;
  const keys = new Map<string, Key>();
  const keysByKey = new Map<string, Key>();
  const identities = new Map<string, Identity>();
  const windows = new Map<string, Window>();
  let increments = 0;

  // Refill boundaries: the next one strictly after t (the local-midnight bug shifts them to 22:00 UTC).
  const shift = bug === 'localMidnight' ? LOCAL_OFFSET_MS : 0;
  function nextBoundary(t: number, refill: Refill): number {
    const local = t + shift;
    if (refill.interval === 'daily') return (Math.floor(local / DAY_MS) + 1) * DAY_MS - shift;
    const d = new Date(local);
    const day = refill.refillDay ?? 1;
    const thisMonth = utcMonthInstant(d.getUTCFullYear(), d.getUTCMonth(), day);
    const next = utcMonthInstant(d.getUTCFullYear(), d.getUTCMonth() + 1, day);
    return (bug === 'skipMonth' || thisMonth <= local ? next : thisMonth) - shift;
  }
  // A batch job refills `refillDelayMs` after the boundary (0: at the boundary).
  const refillDelayMs = options.refillDelayMs ?? 0;
  function settle(key: Key, t: number): void {
    const horizon = t - refillDelayMs;
    if (key.refill !== null && nextBoundary(key.settledMs, key.refill) <= horizon) key.credits = key.refill.amount;
    key.settledMs = Math.max(key.settledMs, horizon);
  }

  /** The documented sliding window (or the bugs'); commits only when `commit`. */
  function windowDecision(counter: string, limit: number, duration: number, cost: number, t: number) {
    const window = Math.floor(t / duration);
    const stored = windows.get(counter);
    let current = 0;
    let previous = 0;
    if (stored !== undefined && stored.window === window) ({ current, previous } = stored);
    else if (stored !== undefined && stored.window === window - 1) previous = stored.current;
    const elapsed = (t - window * duration) / duration;
    const used = current + (bug === 'fixedWindow' ? 0 : Math.floor(previous * (1 - elapsed)));
    const allowed = bug === 'offByOne' ? limit + 1 : limit;
    const success = cost === 0 || used + cost <= allowed;
    return {
      success,
      reset: (window + 1) * duration,
      remaining: success ? Math.max(0, limit - (used + cost)) : 0,
      commit: () => windows.set(counter, { window, current: current + cost, previous }),
    };
  }

  const limitsIn = (value: unknown): Limit[] =>
    (Array.isArray(value) ? value : []).map((l: Record<string, unknown>) => ({
      id: newId('rl'),
      name: String(l.name),
      limit: Number(l.limit),
      duration: Number(l.duration),
      autoApply: l.autoApply === true,
    }));
  const findKey = (keyId: unknown): Key => {
    const key = typeof keyId === 'string' ? keys.get(keyId) : undefined;
    if (key === undefined) throw new HttpError(404, 'data/key_not_found', `key ${String(keyId)} not found`);
    return key;
  };
  const findIdentity = (ref: unknown): Identity => {
    const found = [...identities.values()].find((i) => i.id === ref || i.externalId === ref);
    if (found === undefined) throw new HttpError(404, 'data/identity_not_found', `identity ${String(ref)} not found`);
    return found;
  };
  const createIdentity = (externalId: string, meta: unknown, ratelimits: unknown): Identity => {
    if ([...identities.values()].some((i) => i.externalId === externalId))
      throw new HttpError(409, 'data/identity_already_exists', `identity ${externalId} exists`);
    const identity: Identity = { id: newId('id'), externalId, meta: (meta as Record<string, unknown>) ?? {}, ratelimits: limitsIn(ratelimits) };
    identities.set(identity.id, identity);
    return identity;
  };
  const creditsOut = (key: Key) => (key.credits === null ? undefined : key.credits);

  const handlers: Record<string, (body: Record<string, unknown>, t: number) => unknown> = {
    'apis.createApi': () => ({ apiId: newId('api') }),
    'keys.createKey': (b, t) => {
      const credits = b.credits as { remaining?: number; refill?: Refill } | undefined;
      let identityId: string | undefined;
      if (typeof b.externalId === 'string') {
        identityId = ([...identities.values()].find((i) => i.externalId === b.externalId) ?? createIdentity(b.externalId, {}, [])).id;
      }
      const key: Key = {
        keyId: newId('key'),
        key: `tk_${Math.random().toString(36).slice(2)}${(nextId++).toString(36)}`,
        createdAt: t,
        credits: credits?.remaining ?? null,
        refill: credits?.refill ?? null,
        settledMs: t,
        identityId,
        ratelimits: limitsIn(b.ratelimits),
      };
      keys.set(key.keyId, key);
      keysByKey.set(key.key, key);
      return { keyId: key.keyId, key: key.key };
    },
    'keys.getKey': (b, t) => {
      const key = findKey(b.keyId);
      settle(key, t);
      return {
        keyId: key.keyId,
        enabled: true,
        createdAt: key.createdAt,
        ...(key.credits === null ? {} : { credits: { remaining: key.credits, ...(key.refill === null ? {} : { refill: key.refill }) } }),
      };
    },
    'keys.deleteKey': (b) => {
      const key = findKey(b.keyId);
      keys.delete(key.keyId);
      keysByKey.delete(key.key);
      return {};
    },
    'keys.updateCredits': (b, t) => {
      const key = findKey(b.keyId);
      settle(key, t);
      const value = Number(b.value);
      if (b.operation === 'set') key.credits = value;
      else if (key.credits === null) throw new HttpError(400, 'application/invalid_input', 'the key has no usage limit');
      else if (b.operation === 'decrement') key.credits = Math.max(0, key.credits - value);
      else {
        increments++;
        // The lost top-up answers with the balance it would have made.
        if (bug === 'lostTopUp' && increments % 3 === 0) return { remaining: key.credits + value };
        key.credits += value;
      }
      return { remaining: key.credits };
    },
    'keys.verifyKey': (b, t) => {
      const key = typeof b.key === 'string' ? keysByKey.get(b.key) : undefined;
      if (key === undefined) return { valid: false, code: 'NOT_FOUND' };
      settle(key, t);
      const cost = (b.credits as { cost?: number } | undefined)?.cost ?? 1;
      const identity = key.identityId === undefined ? undefined : identities.get(key.identityId);
      const own = key.ratelimits.filter((l) => l.autoApply);
      const inherited = (identity?.ratelimits ?? []).filter((l) => l.autoApply && !own.some((o) => o.name === l.name));
      const decisions = [...own, ...inherited].map((l) => ({ l, d: windowDecision(l.id, l.limit, l.duration, 1, t) }));
      const limited = decisions.some((x) => !x.d.success);
      let code: string;
      if (limited) {
        code = 'RATE_LIMITED';
        if (bug === 'rateLimitedSpends' && key.credits !== null && key.credits >= cost) key.credits -= cost;
      } else {
        for (const x of decisions) x.d.commit();
        if (key.credits !== null && cost > key.credits) code = 'USAGE_EXCEEDED';
        else {
          if (key.credits !== null) key.credits -= cost;
          code = 'VALID';
        }
      }
      return {
        valid: code === 'VALID',
        code,
        keyId: key.keyId,
        enabled: true,
        ...(creditsOut(key) === undefined ? {} : { credits: key.credits }),
        ...(identity === undefined ? {} : { identity: { id: identity.id, externalId: identity.externalId } }),
        ...(decisions.length === 0
          ? {}
          : {
              ratelimits: decisions.map(({ l, d }) => ({
                id: l.id,
                name: l.name,
                limit: l.limit,
                duration: l.duration,
                reset: d.reset,
                remaining: limited ? (d.success ? d.remaining + 1 : 0) : d.remaining,
                exceeded: !d.success,
                autoApply: l.autoApply,
              })),
            }),
      };
    },
    'identities.createIdentity': (b) => {
      if (typeof b.externalId !== 'string' || b.externalId === '') throw new HttpError(400, 'application/invalid_input', 'externalId is required');
      return { identityId: createIdentity(b.externalId, b.meta, b.ratelimits).id };
    },
    'identities.getIdentity': (b) => {
      const i = findIdentity(b.identity);
      return { id: i.id, externalId: i.externalId, meta: i.meta, ratelimits: i.ratelimits };
    },
    'identities.deleteIdentity': (b) => {
      identities.delete(findIdentity(b.identity).id);
      return undefined;
    },
    'identities.listIdentities': () => [],
    'ratelimit.limit': (b, t) => {
      const limit = Number(b.limit);
      const duration = Number(b.duration);
      const cost = typeof b.cost === 'number' ? b.cost : 1;
      const d = windowDecision(`${String(b.namespace)}\u0000${String(b.identifier)}\u0000${duration}`, limit, duration, cost, t);
      if (d.success && cost > 0) d.commit();
      return { limit, remaining: d.remaining, reset: d.reset, success: d.success };
    },
  };

  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json', date: new Date(now()).toUTCString() });
    res.end(JSON.stringify(body));
  };
  const handle = (req: IncomingMessage, text: string, res: ServerResponse) => {
    const requestId = newId('req');
    try {
      const op = /^\/v2\/([a-zA-Z]+\.[a-zA-Z]+)$/.exec(req.url ?? '')?.[1];
      const handler = op === undefined ? undefined : handlers[op];
      if (req.method !== 'POST' || handler === undefined) throw new HttpError(404, 'data/not_found', `no route ${req.method} ${req.url}`);
      if (op !== 'keys.verifyKey' && req.headers.authorization !== `Bearer ${rootKey}`)
        throw new HttpError(401, 'authentication/key_not_found', 'root key refused');
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        throw new HttpError(400, 'application/invalid_input', 'the body is not JSON');
      }
      if (typeof body !== 'object' || body === null) throw new HttpError(400, 'application/invalid_input', 'the body is not an object');
      const data = handler(body as Record<string, unknown>, now());
      if (op === 'identities.listIdentities') send(res, 200, { meta: { requestId }, data, pagination: { hasMore: false } });
      else send(res, 200, data === undefined ? { meta: { requestId } } : { meta: { requestId }, data });
    } catch (error) {
      const e = error instanceof HttpError ? error : new HttpError(500, 'application/unexpected_error', String(error));
      send(res, e.status, {
        meta: { requestId },
        error: {
          title: TITLES[e.status] ?? 'Error',
          detail: e.message,
          status: e.status,
          type: `https://errors.test/service/${e.kind}`,
          ...(e.status === 400 ? { errors: [] } : {}),
        },
      });
    }
  };
  const server = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (text += chunk));
    req.on('end', () => handle(req, text, res));
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    rootKey,
    nowMs: now,
    setClockOffsetMs: (ms) => {
      offsetMs = ms;
    },
    held: () => ({ keys: keys.size, identities: identities.size }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
