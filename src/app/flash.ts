// One-time messages held on the server between a form post and the page it redirects to: a newly
// minted key is shown once, by the GET after the post, and never travels in a URL.
import { randomBytes } from 'node:crypto';
import type { Collection, Db, IndexDescription } from 'mongodb';
import { hashToken, readCookie } from '../auth/sessions.js';
import type { Config } from '../config.js';

export const FLASHES = 'app_flashes';
export const FLASH_INDEXES: Record<string, IndexDescription[]> = { [FLASHES]: [{ key: { expiresAt: 1 }, name: 'by_expiry' }] };
export const FLASH_COOKIE = 'cc_flash';
/** Long enough to follow a redirect on a slow phone; a key not shown by then is revoked by hand. */
const FLASH_TTL_MS = 10 * 60 * 1000;

export interface MintedFlash {
  plaintext: string;
  keyName: string;
  last4: string;
}

interface FlashRecord extends MintedFlash {
  _id: string; // sha256 of the cookie value
  uid: string;
  expiresAt: Date;
}

export class Flashes {
  private readonly flashes: Collection<FlashRecord>;
  private readonly attributes: string;
  constructor(
    db: Db,
    config: Config,
    private readonly clock: () => number = Date.now,
  ) {
    this.flashes = db.collection(FLASHES);
    const local = /^http:\/\/(localhost|127\.0\.0\.1)(:\d+)?$/.test(config.appUrl);
    this.attributes = ['Path=/settings', 'HttpOnly', 'SameSite=Lax', ...(local ? [] : ['Secure'])].join('; ');
  }

  /** Hold a message for `uid`; the Set-Cookie header that names it. */
  async put(uid: string, message: MintedFlash): Promise<string> {
    const token = randomBytes(24).toString('base64url');
    // Messages nobody came back for are cleared here: no sweep job for so small a thing.
    await this.flashes.deleteMany({ expiresAt: { $lt: new Date(this.clock()) } });
    await this.flashes.insertOne({ _id: hashToken(token), uid, ...message, expiresAt: new Date(this.clock() + FLASH_TTL_MS) });
    return `${FLASH_COOKIE}=${token}; ${this.attributes}; Max-Age=${FLASH_TTL_MS / 1000}`;
  }

  /** The caller's message, deleted as it is read: a reload finds nothing. */
  async take(uid: string, cookieHeader: string | undefined): Promise<MintedFlash | null> {
    const token = readCookie(cookieHeader, FLASH_COOKIE);
    if (!token) return null;
    const found = await this.flashes.findOneAndDelete({ _id: hashToken(token), uid });
    if (!found || found.expiresAt.getTime() <= this.clock()) return null;
    return { plaintext: found.plaintext, keyName: found.keyName, last4: found.last4 };
  }

  get cleared(): string {
    return `${FLASH_COOKIE}=; ${this.attributes}; Max-Age=0`;
  }
}
