// Signing, timestamps and de-duplication keys, checked against published test vectors: GitHub's
// and our own in docs/partners.md (so the document a partner codes against is always right).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { canonicalJson, eventKey } from '../src/ingest/dedupe.js';
import { eventEnvelope } from '../src/ingest/envelope.js';
import { parseIsoInstant, signBody, timestampProblem, verifySignature } from '../src/partner/signature.js';

const docVectors = (): { name: string; secret: string; body: string; signature: string }[] => {
  const doc = readFileSync(new URL('../docs/partners.md', import.meta.url), 'utf8');
  const block = /<!-- signing-vectors:start -->\s*```json\n([\s\S]*?)```\s*<!-- signing-vectors:end -->/.exec(doc);
  if (!block) throw new Error('docs/partners.md has no signing-vectors block');
  return JSON.parse(block[1]!);
};

describe('ingest signing - test vectors', () => {
  it("when GitHub's published vector is signed, then the digest is theirs", () => {
    expect(signBody("It's a Secret to Everybody", 'Hello, World!')).toBe('sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17');
  });

  it('when each vector in docs/partners.md is signed, then it gives the published signature and verifies', () => {
    const vectors = docVectors();
    expect(vectors.length).toBeGreaterThanOrEqual(4);
    for (const v of vectors) {
      expect(signBody(v.secret, v.body), v.name).toBe(v.signature);
      expect(verifySignature(v.signature, Buffer.from(v.body, 'utf8'), [{ id: 's1', value: v.secret }]), v.name).toBe('s1');
    }
  });

  it('when one byte changes, the secret is wrong, or the digest is not lower-case sha256 hex, then nothing verifies', () => {
    const [, v] = docVectors();
    const body = Buffer.from(v!.body, 'utf8');
    const changed = Buffer.from(body);
    changed[10] = changed[10]! ^ 1;
    expect(verifySignature(v!.signature, changed, [{ id: 's1', value: v!.secret }])).toBeNull();
    expect(verifySignature(v!.signature, body, [{ id: 's1', value: `${v!.secret}x` }])).toBeNull();
    expect(verifySignature(v!.signature.toUpperCase().replace('SHA256=', 'sha256='), body, [{ id: 's1', value: v!.secret }])).toBeNull();
    expect(verifySignature(v!.signature.replace('sha256=', 'sha1='), body, [{ id: 's1', value: v!.secret }])).toBeNull();
    expect(verifySignature(undefined, body, [{ id: 's1', value: v!.secret }])).toBeNull();
  });

  it('when two secrets are live, then the one that signed is named', () => {
    const body = Buffer.from('{"a":1}');
    const secrets = [
      { id: 'old', value: 'ccps_old' },
      { id: 'new', value: 'ccps_new' },
    ];
    expect(verifySignature(signBody('ccps_old', body), body, secrets)).toBe('old');
    expect(verifySignature(signBody('ccps_new', body), body, secrets)).toBe('new');
  });
});

describe('ingest signing - timestamps', () => {
  const now = Date.parse('2026-11-22T10:15:00Z');

  it('when the instant is strict ISO 8601 with seconds and a zone, then it parses; otherwise it does not', () => {
    expect(parseIsoInstant('2026-11-22T10:15:00Z')).toBe(now);
    expect(parseIsoInstant('2026-11-22T11:15:00.5+01:00')).toBe(now + 500);
    for (const bad of [
      '2026-11-22T10:15Z',
      '2026-11-22 10:15:00Z',
      '2026-11-22T10:15:00',
      '2026-02-30T10:15:00Z',
      '2026-13-01T00:00:00Z',
      'Sun, 22 Nov 2026 10:15:00 GMT',
      '1763806500',
    ])
      expect(parseIsoInstant(bad), bad).toBeNull();
  });

  it('when the send time is more than 5 minutes away either way, then it is refused', () => {
    expect(timestampProblem('2026-11-22T10:10:00Z', now)).toBeNull();
    expect(timestampProblem('2026-11-22T10:20:00Z', now)).toBeNull();
    expect(timestampProblem('2026-11-22T10:09:59Z', now)).toBe('too_old');
    expect(timestampProblem('2026-11-22T10:20:01Z', now)).toBe('too_new');
    expect(timestampProblem('soon', now)).toBe('malformed');
    expect(timestampProblem(undefined, now)).toBe('missing');
  });
});

describe('ingest de-duplication keys', () => {
  const event = eventEnvelope.parse({
    institution_id: 'acme',
    subject_ref: 'c-1',
    event_type: 'vital_recorded',
    occurred_at: '2026-11-22T10:00:00Z',
    payload: { vital_type: 'pulse', value: 72, unit: 'bpm', recorded_by: 'cg' },
  });

  it('when the same data is written with other key order, spacing or instant notation, then the key is the same', () => {
    const reordered = eventEnvelope.parse({
      ...event,
      occurred_at: '2026-11-22T11:00:00.000+01:00',
      payload: { recorded_by: 'cg', unit: 'bpm', value: 72, vital_type: 'pulse' },
    });
    expect(canonicalJson({ b: [1, { d: 1, c: 2 }], a: null })).toBe('{"a":null,"b":[1,{"c":2,"d":1}]}');
    expect(eventKey('acme', reordered, undefined)).toBe(eventKey('acme', event, undefined));
  });

  it('when the payload, the institution or the partner id differs, then the key differs; a partner id ignores the body', () => {
    const other = eventEnvelope.parse({ ...event, payload: { ...event.payload, value: 73 } });
    expect(eventKey('acme', other, undefined)).not.toBe(eventKey('acme', event, undefined));
    expect(eventKey('other', event, undefined)).not.toBe(eventKey('acme', event, undefined));
    expect(eventKey('acme', event, 'e-1')).toBe(eventKey('acme', other, 'e-1'));
    expect(eventKey('acme', event, 'e-1')).not.toBe(eventKey('acme', event, 'e-2'));
    expect(eventKey('acme', event, 'e-1')).not.toBe(eventKey('other', event, 'e-1'));
  });
});
