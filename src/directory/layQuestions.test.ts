// Directory search asked the way families ask: everyday questions must find the right resource in the top three.
import { describe, expect, it } from 'vitest';
import { loadDirectoryData } from './data.js';
import { LAY_NOISE, LAY_TERMS, readLayQuestion } from './layTerms.js';
import { createDirectoryIndex } from './search.js';

const data = loadDirectoryData();
const index = createDirectoryIndex(data);

/** A caregiver's question and the entries (resource, glossary term or channel ids) that answer it; any one of them in the top three counts. */
const QUESTIONS: ReadonlyArray<readonly [question: string, expected: readonly string[]]> = [
  ['my mom keeps falling', ['ncoa-falls-free-checkup', 'cdc-steadi-older-adult-falls', 'usc-fall-prevention-center-home-modifications']],
  ['dad fell again last night, how do i stop him falling', ['ncoa-falls-free-checkup', 'cdc-steadi-older-adult-falls']],
  ['scared grandpa will slip in the shower', ['ncoa-falls-free-checkup', 'cdc-steadi-older-adult-falls', 'usc-fall-prevention-center-home-modifications']],
  ['how can i make the bathroom safer for my dad', ['usc-fall-prevention-center-home-modifications', 'cdc-steadi-older-adult-falls']],
  ['dementia help at night', ['sundowning']],
  ['mom has alzheimers and gets agitated every evening', ['sundowning']],
  ['my dad has memory problems and gets confused when it gets dark', ['sundowning', 'dementia-and-alzheimers']],
  ['my dad keeps getting lost', ['medicalert-wandering-support', 'dementia-and-alzheimers']],
  ['mom wandered out of the house in her nightgown', ['medicalert-wandering-support', 'dementia-and-alzheimers']],
  [
    'my mother is getting really forgetful',
    ['alzheimers-association-helpline', 'dementia-and-alzheimers', 'alzheimers-gov', 'alzheimers-foundation-of-america-helpline'],
  ],
  [
    'memory loss in my dad, what do i do',
    ['alzheimers-association-helpline', 'dementia-and-alzheimers', 'alzheimers-gov', 'alzheimers-foundation-of-america-helpline'],
  ],
  ["who can help with mom's medicare questions", ['ship-medicare-counseling', 'medicare-rights-center', 'ship']],
  ['i need a break from caring for my husband', ['arch-national-respite-locator', 'respite-care', 'respite-and-burnout', 'lifespan-respite-care-program']],
  ["i'm so burned out taking care of my mother", ['caregiver-burnout', 'respite-and-burnout', 'respite-care']],
  ['exhausted and overwhelmed looking after my parents', ['caregiver-burnout', 'respite-and-burnout', 'respite-care', 'arch-national-respite-locator']],
  ['how do we pay for a nursing home', ['paying-for-care-and-medicaid', 'medicaid-gov', 'longtermcare-planning-acl', 'medicaid']],
  ["we can't afford home care for dad", ['paying-for-care-and-medicaid', 'medicaid-gov', 'longtermcare-planning-acl', 'medicaid', 'hcbs-waiver']],
  ['can i get paid for taking care of my mom', ['paying-for-care-and-medicaid', 'medicaid-gov', 'hcbs-waiver', 'va-caregiver-support-line']],
  ['need a lawyer to sort out my parents papers', ['national-academy-of-elder-law-attorneys', 'legal-planning-poa-and-wills', 'elder-law-attorney']],
  ['how do i get power of attorney for my dad', ['durable-power-of-attorney', 'legal-planning-poa-and-wills', 'national-academy-of-elder-law-attorneys']],
  [
    "who decides for dad if he can't make decisions anymore",
    ['guardianship', 'health-care-proxy', 'durable-power-of-attorney', 'legal-planning-poa-and-wills'],
  ],
  ['someone scammed my grandma out of her savings', ['national-elder-fraud-hotline', 'ftc-report-fraud', 'elder-financial-exploitation']],
  ['dad got a call saying he won the lottery and has to send money first', ['national-elder-fraud-hotline', 'ftc-report-fraud', 'fbi-ic3']],
  [
    'i think the neighbor is stealing from my aunt',
    ['adult-protective-services-napsa', 'elder-financial-exploitation', 'national-elder-fraud-hotline', 'adult-protective-services'],
  ],
  ["i want to complain about my mom's nursing home", ['long-term-care-ombudsman', 'ombudsman', 'consumer-voice']],
  [
    'the nursing home is neglecting my father',
    ['long-term-care-ombudsman', 'ombudsman', 'adult-protective-services-napsa', 'adult-protective-services', 'national-center-on-elder-abuse'],
  ],
  ['how do i find a good nursing home for dad', ['medicare-care-compare']],
  ['mom is dying and we want her comfortable at home', ['hospice', 'hospice-foundation-of-america', 'hospice-and-grief']],
  ['my husband passed away last month and i am not coping', ['hospice-and-grief', 'hospice-foundation-of-america']],
  ['dad is a vietnam vet and needs help at home', ['va-geriatrics-and-extended-care', 'va-caregiver-support-line', 'veteran-caregivers']],
  ["my brother won't help with dad at all", ['siblings-and-family-conflict']],
  ['i live three states away from my mother', ['long-distance-caregiving', 'aging-life-care-association', 'care-manager']],
  ["dad shouldn't be driving anymore", ['nhtsa-older-drivers']],
  ['mom needs rides to her doctor appointments', ['nadtc-transportation', 'eldercare-locator', '211']],
  ["she isn't eating, can someone bring her meals", ['meals-on-wheels-america']],
  ['dad took his pills twice this morning', ['poison-help-line']],
  ['where can i borrow a wheelchair for my mom', ['at3-center-assistive-technology']],
  ["feeling hopeless and can't go on caring for him", ['988-suicide-and-crisis-lifeline', 'crisis-text-line']],
  ["mom can't afford her prescriptions", ['medicare-extra-help', 'extra-help', 'benefitscheckup']],
  ["help paying mom's heating bill", ['liheap-energy-assistance']],
  ["mom can't live alone anymore, where do i start", ['eldercare-locator', 'area-agency-on-aging', 'assisted-living', 'usaging']],
  [
    'my wife has parkinsons and the shaking is getting worse',
    ['parkinsons-foundation-helpline', 'parkinsons-and-movement-disorders', 'american-parkinson-disease-association'],
  ],
  ['i need time off work to look after my dad', ['fmla']],
  ['who can check on my mother while i am at work', ['national-adult-day-services-association', 'adult-day-health-care', 'eldercare-locator']],
  ['support group for people caring for a husband or wife', ['well-spouse-association', 'caring-for-a-spouse-or-partner']],
  ["what happens to mom's house if she goes on medicaid", ['estate-recovery']],
  ['need someone to help dad with bathing and dressing', ['home-health-aide', 'working-with-home-care-agencies', 'homemaker-services', 'adls']],
  ['mom was just diagnosed with dementia, what now', ['early-stage-and-new-diagnosis', 'dementia-and-alzheimers', 'alzheimers-association-helpline']],
  ['grandma took a tumble on the stairs', ['ncoa-falls-free-checkup', 'cdc-steadi-older-adult-falls', 'usc-fall-prevention-center-home-modifications']],
  [
    'dad keeps forgetting names, is it alzheimers',
    ['alzheimers-association-helpline', 'dementia-and-alzheimers', 'alzheimers-gov', 'alzheimers-foundation-of-america-helpline'],
  ],
  ['my mother gets really confused and upset at sundown', ['sundowning']],
  [
    'someone from "microsoft" got into dads computer and took his money',
    ['fbi-ic3', 'national-elder-fraud-hotline', 'ftc-report-fraud', 'elder-financial-exploitation', 'adult-protective-services-napsa'],
  ],
  ['how do i become my moms legal guardian', ['guardianship', 'legal-planning-poa-and-wills', 'national-academy-of-elder-law-attorneys']],
  ['nursing home wants to kick mom out', ['long-term-care-ombudsman', 'ombudsman', 'consumer-voice', 'justice-in-aging']],
  ['i am so tired of being a caregiver', ['caregiver-burnout', 'respite-and-burnout', 'respite-care', 'arch-national-respite-locator']],
  ['medicare plan choices are so confusing', ['ship-medicare-counseling', 'medicare-rights-center', 'ship']],
  ['how much does memory care cost', ['memory-care', 'paying-for-care-and-medicaid']],
  ['my dad has trouble walking and needs a walker', ['at3-center-assistive-technology']],
  ['hospice for my husband with cancer', ['hospice-foundation-of-america', 'hospice', 'hospice-and-grief']],
  ['my sister and i keep fighting about mom', ['siblings-and-family-conflict']],
  ['help for military veterans caregiver', ['va-caregiver-support-line', 'veteran-caregivers', 'elizabeth-dole-foundation']],
  [
    'dad has parkinsons and falls a lot',
    ['parkinsons-foundation-helpline', 'parkinsons-and-movement-disorders', 'ncoa-falls-free-checkup', 'cdc-steadi-older-adult-falls'],
  ],
  ['mom forgot she took her insulin and took it again', ['poison-help-line']],
  [
    'who can take mom grocery shopping',
    ['nadtc-transportation', 'eldercare-locator', 'meals-on-wheels-america', 'snap-food-assistance', 'homemaker-services', 'iadls'],
  ],
  [
    'i feel so alone caring for my wife with dementia',
    ['well-spouse-association', 'caring-for-a-spouse-or-partner', 'dementia-and-alzheimers', 'alzheimers-association-helpline'],
  ],
  ['how to get medicaid to pay for in home care', ['hcbs-waiver', 'medicaid-gov', 'paying-for-care-and-medicaid']],
];

