// The ingest and partner collections' indexes, for src/store/indexes.ts (the one place that creates them).
import type { IndexDescription } from 'mongodb';
import { PARTNER_INDEXES } from '../partner/records.js';
import { DEAD_LETTER_INDEXES, INGEST_DEAD_LETTERS } from './deadLetters.js';
import { INGEST_KEY_INDEXES, INGEST_KEYS } from './dedupe.js';
import { FAMILY_SHARE_BINDING_INDEXES, FAMILY_SHARE_BINDINGS, FAMILY_SHARE_CODE_INDEXES, FAMILY_SHARE_CODES } from './familyShare.js';

export const INGEST_INDEXES: Record<string, IndexDescription[]> = {
  ...PARTNER_INDEXES,
  [INGEST_KEYS]: INGEST_KEY_INDEXES,
  [FAMILY_SHARE_CODES]: FAMILY_SHARE_CODE_INDEXES,
  [FAMILY_SHARE_BINDINGS]: FAMILY_SHARE_BINDING_INDEXES,
  [INGEST_DEAD_LETTERS]: DEAD_LETTER_INDEXES,
};
