// The bridge's browser sign-ins (OAuth), kept in one JSON file in the user's config directory:
// the directory 0700, the file 0600, every write a new file renamed over the old one (a reader
// never sees half a file), and every read-modify-write under a lock file, so two bridges started
// by two assistants never both spend one refresh token (which would revoke the sign-in).
import { randomBytes } from 'node:crypto';
import { chmod, link, mkdir, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { COMMAND } from './command.js';

/** One server's sign-in. The tokens are absent once the server refused to refresh them. */
export interface StoredSignIn {
  /** The MCP endpoint these tokens are for (the key of the entry). */
  server: string;
  /** The resource indicator sent to the authorization server, when it is not `server` itself. */
  resource?: string;
  /** The authorization server (issuer) and the endpoints used after sign-in. */
  issuer: string;
  tokenEndpoint: string;
  revocationEndpoint?: string;
  /** The client this bridge registered there; the next --login reuses it. */
  clientId: string;
  redirectUri: string;
  accessToken?: string;
  refreshToken?: string;
  /** When the access token expires (ISO 8601). */
  expiresAt?: string;
  /** The scopes the caregiver granted, space-separated. */
  scope?: string;
  updatedAt: string;
}

interface TokenFile {
  version: 1;
  servers: Record<string, StoredSignIn>;
}

export class TokenFileError extends Error {
  override name = 'TokenFileError';
}

export const TOKEN_FILE = 'tokens.json';
/** How long a bridge waits for another to finish with the file (a refresh takes one token request). */
export const LOCK_WAIT_MS = 20_000;
/** A lock older than this is left over from a bridge that died holding it. */
export const STALE_LOCK_MS = 60_000;

/**
 * Where the sign-ins live: CARECIRCLE_CONFIG_DIR, else the platform's per-user config directory
 * (`$XDG_CONFIG_HOME/carecircle`, else `~/.config/carecircle`; macOS `~/Library/Application
 * Support/carecircle`; Windows `%APPDATA%\carecircle`).
 */
export function configDir(env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform, home = os.homedir()): string {
  const override = env.CARECIRCLE_CONFIG_DIR?.trim();
  if (override) return path.resolve(override);
  if (platform === 'darwin') return path.join(home, 'Library', 'Application Support', 'carecircle');
  if (platform === 'win32') return path.join(env.APPDATA?.trim() || path.join(home, 'AppData', 'Roaming'), 'carecircle');
  // The XDG spec says a relative XDG_CONFIG_HOME is invalid and to be ignored.
  const xdg = env.XDG_CONFIG_HOME?.trim();
  return path.join(xdg && path.isAbsolute(xdg) ? xdg : path.join(home, '.config'), 'carecircle');
}

const POSIX = process.platform !== 'win32';
const errno = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | undefined)?.code;

/** What a transaction does to its server's entry: keep it, replace it, or delete it (null). */
export interface Change<T> {
  result: T;
  entry?: StoredSignIn | null;
}

export class TokenStore {
  readonly file: string;
  private readonly lockFile: string;

  constructor(
    readonly dir: string,
    private readonly limits = { lockWaitMs: LOCK_WAIT_MS, staleLockMs: STALE_LOCK_MS },
    private readonly warn: (message: string) => void = () => {},
  ) {
    this.file = path.join(dir, TOKEN_FILE);
    this.lockFile = `${this.file}.lock`;
  }

  /** The entry for `server`, read without the lock (writes are atomic renames, so it is whole). */
  async get(server: string): Promise<StoredSignIn | undefined> {
    return (await this.read()).servers[server];
  }

  /** Identifies the file's current version cheaply (a rename makes a new inode), or undefined when absent. */
  async version(): Promise<string | undefined> {
    try {
      const s = await stat(this.file);
      return `${s.ino}:${s.mtimeMs}:${s.size}`;
    } catch (err) {
      if (errno(err) === 'ENOENT') return undefined;
      throw err;
    }
  }

  /** Reads `server`'s entry under the lock, lets `work` decide, and writes its change atomically before the lock goes. */
  async transaction<T>(server: string, work: (current: StoredSignIn | undefined) => Promise<Change<T>>): Promise<T> {
    await this.ensureDir();
    const release = await this.lock();
    try {
      const data = await this.read();
      const change = await work(data.servers[server]);
      if (change.entry !== undefined) {
        if (change.entry === null) delete data.servers[server];
        else data.servers[server] = change.entry;
        await this.write(data);
      }
      return change.result;
    } finally {
      await release();
    }
  }

