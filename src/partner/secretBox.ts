// Partner signing secrets at rest: AES-256-GCM under the data key, bound to the record they belong to.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from '../log.js';

export const DATA_KEY_BYTES = 32;
export const DATA_KEY_FILE = 'data.key';

/** A sealed secret as stored: version, nonce, tag and ciphertext (base64). */
export interface Sealed {
  v: 1;
  iv: string;
  tag: string;
  ct: string;
}

export class DataKeyError extends Error {
  override name = 'DataKeyError';
}

/** 32 bytes written as 64 hex characters or as base64 (standard or URL-safe). */
export function parseDataKey(text: string): Buffer {
  const t = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(t)
    ? Buffer.from(t, 'hex')
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(t)
      ? Buffer.from(t.replace(/-/g, '+').replace(/_/g, '/'), 'base64')
      : undefined;
  if (!key || key.length !== DATA_KEY_BYTES) throw new DataKeyError('DATA_KEY must be 32 bytes, as 64 hex characters or base64 (openssl rand -base64 32)');
  return key;
}

export const isDataKey = (text: string): boolean => {
  try {
    parseDataKey(text);
    return true;
  } catch {
    return false;
  }
};

export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== DATA_KEY_BYTES) throw new DataKeyError(`a data key is ${DATA_KEY_BYTES} bytes`);
  }

  /** `aad` names what the secret belongs to, so a sealed value moved to another record does not open. */
  seal(plain: string, aad: string): Sealed {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(aad, 'utf8'));
    const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return { v: 1, iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), ct: ct.toString('base64') };
  }

  open(sealed: Sealed, aad: string): string {
    if (sealed.v !== 1) throw new DataKeyError(`unknown sealed secret version ${String(sealed.v)}`);
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(sealed.iv, 'base64'));
    decipher.setAAD(Buffer.from(aad, 'utf8'));
    decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
    try {
      return Buffer.concat([decipher.update(Buffer.from(sealed.ct, 'base64')), decipher.final()]).toString('utf8');
    } catch (err) {
      throw new DataKeyError('a stored partner secret does not open with this DATA_KEY (was the key changed?)', { cause: err });
    }
  }
}

/**
 * The data key: DATA_KEY when set; otherwise (never in production) one generated once under
 * DATA_DIR with mode 0600 and reused by every later start and by the CLI.
 */
export function resolveDataKey(config: { dataKey?: string | undefined; dataDir: string; nodeEnv: string }, log: Logger): Buffer {
  if (config.dataKey) return parseDataKey(config.dataKey);
  if (config.nodeEnv === 'production') throw new DataKeyError('DATA_KEY is required when NODE_ENV=production');
  const file = path.resolve(config.dataDir, DATA_KEY_FILE);
  if (!existsSync(file)) {
    mkdirSync(path.dirname(file), { recursive: true });
    // Written whole to a private temporary file, then linked into place: link() fails when the
    // name exists, so when two processes start at once one key wins and both read it.
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(tmp, `${randomBytes(DATA_KEY_BYTES).toString('base64')}\n`, { mode: 0o600 });
    try {
      linkSync(tmp, file);
      log.warn({ file }, 'generated a data key for partner secrets (set DATA_KEY in production)');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      rmSync(tmp, { force: true });
    }
  }
  return parseDataKey(readFileSync(file, 'utf8'));
}
