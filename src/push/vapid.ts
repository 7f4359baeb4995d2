// The VAPID key pair and subject that sign web push messages: configured, or generated once for the embedded run.
import { createECDH, generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';

export const VAPID_FILE = 'vapid.json';

export interface Vapid {
  /** base64url of the uncompressed P-256 point (65 bytes): the browser's applicationServerKey. */
  publicKey: string;
  /** base64url of the 32-byte scalar; never logged, never sent to a page. */
  privateKey: string;
  subject: string;
}

export class VapidError extends Error {
  override name = 'VapidError';
}

/** A pair read back from DATA_DIR must still be a pair: a file edited by hand would sign tokens every push service refuses. */
function checkedPair(text: string, file: string): Pick<Vapid, 'publicKey' | 'privateKey'> {
  try {
    const { publicKey, privateKey } = JSON.parse(text) as { publicKey?: unknown; privateKey?: unknown };
    if (typeof publicKey === 'string' && typeof privateKey === 'string') {
      const ecdh = createECDH('prime256v1');
      ecdh.setPrivateKey(Buffer.from(privateKey, 'base64url'));
      if (ecdh.getPublicKey('base64url') === publicKey) return { publicKey, privateKey };
    }
  } catch {
    // Reported below, without the file's content.
  }
  throw new VapidError(
    `${file} does not hold a VAPID key pair: remove it to generate a new one (every push subscription then ends), or set VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY`,
  );
}

/** A new pair from the JWK form, whose coordinates are always 32 bytes (a raw scalar can come out one short). */
function newPair(): Pick<Vapid, 'publicKey' | 'privateKey'> {
  const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
  const point = Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
  return { publicKey: point.toString('base64url'), privateKey: jwk.d! };
}

/** The subject when VAPID_SUBJECT is empty (never in production): mailto: with MAIL_FROM's address. */
const subjectOf = (config: Pick<Config, 'vapidSubject' | 'mailFrom'>): string =>
  config.vapidSubject || `mailto:${/<([^>]+)>/.exec(config.mailFrom)?.[1] ?? config.mailFrom.trim()}`;

/**
 * The VAPID settings: the configured pair when set; otherwise (never in production) one generated
 * once under DATA_DIR with mode 0600 and reused by every later start, as the data key is. The pair
 * must stay the same: browsers tie each subscription to the public key.
 */
export function resolveVapid(
  config: Pick<Config, 'vapidPublicKey' | 'vapidPrivateKey' | 'vapidSubject' | 'mailFrom' | 'dataDir' | 'nodeEnv'>,
  log: Logger,
): Vapid {
  const subject = subjectOf(config);
  if (config.vapidPublicKey && config.vapidPrivateKey) return { publicKey: config.vapidPublicKey, privateKey: config.vapidPrivateKey, subject };
  if (config.nodeEnv === 'production') throw new VapidError('VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY are required when NODE_ENV=production');
  const file = path.resolve(config.dataDir, VAPID_FILE);
  if (!existsSync(file)) {
    mkdirSync(path.dirname(file), { recursive: true });
    const pair = newPair();
    // Written whole to a private temporary file, then linked into place: link() fails when the
    // name exists, so when two processes start at once one pair wins and both read it.
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(tmp, `${JSON.stringify(pair)}\n`, { mode: 0o600 });
    try {
      linkSync(tmp, file);
      log.warn({ file, publicKey: pair.publicKey }, 'generated a VAPID key pair for web push (set VAPID_PUBLIC_KEY and VAPID_PRIVATE_KEY in production)');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      rmSync(tmp, { force: true });
    }
  }
  return { ...checkedPair(readFileSync(file, 'utf8'), file), subject };
}
