// Child of bench/memory-keys.ts (see there). Plain JavaScript on the compiled engine (dist/), so
// that the process holds what a `keysim serve` process holds and no TypeScript loader.
// Usage: node --expose-gc --max-old-space-size=<MB> bench/memory-keys-child.mjs <keys> <snapshot file>
//        node --expose-gc --max-old-space-size=<MB> bench/memory-keys-child.mjs <keys> <snapshot file> --file
//        node --expose-gc --max-old-space-size=<MB> bench/memory-keys-child.mjs <keys> <snapshot file> --http <root key> [inline]
// The first creates the keys, writes their snapshot to the file and restores it from there; the
// second restores that file in a fresh process, as `keysim serve --restore` does; the third
// restores that file into a simulator over HTTP (POST /_sim/restore, streamed from disk)
// by a client in a process of its own, or with `inline` in the simulator's process itself (as
// before 2026-11-27: the client's 1 MB read buffers then count in the simulator's memory).
import { hash } from 'node:crypto';
import { createReadStream, createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { Engine, ManualClock } from '../dist/src/engine/index.js';
import { jsonPieces } from '../dist/src/http/json-stream.js';
import { createSimulator, readSnapshotFile } from '../dist/src/http/index.js';

const count = Number(process.argv[2]);
const file = process.argv[3];
if (file === undefined) throw new Error('expected the snapshot file path');
const httpRootKey = process.argv[4] === '--http' ? process.argv[5] : undefined;
const inlineClient = process.argv[6] === 'inline';
const freshFile = process.argv[4] === '--file';
if (!Number.isSafeInteger(count) || count < 1) throw new Error(`expected a key count, got ${process.argv[2]}`);
const START_MS = Date.UTC(2027, 0, 15, 12);
const sha256 = (text) => hash('sha256', text, 'base64url');
// As the simulator passes them (src/http/simulator.ts); an engine from before key digests ignores the second.
const sha256Digest = (text) => hash('sha256', text, 'binary');

function collect() {
  if (typeof globalThis.gc !== 'function') throw new Error('the memory benchmark needs node --expose-gc');
  for (let i = 0; i < 3; i++) globalThis.gc();
}
/** RSS and the heap's live bytes, plus where the rest sits: the heap's committed pages, memory outside it. */
function usage() {
  collect();
  const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
  return { rss, heapUsed, heapTotal, external, arrayBuffers };
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
  } catch {
    // No /proc (not Linux): the process's own figure below.
  }
  return process.resourceUsage().maxRSS * 1024;
}

/** Restores the snapshot file into `engine`, one record at a time (as `keysim serve --restore` reads it). */
async function restoreFromFile(engine) {
  const read = await readSnapshotFile(file, sha256);
  if (!read.ok) throw new Error(`restore failed: ${read.message}`);
  return engine.restoreChecked(read.snapshot);
}

/** Writes the snapshot as JSON text in pieces (the whole text of a million keys nears V8's longest string). */
async function writeSnapshot(snapshot) {
  const out = createWriteStream(file);
  let bytes = 0;
  let buffered = '';
  for (const piece of jsonPieces(snapshot, 1)) {
    buffered += piece;
    if (buffered.length < 1 << 20) continue;
    bytes += Buffer.byteLength(buffered);
    if (!out.write(buffered)) await new Promise((resolve) => out.once('drain', resolve));
    buffered = '';
  }
  bytes += Buffer.byteLength(buffered);
  await new Promise((resolve, reject) => out.end(buffered, (error) => (error ? reject(error) : resolve())));
  return bytes;
}

/** POSTs the file to /_sim/restore as it is read from disk; answers the status. */
function postFile(url, rootKey) {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/_sim/restore`,
      { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${rootKey}` } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (piece) => (text += piece));
        res.on('end', () => resolve({ status: res.statusCode, text }));
      },
    );
    req.on('error', reject);
    const input = createReadStream(file, { highWaterMark: 1 << 20 });
    input.on('error', reject);
    // The file is the snapshot itself: the body wraps it as { "snapshot": … }.
    req.write('{"snapshot":');
    input.on('end', () => req.end('}'));
    input.pipe(req, { end: false });
  });
}

/**
 * The same POST from a client process of its own, so that the simulator's process holds only
 * what a simulator holds: the client's read buffers (1 MB each) are no part of it.
 */
