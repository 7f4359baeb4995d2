#!/usr/bin/env node
// Entry point of the `carecircle-mcp` command: the compiled build in production (npm run build), else the TypeScript source.
import { existsSync } from 'node:fs';

const built = new URL('../dist/bridge/cli.js', import.meta.url);
if (process.env.NODE_ENV === 'production' && existsSync(built)) {
  await import(built.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('./cli.ts', import.meta.url).href);
}
