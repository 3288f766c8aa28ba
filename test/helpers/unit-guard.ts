/**
 * The unit tier's setup file (vitest.config.ts): while a unit-tier file runs, listening, connecting,
 * binding a datagram socket, starting a child process or a worker thread throws. So the tier stays
 * what `npm run test:unit` promises — no server, no process, no socket — whatever a file or the code
 * it calls does; the static half of the check is test/tiers.test.ts. Restored after the file, for a
 * worker that runs another project's file next.
 */
import { afterAll } from 'vitest';
import { refuseLiveResources } from './unit-refusals.js';

const restore = refuseLiveResources();
afterAll(restore);