function postFileFromProcess(url, rootKey) {
  const client = `
    const { createReadStream } = require('node:fs');
    const { request } = require('node:http');
    const [url, file, rootKey] = process.argv.slice(1);
    const req = request(url + '/_sim/restore', { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer ' + rootKey } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (piece) => (text += piece));
      res.on('end', () => process.stdout.write(JSON.stringify({ status: res.statusCode, text })));
    });
    req.on('error', (error) => { process.stderr.write(String(error)); process.exit(1); });
    const input = createReadStream(file, { highWaterMark: 1 << 20 });
    req.write('{"snapshot":');
    input.on('end', () => req.end('}'));
    input.pipe(req, { end: false });
  `;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', client, url, file, rootKey], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (piece) => (out += piece));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`the restore client exited with ${code}`));
      else resolve(JSON.parse(out));
    });
  });
}

/**
 * Restores the snapshot file into a new engine and measures it: time, peak RSS, memory right after
 * and once idle. The engine lives until the function returns, so the readings hold its keys.
 */
async function restoreFileMeasured() {
  const exactPeak = resetPeak();
  const start = process.hrtime.bigint();
  const engine = new Engine({ clock: new ManualClock(START_MS), sha256, sha256Digest });
  const restored = await restoreFromFile(engine);
  const restoreSeconds = seconds(start);
  const restorePeakRss = peakRss();
  if (restored.keys !== count) throw new Error(`expected ${count} keys after the restore, got ${restored.keys}`);
  const afterNow = usage();
  const after = await settledUsage();
  // Reading the engine here keeps it (and its keys) alive through the measurement above.
  if (engine.stats().keys !== count) throw new Error('keys lost');
  return { restoreSeconds, restorePeakRss, exactPeak, afterNow, after };
}

if (freshFile) {
  // A fresh process restoring the file, as `keysim serve --restore` starts: no history of its own.
  const before = usage();
  const measured = await restoreFileMeasured();
  process.stdout.write(`RESULT ${JSON.stringify({ keys: count, before, ...measured })}\n`);
  process.exit(0);
}

if (httpRootKey !== undefined) {
  const before = usage();
  const sim = await createSimulator({ rootKey: httpRootKey, clock: 'manual', startMs: START_MS, seed: 1, log: () => {} });
  const serverBefore = usage();
  const exactPeak = resetPeak();
  const start = process.hrtime.bigint();
  const answer = inlineClient ? await postFile(sim.url, httpRootKey) : await postFileFromProcess(sim.url, httpRootKey);
  const restoreSeconds = seconds(start);
  const restorePeakRss = peakRss();
  if (answer.status !== 200) throw new Error(`POST /_sim/restore answered ${answer.status}: ${answer.text.slice(0, 300)}`);
  if (sim.engine.stats().keys !== count) throw new Error(`expected ${count} keys after the restore, got ${sim.engine.stats().keys}`);
  const afterNow = usage();
  const after = await settledUsage();
  if (sim.engine.stats().keys !== count) throw new Error('keys lost');
  await sim.close();
  process.stdout.write(
    `RESULT ${JSON.stringify({ keys: count, inlineClient, before, serverBefore, restoreSeconds, restorePeakRss, exactPeak, afterNow, after })}\n`,
  );
  process.exit(0);
}

/**
 * Creates the keys, measures them and writes their snapshot. A function of its own, so that the
 * engine is unreachable once it returns: a value the module's top level held across an `await`
 * could stay alive in its suspended frame after `engine = null` (until 2026-11-27 the first
 * engine, 256 MB of heap, was still live when the restore started: the reading after the snapshot
 * showed it).
 */
async function createAndSnapshot() {
  const engine = new Engine({ clock: new ManualClock(START_MS), sha256, sha256Digest });
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
  const snapshotBytes = await writeSnapshot(engine.snapshot());
  const snapshotSeconds = seconds(start);
  progress(`snapshot of ${(snapshotBytes / 1e6).toFixed(0)} MB written`);
  return { rootKey, createSeconds, createdNow, created, snapshotSeconds, snapshotBytes, firstEngine: new WeakRef(engine) };
}

const before = usage();
const { rootKey, createSeconds, createdNow, created, snapshotSeconds, snapshotBytes, firstEngine } = await createAndSnapshot();
// The restore starts from the snapshot file alone, the first engine gone (checked: the figures
// would otherwise hold two engines).
await new Promise((resolve) => setImmediate(resolve));
const textOnly = usage();
if (firstEngine.deref() !== undefined) throw new Error('the first engine is still reachable before the restore');

const measured = await restoreFileMeasured();
process.stdout.write(
  `RESULT ${JSON.stringify({ keys: count, rootKey, before, createdNow, created, createSeconds, snapshotSeconds, snapshotBytes, textOnly, ...measured })}\n`,
);
