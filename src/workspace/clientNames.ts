// The name of the app or key a workspace caller came through, for the provenance of what it
// writes: an OAuth app's registered client name, or the label the person gave an API key.
import type { Db } from 'mongodb';
import type { Credentials } from '../auth/credentials.js';
import { API_KEYS, type ApiKeyRecord } from '../keys/keys.js';
import { OAuthStore } from '../oauth/store.js';
import type { WorkspaceCaller } from './caller.js';
import type { ClientNamer } from './entryTools.js';

export function clientNamer(db: Db, credentials: Credentials): ClientNamer {
  const oauth = new OAuthStore(db, credentials);
  const keys = db.collection<ApiKeyRecord>(API_KEYS);
  return async (caller: WorkspaceCaller) => {
    if (caller.keyId) return (await keys.findOne({ _id: caller.keyId }, { projection: { name: 1 } }))?.name;
    if (caller.clientId) return (await oauth.clientNames([caller.clientId])).get(caller.clientId);
    return undefined;
  };
}
