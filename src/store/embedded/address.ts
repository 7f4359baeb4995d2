/**
 * Where the embedded run's store listens: `DATA_DIR/store.json`, written once the store is up and
 * removed on a clean stop, so every `carecircle` command finds the running store (on whatever port
 * it got) instead of guessing 27017 or starting a second server on the same files.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { MongoClient } from 'mongodb';

export const STORE_ADDRESS_FILE = 'store.json';

/** What the running embedded store recorded about itself. */
export interface StoreAddress {
  /** Connection string naming the service's database. */
  url: string;
  /** The carecircle process that started the store. */
  pid: number;
  /** The store's own process (FerretDB or mongod). */
  serverPid: number;
  startedAt: string;
}

export type RecordedStore = { state: 'none' } | { state: 'stale'; address: StoreAddress } | { state: 'live'; address: StoreAddress };

export function storeAddressPath(dataDir: string): string {
  return path.resolve(dataDir, STORE_ADDRESS_FILE);
}

/** Whether a process with this id exists (EPERM: it does, under another user). */
function alive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function parse(text: string): StoreAddress | undefined {
  try {
    const v = JSON.parse(text) as Partial<StoreAddress>;
    if (typeof v.url === 'string' && typeof v.pid === 'number' && typeof v.serverPid === 'number') {
      return { url: v.url, pid: v.pid, serverPid: v.serverPid, startedAt: String(v.startedAt ?? '') };
    }
  } catch {
    // a torn or foreign file counts as stale
  }
  return undefined;
}

/**
 * The recorded store: none, stale (its carecircle process or its server is gone, or the file is
 * unreadable) or live (both processes exist; whether it answers is the caller's to find out).
 */
export function readStoreAddress(dataDir: string): RecordedStore {
  let text: string;
  try {
    text = readFileSync(storeAddressPath(dataDir), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { state: 'none' };
    throw err;
  }
  const address = parse(text);
  if (!address) return { state: 'stale', address: { url: '', pid: 0, serverPid: 0, startedAt: '' } };
  return alive(address.pid) && alive(address.serverPid) ? { state: 'live', address } : { state: 'stale', address };
}

/**
 * Records `address` (replacing a stale record) and returns the function that removes it again,
 * only while it is still this process's record.
 */
export function recordStoreAddress(dataDir: string, address: StoreAddress): () => void {
  const file = storeAddressPath(dataDir);
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(tmp, `${JSON.stringify(address)}\n`, { mode: 0o600 });
  renameSync(tmp, file);
  return () => {
    try {
      if (parse(readFileSync(file, 'utf8'))?.pid === address.pid) rmSync(file, { force: true });
    } catch {
      // already gone
    }
  };
}

/** Why the store at `url` does not answer a ping, or undefined when it does. */
export async function unanswered(url: string): Promise<string | undefined> {
  const probe = new MongoClient(url, { serverSelectionTimeoutMS: 2_000 });
  try {
    await probe.db('admin').command({ ping: 1 });
    return undefined;
  } catch (err) {
    return (err as Error).message;
  } finally {
    await probe.close().catch(() => undefined);
  }
}

export class StoreNotRunningError extends Error {
  override name = 'StoreNotRunningError';
}

const START_FIRST = 'start carecircle first with npm start, or set MONGO_URL';

/**
 * The URL of the running embedded store for a command run beside the service: refuses, saying
 * what to do, when the service is not running, left a stale record, or its store does not answer.
 */
export async function runningStoreUrl(dataDir: string): Promise<string> {
  const recorded = readStoreAddress(dataDir);
  const file = storeAddressPath(dataDir);
  const where = `DATA_DIR ${path.resolve(dataDir)}`;
  if (recorded.state === 'none') throw new StoreNotRunningError(`no carecircle is running on ${where} (no ${STORE_ADDRESS_FILE} there): ${START_FIRST}`);
  if (recorded.state === 'stale') {
    const who = recorded.address.pid ? ` by process ${recorded.address.pid}, which has stopped` : '';
    throw new StoreNotRunningError(`no carecircle is running on ${where} (its ${STORE_ADDRESS_FILE} was left${who}): ${START_FIRST}`);
  }
  const { url, pid } = recorded.address;
  const why = await unanswered(url);
  if (why) throw new StoreNotRunningError(`the store carecircle (process ${pid}) recorded in ${file} does not answer (${why}): ${START_FIRST}`);
  return url;
}
