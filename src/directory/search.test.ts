import { describe, expect, it } from 'vitest';
import { loadDirectoryData, type DirectoryData } from './data.js';
import { createDirectoryIndex, DirectoryFilterError, type DirectoryHit } from './search.js';
import { STATES, resolveState } from './states.js';

const data = loadDirectoryData();
const index = createDirectoryIndex(data);
const ids = (hits: DirectoryHit[]) => hits.map((h) => h.id);

describe('createDirectoryIndex', () => {
  it('indexes resources, channels and glossary terms together', () => {
    expect(index.size).toBe(data.resources.length + data.channels.length + data.glossary.length);
  });

  it('returns hits shaped for the tool layer', () => {
    const [hit] = index.search('eldercare locator', { limit: 1 });
    expect(hit).toEqual({
      kind: 'resource',
      id: 'eldercare-locator',
      title: 'Eldercare Locator',
      summary: expect.stringContaining('Area Agency on Aging'),
      score: expect.any(Number),
      category: 'helpline',
      url: 'https://eldercare.acl.gov',
      phone: '1-800-677-1116',
    });
    const [term] = index.search('spend-down', { limit: 1, category: 'glossary' });
    expect(term).toMatchObject({ kind: 'glossary', id: 'spend-down', title: 'Spend-down' });
    const [channel] = index.search('siblings', { limit: 1, category: 'channel' });
    expect(channel).toMatchObject({ kind: 'channel', id: 'siblings-and-family-conflict' });
  });

  it('sorts hits by descending score', () => {
    const hits = index.search('dementia caregiver support', { limit: 20 });
    expect(hits.length).toBeGreaterThan(5);
    const scores = hits.map((h) => h.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });
});

describe('ranking', () => {
  it('puts the Alzheimer\'s Association helpline first for "alzheimers helpline"', () => {
    for (const q of ['alzheimers helpline', "Alzheimer's helpline", 'ALZHEIMER HELPLINE']) {
      const hits = index.search(q, { limit: 5 });
      expect(hits[0]?.id, q).toBe('alzheimers-association-helpline');
      expect(hits[0]?.phone).toBe('1-800-272-3900');
    }
  });

  it('ranks a name match above a summary-only match', () => {
    // "Stroke" is in the American Stroke Association's name; other entries mention it only in passing or not at all.
    expect(index.search('stroke', { limit: 3 })[0]?.id).toBe('american-stroke-association');
    expect(index.search('hospice', { limit: 3 })[0]?.id).toBe('hospice-foundation-of-america');
    expect(index.search('medicare', { limit: 3 })[0]?.id).toBe('medicare');
  });

  it('ranks a tag match above a summary-only match', () => {
    // "scam" appears only in tags (and the glossary definition body), never in a resource name.
    const hits = index.search('scam', { limit: 10 });
    const fraudLines = ['national-elder-fraud-hotline', 'ftc-report-fraud', 'fbi-ic3'];
    expect(ids(hits.slice(0, 3)).sort()).toEqual([...fraudLines].sort());
  });

  it('finds glossary terms and channels by their names', () => {
    expect(index.search('medicaid look-back period', { limit: 3 })[0]?.id).toBe('medicaid-look-back-period');
    expect(index.search('POLST', { limit: 3 })[0]?.id).toBe('polst');
    expect(index.search('long distance caregiving', { limit: 3 })[0]?.id).toBe('long-distance-caregiving');
    expect(index.search('cuidadores', { limit: 3 })[0]?.id).toBe('cuidadores-en-espanol');
  });
});

describe('fuzzy and prefix matching', () => {
  it('finds respite resources for the typo "respit"', () => {
    const hits = index.search('respit', { limit: 5 });
    expect(hits.length).toBeGreaterThan(0);
    expect(hits[0]?.id).toBe('arch-national-respite-locator');
    expect(ids(hits)).toContain('respite-care');
  });

  it('tolerates a misspelling inside a word', () => {
    expect(index.search('hospise', { limit: 3 })[0]?.id).toBe('hospice-foundation-of-america');
    expect(index.search('alzhiemers helpline', { limit: 3 })[0]?.id).toBe('alzheimers-association-helpline');
    expect(ids(index.search('parkinsn', { limit: 5 }))).toContain('parkinsons-foundation-helpline');
  });

  it('completes a word prefix', () => {
    expect(ids(index.search('ombuds', { limit: 5 }))).toEqual(expect.arrayContaining(['long-term-care-ombudsman', 'ombudsman']));
    expect(index.search('guardian', { limit: 3 })[0]?.id).toBe('guardianship');
  });

  it('does not fuzz very short words', () => {
    // "ALS" must not drift to "also"/"all"/"aid" matches.
    expect(ids(index.search('ALS', { limit: 5 }))).toEqual(['als-association']);
  });
});

describe('filters', () => {
  it('restricts hits to one resource category', () => {
    const hits = index.search('respite', { limit: 10, category: 'respite' });
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.every((h) => h.kind === 'resource' && h.category === 'respite')).toBe(true);
    const unfiltered = index.search('respite', { limit: 10 });
    expect(unfiltered.some((h) => h.kind !== 'resource' || h.category !== 'respite')).toBe(true);
  });

  it('accepts "channel" and "glossary" as categories meaning those kinds', () => {
    const channels = index.search('dementia', { limit: 10, category: 'channel' });
    expect(channels.length).toBeGreaterThan(0);
    expect(channels.every((h) => h.kind === 'channel')).toBe(true);
    const terms = index.search('medicare', { limit: 10, category: 'glossary' });
    expect(terms.length).toBeGreaterThan(0);
    expect(terms.every((h) => h.kind === 'glossary')).toBe(true);
  });

  it('returns nothing when the category has no match for the query', () => {
    expect(index.search('parkinsons', { limit: 5, category: 'legal' })).toEqual([]);
  });

  it('rejects an unknown category', () => {
    expect(() => index.search('respite', { limit: 5, category: 'spaceships' })).toThrow(DirectoryFilterError);
  });

  it('lets national resources match every state, by code or by name', () => {
    const all = index.search('respite', { limit: 50 });
    expect(index.search('respite', { limit: 50, state: 'OH' })).toEqual(all);
    expect(index.search('respite', { limit: 50, state: 'ohio' })).toEqual(all);
    expect(index.search('respite', { limit: 50, state: 'District of Columbia' })).toEqual(all);
  });

  it('keeps a state-only resource out of other states', () => {
    const local: DirectoryData = {
      ...data,
      resources: [
        ...data.resources,
        {
          ...data.resources[0]!,
          id: 'ohio-respite-voucher-test',
          name: 'Ohio Respite Voucher Test Program',
          category: 'respite',
          coverage: 'OH',
        },
      ],
    };
    const localIndex = createDirectoryIndex(local);
    expect(ids(localIndex.search('respite voucher', { limit: 5, state: 'Ohio' }))).toContain('ohio-respite-voucher-test');
    expect(ids(localIndex.search('respite voucher', { limit: 5, state: 'TX' }))).not.toContain('ohio-respite-voucher-test');
    expect(ids(localIndex.search('respite voucher', { limit: 5 }))).toContain('ohio-respite-voucher-test');
  });

  it('combines category and state filters', () => {
    const hits = index.search('caregiver', { limit: 10, category: 'veterans', state: 'tx' });
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.every((h) => h.category === 'veterans')).toBe(true);
  });

  it('rejects an unknown state', () => {
    expect(() => index.search('respite', { limit: 5, state: 'Atlantis' })).toThrow(DirectoryFilterError);
  });
});

