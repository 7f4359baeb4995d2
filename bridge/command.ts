// How the person runs this bridge, so every instruction it prints can be typed as it is: the
// installed `carecircle-mcp`, or the single file downloaded from the app, run with node.
import path from 'node:path';

/** The command for a script path: `node <file>` for the downloaded bundle, else the installed name. */
export function commandFor(script: string | undefined): string {
  const file = script ? path.basename(script) : '';
  return /^carecircle-bridge.*\.mjs$/.test(file) ? `node ${file}` : 'carecircle-mcp';
}

/** This process's command. */
export const COMMAND = commandFor(process.argv[1]);
