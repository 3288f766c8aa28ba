import { startServer } from './http-server.js';
import { workloadFor } from './http-load.js';
import { findWrk, runWrk } from './wrk.js';
const wrk = findWrk()!;
const child = process.argv[2];
const s = await startServer('sim', [], [], child);
const w = workloadFor('verifyKey', s.ready);
const line: string[] = [];
for (let i = 0; i < 7; i++) { if (i > 0) await new Promise((r) => setTimeout(r, Number(process.env.IDLE ?? 0))); const r = await runWrk(wrk, s, 'verifyKey', w, { connections: 100, pipelining: 10, durationSeconds: 2 }); line.push(r.serverCpuUsPerRequest.toFixed(0)); }
console.log(child ?? 'B', line.join(' '));
await s.stop();