describe('limits and empty queries', () => {
  it('respects the limit', () => {
    expect(index.search('care', { limit: 3 })).toHaveLength(3);
    expect(index.search('care', { limit: 1 })).toHaveLength(1);
    expect(index.search('care', { limit: 25 }).length).toBe(25);
  });

  it('returns nothing for a limit below one', () => {
    expect(index.search('care', { limit: 0 })).toEqual([]);
  });

  it('returns [] for an empty or blank query', () => {
    expect(index.search('', { limit: 5 })).toEqual([]);
    expect(index.search('   \t ', { limit: 5 })).toEqual([]);
  });

  it('returns [] for a query made only of stop words or punctuation', () => {
    expect(index.search('the and of', { limit: 5 })).toEqual([]);
    expect(index.search('?!', { limit: 5 })).toEqual([]);
  });
});

describe('resolveState', () => {
  it('resolves codes and names in any case', () => {
    expect(resolveState('CA')).toEqual({ code: 'CA', name: 'California' });
    expect(resolveState('california')).toEqual({ code: 'CA', name: 'California' });
    expect(resolveState('District of Columbia')).toEqual({ code: 'DC', name: 'District of Columbia' });
    expect(resolveState('dc')).toEqual({ code: 'DC', name: 'District of Columbia' });
    expect(resolveState('  new   york ')).toEqual({ code: 'NY', name: 'New York' });
  });

  it('returns undefined for anything else', () => {
    expect(resolveState('')).toBeUndefined();
    expect(resolveState('PR')).toBeUndefined();
    expect(resolveState('Atlantis')).toBeUndefined();
    expect(resolveState('Cal')).toBeUndefined();
  });

  it('lists the 50 states and DC once each', () => {
    expect(STATES).toHaveLength(51);
    expect(new Set(STATES.map((s) => s.code)).size).toBe(51);
    for (const s of STATES) expect(resolveState(s.name)?.code).toBe(s.code);
  });
});
