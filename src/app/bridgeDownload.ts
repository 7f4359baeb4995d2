// The stdio bridge as one file people download from the app (/downloads/carecircle-bridge.mjs) and
// run with `node`, from any folder: bridge/ bundled by esbuild once per process, with its SHA-256.
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT, VERSION } from '../version.js';

export const BRIDGE_FILE = 'carecircle-bridge.mjs';
export const BRIDGE_PATH = `/downloads/${BRIDGE_FILE}`;

export interface BridgeBundle {
  code: string;
  /** Lower-case hex, as `sha256sum` and `shasum -a 256` print it. */
  sha256: string;
  version: string;
}

/** The bridge's entry: the TypeScript source in a clone, the compiled one in a build without it. */
function entryPoint(): string | undefined {
  return [path.join(PACKAGE_ROOT, 'bridge', 'cli.ts'), path.join(PACKAGE_ROOT, 'dist', 'bridge', 'cli.js')].find((p) => existsSync(p));
}

async function build(): Promise<BridgeBundle> {
  const entry = entryPoint();
  if (!entry) throw new Error('bridge/cli.ts is not in this installation');
  // Loaded only here, on the first download or Connect page of this process.
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: [entry],
    // Paths in the bundle's comments are relative to this: the same bytes, and hash, from every process.
    absWorkingDir: PACKAGE_ROOT,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    write: false,
    legalComments: 'inline',
    banner: {
      js: `#!/usr/bin/env node\n// carecircle-mcp ${VERSION}: the stdio bridge between a desktop MCP client and carecircle. Run: node ${BRIDGE_FILE} --help`,
    },
    plugins: [
      {
        // src/version.ts reads package.json beside the service; the downloaded file has none, so its version is written in.
        name: 'carecircle-version',
        setup(b) {
          b.onLoad({ filter: /[\\/]src[\\/]version\.(ts|js)$/ }, () => ({ contents: `export const VERSION = ${JSON.stringify(VERSION)};`, loader: 'js' }));
        },
      },
    ],
  });
  const code = result.outputFiles[0]!.text;
  return { code, sha256: createHash('sha256').update(code).digest('hex'), version: VERSION };
}

let built: Promise<BridgeBundle> | undefined;

/** The bundle, built on first use; a failed build is tried again next time rather than kept. */
export function bridgeBundle(): Promise<BridgeBundle> {
  built ??= build().catch((err: unknown) => {
    built = undefined;
    throw err;
  });
  return built;
}