const TOP = 3;
const REQUIRED_HIT_RATE = 0.9;

const rankOf = (question: string, expected: readonly string[]): number => {
  const hits = index.search(question, { limit: 25 });
  const at = hits.findIndex((h) => expected.includes(h.id));
  return at < 0 ? Infinity : at + 1;
};

describe('lay caregiver questions', () => {
  it(`find an expected entry in the top ${TOP} for at least ${REQUIRED_HIT_RATE * 100}% of questions`, () => {
    expect(QUESTIONS.length).toBeGreaterThanOrEqual(30);
    const ranks = QUESTIONS.map(([q, expected]) => ({ q, rank: rankOf(q, expected) }));
    const hits = ranks.filter((r) => r.rank <= TOP).length;
    const rate = hits / QUESTIONS.length;
    const misses = ranks.filter((r) => r.rank > TOP).map((r) => `  "${r.q}" → rank ${r.rank}`);
    console.log(
      `lay questions: ${hits}/${QUESTIONS.length} in the top ${TOP} (hit rate ${(rate * 100).toFixed(1)}%)${misses.length ? `\n${misses.join('\n')}` : ''}`,
    );
    expect(rate).toBeGreaterThanOrEqual(REQUIRED_HIT_RATE);
  });

  it('name only entries that exist', () => {
    const ids = new Set([...data.resources.map((r) => r.id), ...data.glossary.map((g) => g.id), ...data.channels.map((c) => c.slug)]);
    expect(QUESTIONS.flatMap(([, expected]) => expected.filter((id) => !ids.has(id)))).toEqual([]);
  });

  it('put "my mom keeps falling" on falls prevention and the sundowning entry first for "dementia help at night"', () => {
    expect(rankOf('my mom keeps falling', ['ncoa-falls-free-checkup', 'cdc-steadi-older-adult-falls'])).toBe(1);
    expect(rankOf('dementia help at night', ['sundowning'])).toBe(1);
  });
});

