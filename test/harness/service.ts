// Starting carecircle in-process for a test: real MongoDB-compatible server, real or in-process bus.
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { loadConfig, type Config } from '../../src/config.js';
import { createLogger } from '../../src/log.js';
import { startService, type Role, type RunningService } from '../../src/service.js';
import { freePort, freshDatabaseUrl } from './servers.js';

export interface TestServiceOptions {
  role?: Role;
  /** Use the run's real NATS server instead of the in-process bus. */
  nats?: boolean;
  /** Share a database with another service in the same test. */
  mongoUrl?: string;
  env?: Record<string, string>;
}

export interface TestService extends RunningService {
  config: Config;
  mongoUrl: string;
}

export function testConfig(env: Record<string, string>): Config {
  return loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    SITE_PORT: '0',
    APP_PORT: '0',
    AUTH_PORT: '0',
    METRICS_PORT: '0',
    ...env,
  });
}

/** Listener ports and the public URLs that name them, so links, issuers and origins are right. */
const SURFACES = [
  ['SITE_PORT', 'SITE_URL'],
  ['APP_PORT', 'APP_URL'],
  ['AUTH_PORT', 'AUTH_URL'],
  ['PIPE_PORT', 'PIPE_URL'],
  ['APEX_PORT', 'APEX_URL'],
  ['SMTP_PORT', ''],
] as const;

export async function surfaceEnv(): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  for (const [portKey, urlKey] of SURFACES) {
    const port = await freePort();
    env[portKey] = String(port);
    if (urlKey) env[urlKey] = `http://127.0.0.1:${port}`;
  }
  return env;
}

export async function startTestService(opts: TestServiceOptions = {}): Promise<TestService> {
  const mongoUrl = opts.mongoUrl ?? freshDatabaseUrl(inject('mongoUrl'));
  // Each service gets its own subject namespace on the shared NATS server unless told to share one.
  const nats: Record<string, string> = opts.nats ? { NATS_URL: inject('natsUrl'), BUS_NAMESPACE: `t${randomBytes(4).toString('hex')}` } : {};
  // A port picked free can be taken by an outgoing connection before the listener binds it:
  // then the whole start is tried again on new ports.
  for (let attempt = 1; ; attempt++) {
    // No directory worker thread unless a test asks for one (DIRECTORY_THREADS): a thread costs a
    // second or two of start-up and about 70 MB, and only the tests of threads need it.
    const config = testConfig({ ...(await surfaceEnv()), MONGO_URL: mongoUrl, DIRECTORY_THREADS: '0', ...nats, ...opts.env });
    try {
      const service = await startService(opts.role ?? 'all', config, createLogger(config.logLevel));
      return { ...service, config, mongoUrl };
    } catch (err) {
      if (attempt >= 3 || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    }
  }
}

/** POST one JSON-RPC body (object, array or raw string) and return status, headers and parsed body. */
export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text ? (JSON.parse(text) as any) : undefined };
}

export const rpc = (method: string, params?: Record<string, unknown>, id: number | string = 1) => ({
  jsonrpc: '2.0',
  id,
  method,
  ...(params ? { params } : {}),
});
