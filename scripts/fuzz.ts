// The long fuzz run: the suite of test/fuzz.test.ts with many more inputs and no time limit.
//   npm run fuzz                          20,000 inputs
//   FUZZ_RUNS=100000 npm run fuzz         more
//   FUZZ_SEED=<seed> npm run fuzz         replay the run that printed this seed
//   FUZZ_KEEP_GOING=1 npm run fuzz        list every 5xx found instead of stopping at the first
// NATS_URL / MONGO_URL use running servers instead of starting nats-server and FerretDB.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const env: NodeJS.ProcessEnv = { ...process.env, FUZZ_RUNS: process.env.FUZZ_RUNS ?? '20000', FUZZ_TIME_LIMIT_S: process.env.FUZZ_TIME_LIMIT_S ?? '0' };
process.stdout.write(
  `fuzz: ${env.FUZZ_RUNS} inputs${env.FUZZ_SEED ? `, seed ${env.FUZZ_SEED}` : ''}${env.FUZZ_TIME_LIMIT_S !== '0' ? `, at most ${env.FUZZ_TIME_LIMIT_S} s` : ''}\n`,
);
const child = spawn(process.execPath, [path.join(root, 'node_modules/vitest/vitest.mjs'), 'run', 'test/fuzz.test.ts', ...process.argv.slice(2)], {
  cwd: root,
  env,
  stdio: 'inherit',
});
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