describe("questions already in the directory's words", () => {
  it('keep the ranking their own words give them', () => {
    expect(index.search('elder abuse', { limit: 3 })[0]?.id).toBe('national-center-on-elder-abuse');
    expect(index.search('legal aid', { limit: 3 })[0]?.id).toBe('legal-services-corporation');
    expect(index.search('power of attorney', { limit: 3 })[0]?.id).toBe('national-academy-of-elder-law-attorneys');
    expect(index.search('assisted living', { limit: 3 })[0]?.id).toBe('assisted-living');
    expect(index.search('meals on wheels', { limit: 3 })[0]?.id).toBe('meals-on-wheels-america');
  });

  it('still answer a question made only of filler words, as typed', () => {
    expect(index.search('help', { limit: 3 }).length).toBe(3);
  });
});

describe('the lay-terms table', () => {
  const fold = (s: string) =>
    s
      .normalize('NFKD')
      .replace(/\p{M}+/gu, '')
      .toLowerCase()
      .replace(/['’]/g, '');
  const words = (s: string) =>
    fold(s)
      .split(/[^\p{L}\p{N}]+/u)
      .filter((w) => w !== '');
  const corpus = new Set(
    [
      ...data.resources.flatMap((r) => [r.name, r.summary, ...r.tags, r.category]),
      ...data.glossary.flatMap((g) => [g.term, g.definition]),
      ...data.channels.flatMap((c) => [c.name, c.summary, ...c.topics]),
    ].flatMap(words),
  );
  const plural = (w: string) => corpus.has(w) || corpus.has(`${w}s`) || (w.endsWith('s') && corpus.has(w.slice(0, -1)));

  it('maps everyday phrases only to words the directory uses', () => {
    const unknown = LAY_TERMS.flatMap((row) => row.means.flatMap(words)).filter((w) => !plural(w));
    expect([...new Set(unknown)]).toEqual([]);
  });

  it('drops family words and filler but keeps what the question is about', () => {
    expect(readLayQuestion(words('my mom keeps falling'))).toEqual({ words: [], translated: ['falling'], meaning: ['falls prevention', 'fall risk'] });
    expect(readLayQuestion(words("they keep taking mom's money")).meaning).toContain('financial exploitation');
    expect(readLayQuestion(words('respite care'))).toEqual({ words: ['respite', 'care'], translated: [], meaning: [] });
    for (const w of ['mom', 'dad', 'mother', 'parent']) expect(LAY_NOISE.has(w)).toBe(true);
  });

  it('reads night-time words as sundowning only alongside dementia', () => {
    expect(readLayQuestion(words('dementia help at night')).meaning).toEqual(['sundowning']);
    expect(readLayQuestion(words('mom forgets things and is restless in the evening')).meaning).toContain('sundowning');
    expect(readLayQuestion(words('who can sit with dad at night')).meaning).not.toContain('sundowning');
  });
});