  private async read(): Promise<TokenFile> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (err) {
      if (errno(err) === 'ENOENT') return { version: 1, servers: {} };
      throw new TokenFileError(`cannot read ${this.file} (${errno(err) ?? String(err)})`);
    }
    if (POSIX) {
      const mode = (await stat(this.file)).mode & 0o777;
      if (mode & 0o077) {
        this.warn(`${this.file} was open to other users (mode ${mode.toString(8).padStart(4, '0')}); made it yours alone (0600)`);
        await chmod(this.file, 0o600);
      }
    }
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      throw new TokenFileError(`${this.file} is not valid JSON; delete it and run ${COMMAND} --login again`);
    }
    const servers = (data as Partial<TokenFile> | null)?.servers;
    if (typeof servers !== 'object' || servers === null || Array.isArray(servers))
      throw new TokenFileError(`${this.file} is not a carecircle-mcp token file; delete it and run ${COMMAND} --login again`);
    return { version: 1, servers };
  }

  /** The whole file, written to a temporary file (0600) and renamed over the old one. */
  private async write(data: TokenFile): Promise<void> {
    const tmp = path.join(this.dir, `.${TOKEN_FILE}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
    const handle = await open(tmp, 'wx', 0o600);
    try {
      await handle.writeFile(`${JSON.stringify(data, null, 2)}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      for (let attempt = 0; ; attempt++) {
        try {
          await rename(tmp, this.file);
          return;
        } catch (err) {
          // Windows refuses to replace a file another process is reading, for a moment.
          if (POSIX || attempt >= 5 || !['EPERM', 'EBUSY', 'EACCES'].includes(errno(err) ?? '')) throw err;
          await sleep(20 * (attempt + 1));
        }
      }
    } catch (err) {
      await unlink(tmp).catch(() => {});
      throw new TokenFileError(`cannot write ${this.file} (${errno(err) ?? String(err)})`);
    }
  }

  /** The directory, created 0700; an existing one that others can enter is closed when it is ours. */
  private async ensureDir(): Promise<void> {
    try {
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
    } catch (err) {
      throw new TokenFileError(`cannot create ${this.dir} (${errno(err) ?? String(err)}); set CARECIRCLE_CONFIG_DIR to a directory of your own`);
    }
    if (!POSIX) return;
    const s = await stat(this.dir);
    if ((s.mode & 0o077) === 0) return;
    // Never tighten a shared directory (/tmp and the like): the tokens do not belong there.
    if ((s.mode & 0o1000) !== 0 || s.uid !== process.getuid?.())
      throw new TokenFileError(`${this.dir} is shared with other users; set CARECIRCLE_CONFIG_DIR to a directory of your own`);
    this.warn(`${this.dir} was open to other users; made it yours alone (0700)`);
    await chmod(this.dir, 0o700);
  }

  /** Takes the lock file (created exclusively), waiting for another holder; breaks a stale one. */
  private async lock(): Promise<() => Promise<void>> {
    const mine = `${process.pid} ${os.hostname()} ${randomBytes(8).toString('hex')}`;
    const deadline = Date.now() + this.limits.lockWaitMs;
    for (;;) {
      try {
        const handle = await open(this.lockFile, 'wx', 0o600);
        try {
          await handle.writeFile(mine);
        } finally {
          await handle.close();
        }
        return async () => {
          // Only our own lock: after a stale break another bridge may hold it now.
          const held = await readFile(this.lockFile, 'utf8').catch(() => undefined);
          if (held === mine) await unlink(this.lockFile).catch(() => {});
        };
      } catch (err) {
        if (errno(err) !== 'EEXIST') throw new TokenFileError(`cannot create ${this.lockFile} (${errno(err) ?? String(err)})`);
      }
      if (await this.breakStaleLock()) continue;
      if (Date.now() > deadline)
        throw new TokenFileError(
          `another carecircle-mcp has held ${this.lockFile} for over ${Math.round(this.limits.lockWaitMs / 1000)} s; if none is running, delete that file`,
        );
      await sleep(10 + Math.random() * 30);
    }
  }

  /** True when the lock is gone (or was stale and is now removed), so taking it is worth another try. */
  private async breakStaleLock(): Promise<boolean> {
    let held: string;
    let age: number;
    try {
      [held, age] = await Promise.all([readFile(this.lockFile, 'utf8'), stat(this.lockFile).then((s) => Date.now() - s.mtimeMs)]);
    } catch (err) {
      if (errno(err) === 'ENOENT') return true;
      throw err;
    }
    const [pid, host] = held.split(' ');
    const holderDied = host === os.hostname() && Number(pid) > 0 && !processAlive(Number(pid));
    if (!holderDied && age < this.limits.staleLockMs) return false;
    // Move it aside first (atomic), then check it is the lock judged stale: another bridge may
    // have broken it and taken a fresh one in between, which must be put back.
    const aside = `${this.lockFile}.${randomBytes(6).toString('hex')}.stale`;
    try {
      await rename(this.lockFile, aside);
    } catch (err) {
      if (errno(err) === 'ENOENT') return true;
      throw err;
    }
    const moved = await readFile(aside, 'utf8').catch(() => held);
    if (moved !== held) await link(aside, this.lockFile).catch(() => {});
    else this.warn(`removed a lock left by a carecircle-mcp that ${holderDied ? `is no longer running (pid ${pid})` : 'stopped answering'}`);
    await unlink(aside).catch(() => {});
    return true;
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errno(err) === 'EPERM';
  }
}
