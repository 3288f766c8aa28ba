/** The reverse-proxy suite's control: nginx forwarding everything (test/helpers/proxy-suite.ts). */
import { MODES } from '../helpers/nginx-modes.js';
import { describeProxyMode } from '../helpers/proxy-suite.js';

for (const mode of MODES.filter((m) => m.name === 'plain')) describeProxyMode(mode);
