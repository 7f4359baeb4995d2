import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RESOURCE_CATEGORY_VALUES, loadDirectoryData, parseDirectoryData, type DirectoryData } from './data.js';

const raw = (file: string): unknown => JSON.parse(readFileSync(new URL(`./data/${file}`, import.meta.url), 'utf8')) as unknown;

const rawData = () => ({
  resources: raw('resources.json') as Record<string, unknown>[],
  glossary: raw('glossary.json') as Record<string, unknown>[],
  channels: raw('channels.json') as Record<string, unknown>[],
});

describe('directory data files', () => {
  const data: DirectoryData = loadDirectoryData();

  it('parse with the zod schemas', () => {
    expect(() => parseDirectoryData(rawData())).not.toThrow();
    expect(data.resources[0]?.id).toBe('eldercare-locator');
  });

  it('are read once and cached', () => {
    expect(loadDirectoryData()).toBe(data);
  });

  it('hold at least 60 resources, 40 glossary terms and 12 channels', () => {
    expect(data.resources.length).toBeGreaterThanOrEqual(60);
    expect(data.glossary.length).toBeGreaterThanOrEqual(40);
    expect(data.channels.length).toBeGreaterThanOrEqual(12);
  });

  it('use unique ids and slugs', () => {
    const unique = (xs: string[]) => new Set(xs).size === xs.length;
    expect(unique(data.resources.map((r) => r.id))).toBe(true);
    expect(unique(data.glossary.map((g) => g.id))).toBe(true);
    expect(unique(data.channels.map((c) => c.slug))).toBe(true);
  });

  it('link every glossary "related" id to an existing term', () => {
    const ids = new Set(data.glossary.map((g) => g.id));
    const dangling = data.glossary.flatMap((g) => g.related.filter((id) => !ids.has(id)).map((id) => `${g.id} -> ${id}`));
    expect(dangling).toEqual([]);
    expect(data.glossary.some((g) => g.related.length > 0)).toBe(true);
  });

  it('use https for every website and source', () => {
    const notHttps = data.resources.flatMap((r) => [r.website, r.source].filter((u) => new URL(u).protocol !== 'https:').map((u) => `${r.id}: ${u}`));
    expect(notHttps).toEqual([]);
  });

  it('cover the required kinds of resources and channels', () => {
    const categories = new Set(data.resources.map((r) => r.category));
    expect([...RESOURCE_CATEGORY_VALUES].filter((c) => !categories.has(c))).toEqual([]);
    const slugs = data.channels.map((c) => c.slug);
    for (const slug of [
      'dementia-and-alzheimers',
      'young-onset-dementia',
      'loved-one-in-a-facility',
      'long-distance-caregiving',
      'paying-for-care-and-medicaid',
      'legal-planning-poa-and-wills',
      'siblings-and-family-conflict',
      'respite-and-burnout',
      'hospice-and-grief',
      'veteran-caregivers',
      'working-with-home-care-agencies',
    ]) {
      expect(slugs).toContain(slug);
    }
    expect(data.channels.filter((c) => c.language === 'es').length).toBeGreaterThanOrEqual(1);
  });

  it('keep well-known national numbers as published', () => {
    const phone = (id: string) => data.resources.find((r) => r.id === id)?.phone;
    expect(phone('eldercare-locator')).toBe('1-800-677-1116');
    expect(phone('alzheimers-association-helpline')).toBe('1-800-272-3900');
    expect(phone('988-suicide-and-crisis-lifeline')).toBe('988');
    expect(phone('meals-on-wheels-america')).toBeNull();
  });

  it('mark every resource as national for now', () => {
    expect(data.resources.every((r) => r.coverage === 'national')).toBe(true);
  });
});

describe('parseDirectoryData rejects bad files, naming the file and the field', () => {
  it('rejects a bad phone number', () => {
    const bad = rawData();
    bad.resources[2] = { ...bad.resources[2], phone: '800 CALL NOW' };
    expect(() => parseDirectoryData(bad)).toThrow(/resources\.json.*\[2\]\.phone/);
  });

  it('rejects a plain http website', () => {
    const bad = rawData();
    bad.resources[0] = { ...bad.resources[0], website: 'http://eldercare.acl.gov' };
    expect(() => parseDirectoryData(bad)).toThrow(/resources\.json.*\[0\]\.website.*https/);
  });

  it('rejects an unknown category and unknown fields', () => {
    const bad = rawData();
    bad.resources[1] = { ...bad.resources[1], category: 'miscellaneous' };
    expect(() => parseDirectoryData(bad)).toThrow(/resources\.json.*\[1\]\.category/);
    const extra = rawData();
    extra.channels[0] = { ...extra.channels[0], color: 'blue' };
    expect(() => parseDirectoryData(extra)).toThrow(/channels\.json/);
  });

  it('rejects a duplicate id', () => {
    const bad = rawData();
    bad.resources.push({ ...bad.resources[0] });
    expect(() => parseDirectoryData(bad)).toThrow(/resources\.json.*\.id.*duplicate id "eldercare-locator"/);
  });

  it('rejects a glossary cross-reference to a missing term', () => {
    const bad = rawData();
    bad.glossary[0] = { ...bad.glossary[0], related: ['no-such-term'] };
    expect(() => parseDirectoryData(bad)).toThrow(/glossary\.json.*\[0\]\.related\[0\].*no-such-term/);
  });

  it('rejects a channel in an unsupported language', () => {
    const bad = rawData();
    bad.channels[0] = { ...bad.channels[0], language: 'fr' };
    expect(() => parseDirectoryData(bad)).toThrow(/channels\.json.*\[0\]\.language/);
  });

  it('rejects a file that is not an array', () => {
    expect(() => parseDirectoryData({ ...rawData(), glossary: { terms: [] } })).toThrow(/glossary\.json/);
  });
});
