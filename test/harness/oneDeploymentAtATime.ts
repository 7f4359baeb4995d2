// Setup file of the files that start carecircle as several processes (vitest.config.ts): while one
// of them runs, the other test worker runs in-process and browser files, never a second one of
// these (two at once starved each other's processes on two cores).
import { afterAll, beforeAll, inject } from 'vitest';
import { acquireLease } from './lease.js';

let release: (() => void) | undefined;
// Waiting for the other file to finish can take minutes (the chaos run): not a start-up timeout.
beforeAll(async () => {
  release = await acquireLease(inject('deploymentLease'));
}, 20 * 60_000);
afterAll(() => release?.());
