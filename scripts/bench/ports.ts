// Picking the benchmark's listener ports.
import { freePort, isPortFree } from '../../src/store/embedded/process.js';

/**
 * A free loopback port below the kernel's ephemeral range (32768 and up on Linux), so that no
 * outgoing connection of the many the bench's processes open can take it between pick and bind.
 */
export async function listenerPort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    // Never the same port twice in a run: one picked but not yet bound still looks free.
    if (given.has(port) || !(await isPortFree(port))) continue;
    given.add(port);
    return port;
  }
  return freePort();
}

const given = new Set<number>();
