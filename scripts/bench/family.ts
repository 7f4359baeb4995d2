// A signed-in family for the workspace parts: a session cookie from the development identity
// provider, a workspace with one loved one, and API keys (read-only, read-and-write), all made through the app's own API.
import { MongoClient } from 'mongodb';
import { loadConfig } from '../../src/config.js';
import { devUid, mintDevIdToken } from '../../src/identity/devIdp.js';
import { databaseName } from '../../src/store/mongo.js';

export interface Family {
  uid: string;
  cookie: string;
  workspaceId: string;
  lovedOneId: string;
  apiKey: string;
  /** A read-and-write key (the app mints read-only by default): for the write tools. */
  writeKey: string;
}

export async function signUpFamily(appUrl: string, env: Record<string, string>, email = 'bench@example.com'): Promise<Family> {
  const config = loadConfig(env);
  const client = await new MongoClient(env.MONGO_URL!).connect();
  let idToken: string;
  try {
    idToken = await mintDevIdToken(client.db(databaseName(env.MONGO_URL!)), config, { email });
  } finally {
    await client.close();
  }
  const session = await fetch(`${appUrl}/api/auth/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ idToken }),
  });
  const cookie = session.headers.get('set-cookie')?.split(';')[0];
  if (!cookie) throw new Error(`sign-in failed: ${session.status} ${await session.text()}`);
  const post = async <T>(path: string, body: unknown): Promise<T> => {
    const res = await fetch(`${appUrl}${path}`, {
      method: 'POST',
      headers: { cookie, origin: appUrl, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  const ws = await post<{ workspace: { id: string }; lovedOne: { id: string } }>('/api/workspace', {
    familyName: 'Bench family',
    firstName: 'Ada',
    lastName: 'Bench',
  });
  const { apiKey } = await post<{ apiKey: string }>('/api/keys', { name: 'bench' });
  const { apiKey: writeKey } = await post<{ apiKey: string }>('/api/keys', { name: 'bench writes', access: 'read-write' });
  return { uid: devUid(email), cookie, workspaceId: ws.workspace.id, lovedOneId: ws.lovedOne.id, apiKey, writeKey };
}

/** A care event as the store keeps it; `n` makes its id and time. */
export function careEvent(n: number, lovedOneId: string, workspaceId: string, now = Date.now()) {
  return {
    _id: `evt_bench_${n}`,
    lovedOneId,
    workspaceId,
    source: 'partner' as const,
    institutionId: 'bench-home',
    eventType: ['visit_started', 'visit_ended', 'medication_given', 'note_added'][n % 4]!,
    // Spread over a year, interleaved across loved ones, so "newest" is a real sort.
    occurredAt: new Date(now - ((n * 7_919) % 31_536_000) * 1000),
    receivedAt: new Date(now),
    payload: { caregiver_id: `cg-${n % 37}`, note: 'Visit went well; lunch eaten, short walk.' },
    sourceEventId: `bench-${n}`,
  };
}
