// Running carecircle roles as real child processes, the way operators do.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { repoRoot } from './servers.js';

export interface RoleProcess {
  child: ChildProcess;
  /** Every stdout line so far (JSON log lines). */
  lines: string[];
  /** Resolves with the first line matching `pattern`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
  /** The last log lines and stderr, to say why a process ended (complete once `closed` resolves). */
  tail(): string;
  /** Resolves once the process exited and its output was read to the end. */
  closed: Promise<unknown>;
}

export function startRole(role: string, env: Record<string, string>): RoleProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'src/cli.ts'), 'start', '--role', role], {
    cwd: repoRoot,
    env: { ...process.env, NODE_ENV: 'test', LOG_LEVEL: 'debug', METRICS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  let buffered = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString();
    let nl: number;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      lines.push(line);
      for (const w of [...waiters])
        if (w.pattern.test(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
    }
  });
  child.stderr!.on('data', (chunk: Buffer) => void (stderr += chunk.toString()));
  const exited = once(child, 'exit');
  const closed = once(child, 'close').catch(() => undefined);
  return {
    child,
    closed,
    lines,
    waitFor: (pattern, timeoutMs = 30_000) => {
      const found = lines.find((l) => pattern.test(l));
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${role} never logged ${pattern}; stderr: ${stderr.slice(-2000)}`)), timeoutMs);
        waiters.push({ pattern, resolve: (l) => (clearTimeout(timer), resolve(l)) });
        void exited.then(() => reject(new Error(`${role} exited before logging ${pattern}; stderr: ${stderr.slice(-2000)}`)));
      });
    },
    tail: () => `last log lines: ${lines.slice(-5).join('\n')}\nstderr: ${stderr.slice(-2000)}`,
    kill: async (signal = 'SIGTERM') => {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      const [code] = (await exited) as [number | null];
      return code;
    },
  };
}
