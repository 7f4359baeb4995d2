// Rewrites the README's configuration table from the config schema (src/config.test.ts checks it).
import { readFileSync, writeFileSync } from 'node:fs';
import { configMarkdownTable } from '../src/config.js';

const path = new URL('../README.md', import.meta.url);
const readme = readFileSync(path, 'utf8');
const start = readme.indexOf('| variable | default | meaning |');
if (start < 0) throw new Error('README has no configuration table');
let end = readme.indexOf('\n\n', start);
if (end < 0) end = readme.length;
writeFileSync(path, readme.slice(0, start) + configMarkdownTable() + readme.slice(end));
process.stdout.write('README configuration table updated\n');
