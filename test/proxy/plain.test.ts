/**
 * The reverse-proxy suite's control: the live-safe scenarios through nginx forwarding everything
 * (test/helpers/proxy-suite.ts). Every other file of test/proxy differs from this only in the mode.
 */
import { MODES } from '../helpers/nginx-modes.js';
import { describeProxyModes } from '../helpers/proxy-suite.js';

describeProxyModes(MODES.filter((m) => m.name === 'plain'));
