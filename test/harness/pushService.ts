// A push service of our own on loopback (RFC 8030): it takes each message as a browser's push
// service would, checks its VAPID token (RFC 8292) against the public key it names, and decrypts
// its aes128gcm body (RFC 8291, RFC 8188) with the subscriber's keys, which the test made.
import { createDecipheriv, createECDH, hkdfSync, randomBytes, type ECDH } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { importJWK, jwtVerify, type JWTPayload } from 'jose';

/** One browser's side of a subscription: what it would hand the page, and the private keys it keeps. */
export interface Subscriber {
  id: string;
  endpoint: string;
  keys: { p256dh: string; auth: string };
}

export interface ReceivedPush {
  subscriberId: string;
  /** The decrypted payload, parsed. */
  payload: unknown;
  ttl: string | undefined;
  urgency: string | undefined;
  topic: string | undefined;
  /** The verified VAPID claims. */
  claims: JWTPayload;
  /** The public key the token named (the `k` parameter). */
  vapidKey: string;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
}

export interface PushService {
  origin: string;
  /** Messages accepted and decrypted, in order. */
  received: ReceivedPush[];
  /** Messages refused, with why (a bad token, a body that does not decrypt). */
  refused: { subscriberId: string; reason: string }[];
  subscriber(): Subscriber;
  /** How the service answers this subscriber's next messages, after checking them (201 by default). */
  answer(subscriberId: string, answer: Answer): void;
  close(): Promise<void>;
}

const label = (text: string) => Buffer.from(`${text}\0`, 'latin1');

/** RFC 8291 §3.4 and RFC 8188 §2: one record, the key id carrying the sender's ephemeral public key. */
export function decryptAes128gcm(body: Buffer, receiver: ECDH, authSecret: Buffer): Buffer {
  const salt = body.subarray(0, 16);
  const recordSize = body.readUInt32BE(16);
  const idLength = body[20]!;
  const senderKey = body.subarray(21, 21 + idLength);
  const record = body.subarray(21 + idLength);
  if (record.length > recordSize) throw new Error(`a record of ${record.length} bytes is longer than the record size ${recordSize}`);
  const shared = receiver.computeSecret(senderKey);
  const keyInfo = Buffer.concat([label('WebPush: info'), receiver.getPublicKey(), senderKey]);
  const ikm = Buffer.from(hkdfSync('sha256', shared, authSecret, keyInfo, 32));
  const cek = Buffer.from(hkdfSync('sha256', ikm, salt, label('Content-Encoding: aes128gcm'), 16));
  const nonce = Buffer.from(hkdfSync('sha256', ikm, salt, label('Content-Encoding: nonce'), 12));
  const decipher = createDecipheriv('aes-128-gcm', cek, nonce);
  decipher.setAuthTag(record.subarray(record.length - 16));
  const padded = Buffer.concat([decipher.update(record.subarray(0, record.length - 16)), decipher.final()]);
  // The last record ends with the delimiter 2, then zero padding.
  let end = padded.length - 1;
  while (end >= 0 && padded[end] === 0) end--;
  if (padded[end] !== 2) throw new Error('the last record does not end with the delimiter 2');
  return padded.subarray(0, end);
}

/** The VAPID token: ES256, signed by the key in `k`, for this push service's origin (RFC 8292 §2, §3). */
async function verifyVapid(authorization: string | undefined, origin: string): Promise<{ claims: JWTPayload; key: string }> {
  const m = /^vapid t=([^,\s]+),\s*k=([A-Za-z0-9_-]+)$/.exec(authorization ?? '');
  if (!m) throw new Error(`Authorization is not "vapid t=…, k=…": ${authorization ?? '(none)'}`);
  const point = Buffer.from(m[2]!, 'base64url');
  if (point.length !== 65 || point[0] !== 4) throw new Error('k is not an uncompressed P-256 point');
  const key = await importJWK(
    { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33).toString('base64url') },
    'ES256',
  );
  const { payload } = await jwtVerify(m[1]!, key, { algorithms: ['ES256'], audience: origin, requiredClaims: ['exp', 'sub'] });
  if (payload.exp! > Date.now() / 1000 + 24 * 3600) throw new Error('exp is more than 24 hours ahead');
  if (!/^(mailto:|https:)/.test(String(payload.sub))) throw new Error(`sub is not a mailto: or https: URL: ${String(payload.sub)}`);
  return { claims: payload, key: m[2]! };
}

const readBody = async (req: IncomingMessage) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
};

export async function startPushService(): Promise<PushService> {
  const receivers = new Map<string, { ecdh: ECDH; auth: Buffer }>();
  const answers = new Map<string, Answer>();
  const received: ReceivedPush[] = [];
  const refused: PushService['refused'] = [];
  let origin = '';

  const server = createServer((req, res) => {
    void (async () => {
      const id = /^\/push\/([a-f0-9]+)$/.exec(req.url ?? '')?.[1];
      const receiver = id ? receivers.get(id) : undefined;
      if (req.method !== 'POST' || !id || !receiver) return res.writeHead(404).end();
      const body = await readBody(req);
      const refuse = (status: number, reason: string) => {
        refused.push({ subscriberId: id, reason });
        res.writeHead(status).end(reason);
      };
      if (req.headers.ttl === undefined) return refuse(400, 'TTL is required (RFC 8030 §5.2)');
      if (req.headers['content-encoding'] !== 'aes128gcm') return refuse(415, `Content-Encoding is ${req.headers['content-encoding'] ?? '(none)'}`);
      let vapid;
      try {
        vapid = await verifyVapid(req.headers.authorization, origin);
      } catch (err) {
        return refuse(403, (err as Error).message);
      }
      let payload: unknown;
      try {
        payload = JSON.parse(decryptAes128gcm(body, receiver.ecdh, receiver.auth).toString('utf8'));
      } catch (err) {
        return refuse(400, `the body does not decrypt: ${(err as Error).message}`);
      }
      const answer = answers.get(id) ?? { status: 201 };
      if (answer.status === 201)
        received.push({
          subscriberId: id,
          payload,
          ttl: req.headers.ttl as string,
          urgency: req.headers.urgency as string | undefined,
          topic: req.headers.topic as string | undefined,
          claims: vapid.claims,
          vapidKey: vapid.key,
        });
      res
        .writeHead(answer.status, { ...(answer.status === 201 ? { location: `${origin}/message/${randomBytes(8).toString('hex')}` } : {}), ...answer.headers })
        .end();
    })().catch((err: unknown) => res.writeHead(500).end(String(err)));
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    origin,
    received,
    refused,
    subscriber() {
      const id = randomBytes(8).toString('hex');
      const ecdh = createECDH('prime256v1');
      ecdh.generateKeys();
      const auth = randomBytes(16);
      receivers.set(id, { ecdh, auth });
      return { id, endpoint: `${origin}/push/${id}`, keys: { p256dh: ecdh.getPublicKey('base64url'), auth: auth.toString('base64url') } };
    },
    answer(subscriberId, answer) {
      answers.set(subscriberId, answer);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
