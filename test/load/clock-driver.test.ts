/**
 * The clock driver against a real simulator (in this process, port 0): the sweep is monotone,
 * one set at a time, ends exactly at toMs, and brackets every request made during it —
 * lowerMs read at send ≤ the service time it executed at ≤ upperMs read at completion. The
 * execution time is read back from what the service recorded (a key's createdAt).
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { type Simulator, createSimulator } from '../../src/http/simulator.js';
import { ClockDriver, type ClockDriverOptions, ServiceClockError } from '../../src/load/time/clock-driver.js';
import type { SimulatorAdmin } from '../../src/load/scenario/scenario.js';
import { type HttpJsonClient, httpJsonClient, serviceApi, simulatorAdmin } from '../../src/load/target/service-api.js';

const START_MS = Date.parse('2027-01-15T12:00:00Z');
const FROM_MS = Date.parse('2027-01-31T23:00:00Z');
const TO_MS = Date.parse('2027-02-01T01:00:00Z');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `condition` holds: whatever the machine's pace, within a bound far above any pace. */
async function until(condition: () => boolean, what: string, boundMs = 20_000): Promise<void> {
  const deadline = performance.now() + boundMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`gave up waiting for ${what} after ${boundMs} ms`);
    await sleep(2);
  }
}

/** The admin surface, with every clock set recorded and the sets in flight counted. */
function trackedAdmin(admin: SimulatorAdmin) {
  const sets: number[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  return {
    sets,
    maxInFlight: () => maxInFlight,
    admin: {
      clockNow: () => admin.clockNow(),
      clockMode: () => admin.clockMode(),
      async clockSet(to: number | string): Promise<number> {
        sets.push(Number(to));
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        try {
          return await admin.clockSet(to);
        } finally {
          inFlight--;
        }
      },
    },
  };
}

describe('ClockDriver on the simulator', () => {
  let sim: Simulator;
  let client: HttpJsonClient;
  let admin: SimulatorAdmin;

  beforeAll(async () => {
    sim = await createSimulator({ clock: 'manual', startMs: START_MS });
    client = httpJsonClient({ url: sim.url, rootKey: sim.rootKey });
    admin = simulatorAdmin(client);
  });

  afterAll(async () => {
    await client?.close();
    await sim?.close();
  });

  // Every sweep is stopped after its test, whatever happened in it.
  const started: ClockDriver[] = [];
  const start = async (options: ClockDriverOptions) => {
    const driver = await ClockDriver.start(options);
    started.push(driver);
    return driver;
  };

  beforeEach(() => {
    sim.reset();
  });

  afterEach(async () => {
    await Promise.all(started.splice(0).map((d) => d.cancel()));
  });

  test('sweeps monotonically, one set in flight, and ends exactly at toMs; the bounds hold the clock throughout', async () => {
    const tracked = trackedAdmin(admin);
    const driver = await start({ admin: tracked.admin, fromMs: FROM_MS, toMs: TO_MS, durationMs: 400 });
    expect(driver.lowerMs).toBe(FROM_MS);
    expect(sim.clock.now()).toBeLessThanOrEqual(driver.upperMs);
    const seen: number[] = [];
    const endAt = performance.now() + 600;
    while (performance.now() < endAt) {
      const nowMs = sim.clock.now();
      // This process also serves the simulator: every moment between two events is a sample.
      expect(driver.lowerMs).toBeLessThanOrEqual(nowMs);
      expect(nowMs).toBeLessThanOrEqual(driver.upperMs);
      seen.push(nowMs);
      await sleep(3);
    }
    expect(await driver.finish()).toBe(TO_MS);
    expect(sim.clock.now()).toBe(TO_MS);
    expect([driver.lowerMs, driver.upperMs]).toEqual([TO_MS, TO_MS]);

    expect(tracked.maxInFlight()).toBe(1);
    expect(tracked.sets[0]).toBe(FROM_MS);
    expect(tracked.sets.at(-1)).toBe(TO_MS);
    for (let i = 1; i < tracked.sets.length; i++) expect(tracked.sets[i]).toBeGreaterThan(tracked.sets[i - 1] as number);
    // How many sets (about one every 5–10 ms) is a matter of pace, not asserted. That
    // the sweep passes through the values between its ends is pinned on an injected wall clock below.
    expect(tracked.sets.length).toBeGreaterThanOrEqual(1);
    expect(driver.sets).toBe(tracked.sets.length);
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThanOrEqual(seen[i - 1] as number);
  });

  test('requests made during the sweep execute between lowerMs at their send and upperMs at their answer', async () => {
    const api = serviceApi(client);
    const { apiId } = await api.data<{ apiId: string }>('apis.createApi', { name: 'clock-driver' });
    // The sweep's wall clock is stepped by the test, so that the requests span it whatever the
    // machine's pace (on real time, a busy machine answered them all in a few clock steps).
    let wallMs = 0;
    const driver = await start({ admin, fromMs: FROM_MS, toMs: TO_MS, durationMs: 1_000, now: () => wallMs });
    const made: Array<{ keyId: string; lowerMs: number; upperMs: number }> = [];
    const make = async () => {
      const lowerMs = driver.lowerMs;
      const { keyId } = await api.data<{ keyId: string }>('keys.createKey', { apiId });
      made.push({ keyId, lowerMs, upperMs: driver.upperMs });
    };
    for (let step = 0; step <= 20; step++) {
      wallMs = step * 50;
      // Four at once while the driver moves the clock towards the step's target…
      await Promise.all([make(), make(), make(), make()]);
      // …and once it got there.
      const target = driver.targetAt(wallMs);
      await until(() => driver.lowerMs === target, `the clock at ${new Date(target).toISOString()}`);
      await make();
    }
    await driver.finish();
    expect(made.length).toBe(21 * 5);
    const executedAt: number[] = [];
    for (const m of made) {
      const { createdAt } = await api.data<{ createdAt: number }>('keys.getKey', { keyId: m.keyId });
      executedAt.push(createdAt);
      expect(createdAt, `key made between ${m.lowerMs} and ${m.upperMs}`).toBeGreaterThanOrEqual(m.lowerMs);
      expect(createdAt).toBeLessThanOrEqual(m.upperMs);
    }
    // Made under a moving clock: the keys span the sweep.
    expect(new Set(executedAt).size).toBeGreaterThan(10);
    expect(Math.min(...executedAt)).toBeLessThan(Date.parse('2027-02-01T00:00:00Z'));
    expect(Math.max(...executedAt)).toBeGreaterThan(Date.parse('2027-02-01T00:00:00Z'));
  });

  test('the target is computed from the wall-time fraction of the planned duration', async () => {
    let wallMs = 1_000;
    const driver = await start({ admin, fromMs: FROM_MS, toMs: TO_MS, durationMs: 1_000, now: () => wallMs });
    expect(driver.wallStartMs).toBe(1_000);
    expect(driver.targetAt(1_000)).toBe(FROM_MS);
    expect(driver.targetAt(1_250)).toBe(FROM_MS + 1_800_000);
    expect(driver.targetAt(1_500)).toBe(Date.parse('2027-02-01T00:00:00Z'));
    expect(driver.targetAt(5_000)).toBe(TO_MS);
    wallMs = 1_500;
    // The driver got there (its set acknowledged), and went no further: the wall clock stands.
    await until(() => driver.lowerMs === Date.parse('2027-02-01T00:00:00Z'), 'the clock at the midpoint');
    await sleep(30);
    expect(sim.clock.now()).toBe(Date.parse('2027-02-01T00:00:00Z'));
    await driver.finish();
    expect(sim.clock.now()).toBe(TO_MS);
  });

  test('fromMs at the clock needs no set; a zero-length range ends at once', async () => {
    const tracked = trackedAdmin(admin);
    const driver = await start({ admin: tracked.admin, fromMs: START_MS, toMs: START_MS, durationMs: 100 });
    expect(await driver.finish()).toBe(START_MS);
    expect(tracked.sets).toEqual([]);
  });

  test('cancel stops the sweep where it is', async () => {
    const driver = await start({ admin, fromMs: FROM_MS, toMs: TO_MS, durationMs: 60_000 });
    await sleep(50);
    await driver.cancel();
    const stoppedAt = sim.clock.now();
    expect(stoppedAt).toBeGreaterThanOrEqual(FROM_MS);
    expect(stoppedAt).toBeLessThan(TO_MS);
    await sleep(30);
    expect(sim.clock.now()).toBe(stoppedAt);
    expect(driver.upperMs).toBe(stoppedAt);
  });

  test('a fromMs the clock has passed, a live target and a reversed range are refused with a clear message', async () => {
    await admin.clockSet(FROM_MS + 1);
    await expect(start({ admin, fromMs: FROM_MS, toMs: TO_MS, durationMs: 100 })).rejects.toThrow(
      /serviceClock\.fromMs 2027-01-31T23:00:00\.000Z is earlier than the service clock, already at 2027-01-31T23:00:00\.001Z: the clock never goes back/,
    );
    await expect(start({ admin: undefined, fromMs: FROM_MS, toMs: TO_MS, durationMs: 100 })).rejects.toThrow(
      /needs control of the service clock.*live deployment/,
    );
    await expect(start({ admin, fromMs: TO_MS, toMs: FROM_MS, durationMs: 100 })).rejects.toBeInstanceOf(ServiceClockError);
    expect(sim.clock.now()).toBe(FROM_MS + 1);
  });

  test('a running (system) clock is refused: the bounds would not hold on it', async () => {
    const running = await createSimulator({ clock: 'system', startMs: START_MS });
    const runningClient = httpJsonClient({ url: running.url, rootKey: running.rootKey });
    try {
      await expect(start({ admin: simulatorAdmin(runningClient), fromMs: FROM_MS, toMs: TO_MS, durationMs: 100 })).rejects.toThrow(
        /needs a manual \(frozen\) simulator clock; this simulator runs on the system clock/,
      );
      expect(await simulatorAdmin(runningClient).clockMode()).toBe('system');
    } finally {
      await runningClient.close();
      await running.close();
    }
  });

  test('a set refused during the sweep stops it, and finish() says so', async () => {
    const driver = await start({ admin, fromMs: FROM_MS, toMs: TO_MS, durationMs: 300 });
    // Someone else moves the clock past the sweep: the driver's next set would go backwards.
    sim.clock.set(TO_MS + 86_400_000);
    await sleep(50);
    await expect(driver.finish()).rejects.toThrow(
      /moving the service clock from 2027-01-31T23:00:00\.000Z to 2027-02-01T01:00:00\.000Z failed at .*only moves forward/,
    );
  });
});
