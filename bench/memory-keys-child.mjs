// Child of bench/memory-keys.ts (see there). Plain JavaScript on the compiled engine (dist/), so
// that the process holds what a `keysim serve` process holds and no TypeScript loader.
// Usage: node --expose-gc --max-old-space-size=<MB> bench/memory-keys-child.mjs <keys>
import { hash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { Engine, ManualClock } from '../dist/src/engine/index.js';

const count = Number(process.argv[2]);
if (!Number.isSafeInteger(count) || count < 1) throw new Error(`expected a key count, got ${process.argv[2]}`);
const START_MS = Date.UTC(2027, 0, 15, 12);
const sha256 = (text) => hash('sha256', text, 'base64url');

function collect() {
  if (typeof globalThis.gc !== 'function') throw new Error('the memory benchmark needs node --expose-gc');
  for (let i = 0; i < 3; i++) globalThis.gc();
}
function usage() {
  collect();
  const { rss, heapUsed } = process.memoryUsage();
  return { rss, heapUsed };
}

/**
 * Memory once the process has been idle, as a server's is between bursts: V8 releases freed
 * pages and compacts fragmented ones in the background and in the memory-reducing collections
 * it starts when the program goes idle (several seconds after the last allocation). Readings
 * every 5 s until RSS stops falling (under 1% between two) or 60 s have passed.
 */
async function settledUsage() {
  let last = usage();
  for (let waited = 0; waited < 60_000; waited += 5000) {
    await new Promise((resolve) => setTimeout(resolve, 5000));
    const now = usage();
    const settled = now.rss > last.rss * 0.99;
    last = now;
    if (settled && waited >= 25_000) break;
  }
  return last;
}
const seconds = (start) => Number(process.hrtime.bigint() - start) / 1e9;
const progress = (message) => process.stderr.write(`  … memory: ${message}\n`);

/** Linux: resets the peak resident size (VmHWM) so that the next reading is the peak of one phase. */
function resetPeak() {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
    return true;
  } catch {
    return false;
  }
}
function peakRss() {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    if (match) return Number(match[1]) * 1024;
  } catch {}
  return process.resourceUsage().maxRSS * 1024;
}

const before = usage();
let engine = new Engine({ clock: new ManualClock(START_MS), sha256 });
const { rootKey } = engine.admin.createWorkspace({ name: 'bench' }).value;
const { apiId } = engine.apis.createApi(rootKey, { name: 'bench-api' }).value;
let start = process.hrtime.bigint();
for (let i = 0; i < count; i++) {
  // The plaintext is dropped, as a client would keep it, not the engine.
  const created = engine.keys.createKey(rootKey, { apiId, credits: { remaining: 1000, refill: { interval: 'monthly', amount: 1000 } } });
  if (!created.ok) throw new Error(`createKey failed: ${created.error.detail}`);
  if ((i + 1) % 250_000 === 0) progress(`${i + 1} keys`);
}
const createSeconds = seconds(start);
const createdNow = usage();
const created = await settledUsage();

start = process.hrtime.bigint();
let text = JSON.stringify(engine.snapshot());
const snapshotSeconds = seconds(start);
const snapshotBytes = Buffer.byteLength(text);
progress(`snapshot of ${(snapshotBytes / 1e6).toFixed(0)} MB`);
engine = null;
// The restore starts from the snapshot text alone (as from a file), the first engine gone.
const textOnly = usage();

const exactPeak = resetPeak();
start = process.hrtime.bigint();
let parsed = JSON.parse(text);
text = null;
const restoredEngine = new Engine({ clock: new ManualClock(START_MS), sha256 });
const restored = restoredEngine.restore(parsed);
parsed = null;
const restoreSeconds = seconds(start);
const restorePeakRss = peakRss();
if (!restored.ok) throw new Error(`restore failed: ${restored.error.detail}`);
if (restored.value.keys !== count) throw new Error(`expected ${count} keys after the restore, got ${restored.value.keys}`);
const afterNow = usage();
const after = await settledUsage();
// Reading the engine here keeps it (and its keys) alive through the measurement above.
if (restoredEngine.stats().keys !== count) throw new Error('keys lost');
process.stdout.write(
  `RESULT ${JSON.stringify({ keys: count, before, createdNow, created, createSeconds, snapshotSeconds, snapshotBytes, textOnly, restoreSeconds, restorePeakRss, exactPeak, afterNow, after })}\n`,
);
