#!/usr/bin/env node
// Entry point of the `carecircle` command: the compiled build in production (npm run build), else the TypeScript source.
import { existsSync } from 'node:fs';

const built = new URL('../dist/src/cli.js', import.meta.url);
if (process.env.NODE_ENV === 'production' && existsSync(built)) {
  await import(built.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../src/cli.ts', import.meta.url).href);
}
