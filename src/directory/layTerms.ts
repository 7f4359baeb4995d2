/**
 * Everyday caregiver phrasing translated into the directory's own words before a search.
 *
 * Why: families search the way they talk ("my mom keeps falling", "dementia help at night",
 * "i need a break"), while the directory is written in service language ("falls prevention",
 * "sundowning", "respite"). Fuzzy matching cannot bridge "fell" to "falls prevention", and family
 * words ("mom", "dad") or filler ("help", "keeps") otherwise pull in whatever happens to contain
 * them (every "helpline" matches "help"). This table is the one place that bridge lives: each row
 * is reviewed by hand, names the directory terms it leads to (a test checks they exist in the
 * data), and stays general; it must never be tuned to a single query or a single resource.
 *
 * What belongs in a row: everyday words and phrases only. A word the directory already uses
 * ("respite", "scam", "complaint", "abuse") needs no row: the search finds it as typed, and a
 * typed directory word stays in the search even when a row also reads it.
 *
 * Matching rules: words are compared after lower-casing and dropping accents and apostrophes;
 * `*` at the end of a word accepts any ending ("steal*" = steals, stealing). Rows are tried
 * in order and a word used by one row is not reused by a later one, so more specific rows come
 * first ("time off work" before "time off"). A row with `with` applies only when the question
 * also contains one of those words, or an earlier row has already added one of them as meaning.
 */

export interface LayTerm {
  /** Everyday words or phrases, as a caregiver would type them. */
  readonly say: readonly string[];
  /** Only apply when the question (or an earlier row's meaning) also mentions one of these. */
  readonly with?: readonly string[];
  /** The directory's terms for it; empty means the phrase carries no meaning for the search. */
  readonly means: readonly string[];
}

const DEMENTIA_CONTEXT = ['dementia', 'alzheimer*', 'memory', 'confus*', 'agitat*', 'restless*', 'anxious', 'pacing', 'wandering'];
const MEDICINE_CONTEXT = ['pill*', 'medic*', 'meds', 'dose*', 'tablet*', 'insulin', 'prescription*', 'drug*'];
const MONEY_CONTEXT = ['money', 'afford*', 'cost*', 'pay*', 'expensive', 'price*', 'copay*', 'bill*'];

export const LAY_TERMS: readonly LayTerm[] = [
  // Phrases that only say "my relative" or "caregiving" in general.
  { say: ['in law', 'in laws', 'inlaw*', 'take care of', 'taking care of', 'takes care of', 'look after', 'looking after', 'looks after'], means: [] },

  // Safety emergencies and crisis come first so their words are not read as something milder.
  {
    say: [
      'suicidal',
      'kill myself',
      'end my life',
      'end it all',
      'want to die',
      'dont want to live',
      'hopeless',
      'hurt myself',
      'harm myself',
      'cant go on',
      'give up on life',
    ],
    means: ['crisis', 'suicide prevention', 'emotional distress'],
  },
  {
    say: ['twice', 'two times', 'double*', 'extra', 'too many', 'too much', 'wrong', 'mixed up', 'swallowed', 'again'],
    with: MEDICINE_CONTEXT,
    means: ['poison', 'medication mistake', 'double dose'],
  },
  {
    say: [
      'scammed',
      'scammer*',
      'con',
      'conned',
      'con artist',
      'ripped off',
      'rip off',
      'swindl*',
      'tricked',
      'gift card*',
      'lottery',
      'sweepstakes',
      'won a prize',
      'send money',
      'sent money',
      'wire money',
      'phishing',
      'fake call*',
    ],
    means: ['scam', 'fraud', 'elder fraud'],
  },
  {
    say: ['steal*', 'stole', 'stolen', 'taking money', 'took money', 'using money', 'money missing', 'missing money', 'emptied'],
    means: ['financial exploitation', 'adult protective services', 'elder fraud'],
  },
  {
    say: [
      'abused',
      'abusing',
      'abusive',
      'neglecting',
      'neglected',
      'mistreat*',
      'bruises',
      'bruised',
      'bedsore*',
      'bed sore*',
      'yelled at',
      'screaming at',
      'not safe',
    ],
    means: ['elder abuse', 'neglect', 'adult protective services'],
  },
  {
    say: ['complain', 'complained', 'complaining', 'bad care', 'poor care', 'understaffed', 'not being cared for', 'evict*', 'kick* out'],
    means: ['ombudsman', 'complaint', "residents' rights"],
  },

  // Dementia: memory, night-time behaviour, wandering.
  {
    say: [
      'memory loss',
      'memory problem*',
      'memory issue*',
      'losing memory',
      'forget*',
      'forgot',
      'senile',
      'senility',
      'losing mind',
      'doesnt remember',
      'cant remember',
      'repeats herself',
      'repeats himself',
      'repeating',
    ],
    means: ['dementia', "alzheimer's"],
  },
  {
    say: [
      'wander',
      'wanders',
      'wandered',
      'get* lost',
      'got lost',
      'go* missing',
      'went missing',
      'walk* off',
      'walk* away',
      'leaves the house',
      'left the house',
      'leaving the house',
    ],
    means: ['wandering', 'dementia'],
  },
  {
    say: ['night*', 'nighttime', 'evening*', 'late afternoon', 'afternoon*', 'dusk', 'sunset', 'sundown*', 'after dark', 'get* dark', 'bedtime'],
    with: DEMENTIA_CONTEXT,
    means: ['sundowning'],
  },
  {
    say: ['agitat*', 'restless*', 'aggressive', 'angry', 'anger', 'yelling', 'hallucinat*', 'paranoid', 'pacing'],
    with: DEMENTIA_CONTEXT,
    means: ['behaviors', 'agitation'],
  },
  { say: ['just diagnosed', 'newly diagnosed', 'diagnosed'], means: ['new diagnosis', 'early stage'] },
  { say: ['shaking', 'shakes', 'tremor*', 'shuffl*'], means: ["parkinson's", 'movement disorder'] },

  // Falls, home safety and equipment.
  {
    say: [
      'fall',
      'falls',
      'falling',
      'fell',
      'fallen',
      'tripped',
      'tripping',
      'trips over',
      'slip',
      'slips',
      'slipped',
      'slipping',
      'unsteady',
      'wobbly',
      'lose balance',
      'loses balance',
      'losing balance',
    ],
    means: ['falls prevention', 'fall risk'],
  },
  {
    say: ['bathroom', 'stairs', 'grab bar*', 'handrail*', 'railing*', 'ramp*', 'safer', 'remodel*', 'modify', 'childproof*'],
    means: ['home modification', 'home safety'],
  },
  {
    say: ['wheelchair*', 'walker*', 'cane', 'canes', 'hospital bed*', 'lift chair*', 'shower chair*', 'commode', 'scooter*', 'hearing aid*', 'gadget*'],
    means: ['assistive technology', 'equipment loan', 'medical equipment'],
  },

  // Help at home, days out, driving and food.
  {
    say: [
      'help at home',
      'in home',
      'someone to come in',
      'come to the house',
      'hire a caregiver',
      'hire help',
      'home nurse',
      'nurse at home',
      'bath',
      'shower',
      'showering',
      'get dressed',
      'personal care',
      'sit with',
      'stay with',
      'sitter',
      'companion*',
      'overnight',
    ],
    means: ['home health aide', 'home care', 'homemaker services'],
  },
  {
    say: [
      'while i work',
      'while im at work',
      'at work',
      'during the day',
      'day program',
      'daycare',
      'day care',
      'home alone',
      'alone all day',
      'check on',
      'keep an eye on',
      'watch her',
      'watch him',
    ],
    means: ['adult day care', 'adult day health'],
  },
  {
    say: [
      'my job',
      'time off work',
      'off work',
      'leave from work',
      'leave work',
      'miss work',
      'missing work',
      'quit my job',
      'lose my job',
      'boss',
      'employer',
      'work',
    ],
    means: ['fmla', 'medical leave'],
  },
  { say: ['ride*', 'appointments', 'get to', 'take to', 'drive to', 'bus', 'taxi', 'paratransit'], means: ['transportation', 'rides'] },
  { say: ['drive', 'drives', 'car keys', 'keys', 'license', 'behind the wheel', 'car accident*', 'fender bender'], means: ['older drivers', 'driving safety'] },
  { say: ['eat', 'eating', 'hungry', 'cook', 'cooking', 'grocery', 'losing weight', 'weight loss'], means: ['meals', 'nutrition'] },

  // Where to live.
  { say: ['rest home', 'old folks home', 'old peoples home', 'care home', 'old age home', 'convalescent home'], means: ['nursing home'] },
  {
    say: ['good', 'best', 'rating*', 'review*', 'compar*', 'choos*', 'pick*', 'quality', 'inspect*'],
    with: ['nursing home', 'home health', 'hospice', 'facility', 'facilities'],
    means: ['care compare', 'star ratings', 'compare providers'],
  },
  {
    say: [
      'live alone',
      'living alone',
      'lives alone',
      'cant stay home',
      'move in',
      'moving in',
      'senior living',
      'retirement home',
      'independent living',
      'downsiz*',
    ],
    means: ['assisted living', 'home care', 'area agency on aging'],
  },
  {
    say: ['where to start', 'where do i start', 'dont know where to start', 'first step*', 'new to this', 'who do i call', 'who to call'],
    means: ['first call', 'information and referral', 'area agency on aging'],
  },

  // Money, benefits and legal matters; specific rows before the general "money" row.
  {
    say: [
      'question*',
      'confus*',
      'advice',
      'explain',
      'understand',
      'help',
      'choose',
      'choosing',
      'pick*',
      'compar*',
      'switch*',
      'which plan',
      'plan*',
      'sign up',
      'enroll*',
    ],
    with: ['medicare'],
    means: ['ship', 'medicare counseling'],
  },
  {
    say: ['prescription*', 'pills', 'medication*', 'medicine*', 'drug*', 'pharmacy'],
    with: MONEY_CONTEXT,
    means: ['extra help', 'part d', 'prescription costs'],
  },
  {
    say: ['heat', 'heating bill', 'electric*', 'gas bill', 'power bill', 'light bill', 'utility', 'air condition*', 'cooling'],
    means: ['energy bills', 'utilities', 'liheap'],
  },
  { say: ['house', 'property', 'inheritance'], with: ['medicaid'], means: ['estate recovery'] },
  { say: ['gave away', 'give away', 'giving away', 'gift*', 'transfer*'], with: ['medicaid'], means: ['look-back period'] },
  { say: ['medi cal'], means: ['medicaid'] },
  {
    say: ['get paid', 'be paid', 'getting paid', 'paid caregiver', 'paid to', 'paid for', 'salary', 'compensat*'],
    means: ['paying for care', 'medicaid', 'hcbs waiver', 'stipend'],
  },
  {
    say: ['make decisions', 'make medical decisions', 'decide for', 'decisions for', 'speak for', 'cant decide', 'incompetent', 'competent'],
    means: ['health care proxy', 'guardianship', 'power of attorney'],
  },
  {
    say: ['lawyer*', 'papers', 'paperwork', 'estate plan*', 'sign for', 'in charge of', 'take over', 'taking over', 'finances', 'bank account*', 'poa'],
    means: ['power of attorney', 'legal', 'elder law'],
  },
  {
    say: ['money', 'pay for', 'paying for', 'afford*', 'expensive', 'cheap*', 'price*', 'how much', 'savings', 'funds', 'financial help'],
    means: ['paying for care', 'medicaid', 'long-term care'],
  },
  {
    say: ['vet', 'vets', 'army', 'navy', 'marine*', 'air force', 'coast guard', 'served', 'vietnam', 'korea', 'wwii', 'world war', 'gulf war'],
    means: ['veteran', 'va'],
  },

  // The caregiver's own strain, family and distance.
  {
    say: [
      'died',
      'passed away',
      'passed',
      'lost my',
      'death',
      'funeral',
      'widow',
      'widowed',
      'mourning',
      'grieving',
      'bereaved',
      'since losing',
      'after losing',
    ],
    means: ['grief', 'bereavement'],
  },
  {
    say: [
      'dying',
      'die',
      'end of life',
      'last days',
      'last weeks',
      'months to live',
      'terminal*',
      'comfort care',
      'comfortable',
      'stop treatment',
      'no more treatment',
    ],
    means: ['hospice', 'end of life', 'palliative care'],
  },
  {
    say: [
      'burned out',
      'burnt out',
      'burn out',
      'burning out',
      'exhausted',
      'exhausting',
      'exhaustion',
      'tired',
      'worn out',
      'wiped out',
      'need a break',
      'a break',
      'break',
      'breather',
      'time off',
      'time for myself',
      'time to myself',
      'day off',
      'vacation',
      'get away',
      'overwhelm*',
      'stressed',
      'stressed out',
      'drained',
      'end of my rope',
      'cant do this',
      'cant cope',
      'resent*',
    ],
    means: ['respite', 'caregiver burnout'],
  },
  { say: ['depressed', 'anxious', 'anxiety', 'panic', 'crying', 'sad'], means: ['mental health', 'depression', 'emotional support'] },
  { say: ['lonely', 'isolated', 'alone', 'no friends'], means: ['isolation', 'loneliness', 'peer support'] },
  {
    say: ['talk to', 'someone to talk', 'people who understand', 'other caregivers', 'others going through', 'vent', 'forum', 'not alone'],
    means: ['support group', 'peer support', 'caregiver support'],
  },
  {
    say: [
      'brother*',
      'sister*',
      'family fight*',
      'argu*',
      'wont help',
      'doesnt help',
      'dont help',
      'not helping',
      'no help from',
      'doing everything',
      'do everything',
      'all on me',
      'family meeting',
      'fair share',
    ],
    means: ['siblings', 'family conflict', 'sharing the load'],
  },
  {
    say: [
      'far away',
      'live far',
      'lives far',
      'miles away',
      'states away',
      'out of state',
      'another state',
      'different state',
      'across the country',
      'another city',
      'different city',
      'from a distance',
    ],
    means: ['long-distance caregiving', 'care manager'],
  },
  {
    say: ['discharged', 'leaving the hospital', 'coming home from the hospital', 'sent home', 'rehab', 'after surgery', 'broken hip', 'broke hip'],
    means: ['skilled nursing facility', 'home health care', 'observation status'],
  },
];

/**
 * Words that, in a caregiver's question, say who is asking about whom or fill the sentence,
 * but name no need. They are dropped from the question (only from questions, never from the
 * directory's text) so that "mom" or "help" cannot decide the ranking.
 */
const WHO_WORDS = [
  'mom',
  'moms',
  'mum',
  'mums',
  'mommy',
  'momma',
  'mama',
  'mother',
  'mothers',
  'dad',
  'dads',
  'daddy',
  'papa',
  'father',
  'fathers',
  'parent',
  'parents',
  'grandma',
  'grandmother',
  'grandpa',
  'grandfather',
  'grandparent',
  'grandparents',
  'aunt',
  'uncle',
  'he',
  'she',
  'him',
  'her',
  'his',
  'hers',
  'hes',
  'shes',
  'my',
  'our',
  'their',
  'them',
];

/** Words naming whom a question is about; a phrase still matches with one of them inside ("taking mom's money"). */
const WHO = new Set(WHO_WORDS);

export const LAY_NOISE = new Set([
  // Who the question is about.
  ...WHO_WORDS,
  'im',
  'ive',
  'id',
  'myself',
  'someone',
  'somebody',
  'anyone',
  'anybody',
  'old',
  'elderly',
  'senior',
  'seniors',
  // Filler; "help" in particular would otherwise match every helpline.
  'help',
  'helps',
  'helping',
  'need',
  'needs',
  'needed',
  'keep',
  'keeps',
  'kept',
  'keeping',
  'get',
  'gets',
  'getting',
  'got',
  'going',
  'really',
  'very',
  'so',
  'just',
  'still',
  'again',
  'anymore',
  'always',
  'now',
  'today',
  'lately',
  'all',
  'any',
  'some',
  'should',
  'would',
  'could',
  'does',
  'did',
  'doesnt',
  'dont',
  'cant',
  'cannot',
  'wont',
  'isnt',
  'wasnt',
  'arent',
  'didnt',
  'shouldnt',
  'wouldnt',
  'couldnt',
  'please',
  'find',
  'finding',
  'look',
  'looking',
  'tell',
  'know',
  'want',
  'wants',
  'think',
  'make',
  'go',
  'why',
  'which',
  'there',
  'here',
  'much',
  'many',
  'lot',
  'lots',
  'too',
  'even',
  'every',
  'more',
  'thing',
  'things',
  'way',
  'caring',
]);

export interface LayReading {
  /** The question's own words that no row translated, without noise words. */
  words: string[];
  /** The question's words that a row translated (the search keeps those the directory itself uses). */
  translated: string[];
  /** Directory terms the question's everyday phrases stand for. */
  meaning: string[];
}

type Pattern = readonly string[];

const compile = (phrase: string): Pattern =>
  phrase
    .toLowerCase()
    .replace(/['’‘`]/g, '')
    .split(/[^\p{L}\p{N}*]+/u)
    .filter((w) => w !== '');
const wordMatches = (pattern: string, word: string): boolean => (pattern.endsWith('*') ? word.startsWith(pattern.slice(0, -1)) : word === pattern);

/**
 * Positions where `pattern` occurs in `words`, skipping any that would reuse a word in `used`.
 * Words naming a person may sit between a phrase's words ("kick mom out" matches "kick* out").
 */
function findAt(words: readonly string[], pattern: Pattern, used?: ReadonlySet<number>): number[] {
  for (let i = 0; i < words.length; i++) {
    const span: number[] = [];
    let j = i;
    for (const part of pattern) {
      if (span.length > 0) while (j < words.length && WHO.has(words[j]!) && !wordMatches(part, words[j]!)) j++;
      if (j >= words.length || used?.has(j) || !wordMatches(part, words[j]!)) break;
      span.push(j++);
    }
    if (span.length === pattern.length) return span;
  }
  return [];
}

const COMPILED = LAY_TERMS.map((row) => ({
  say: row.say.map(compile),
  with: row.with?.map(compile),
  means: row.means,
}));

/**
 * The `say` patterns of every row, numbered in table order, by their first word: a pattern whose
 * first word matches none of the question's words cannot occur in it, so a question is checked
 * only against the few rows one of its words can start, in the table's order.
 */
const SAY = COMPILED.flatMap((row, r) => row.say.map((pattern) => ({ r, pattern })));
const BY_FIRST = new Map<string, number[]>();
const BY_PREFIX: [string, number[]][] = [];
SAY.forEach(({ pattern }, id) => {
  const first = pattern[0] ?? '';
  if (first.endsWith('*')) {
    const prefix = first.slice(0, -1);
    const entry = BY_PREFIX.find(([p]) => p === prefix);
    if (entry) entry[1].push(id);
    else BY_PREFIX.push([prefix, [id]]);
  } else BY_FIRST.set(first, [...(BY_FIRST.get(first) ?? []), id]);
});

/** The numbers of the `say` patterns whose first word one of `words` matches, ascending. */
function candidatePatterns(words: readonly string[]): number[] {
  const ids = new Set<number>();
  for (const w of words) {
    for (const id of BY_FIRST.get(w) ?? []) ids.add(id);
    for (const [prefix, list] of BY_PREFIX) if (w.startsWith(prefix)) for (const id of list) ids.add(id);
  }
  return [...ids].sort((a, b) => a - b);
}

/**
 * Reads a caregiver's question, given as lower-cased words without accents or apostrophes:
 * translates everyday phrases into directory terms and drops family words and filler.
 */
export function readLayQuestion(words: readonly string[]): LayReading {
  const used = new Set<number>();
  const meaning: string[] = [];
  const meaningWords: string[] = [];
  const candidates = candidatePatterns(words);
  for (let c = 0; c < candidates.length;) {
    // The candidates of one row, in the row's order; a row none of them belongs to cannot match.
    const r = SAY[candidates[c]!]!.r;
    const row = COMPILED[r]!;
    const patterns: Pattern[] = [];
    for (; c < candidates.length && SAY[candidates[c]!]!.r === r; c++) patterns.push(SAY[candidates[c]!]!.pattern);
    if (row.with && !row.with.some((p) => findAt(words, p).length > 0 || findAt(meaningWords, p).length > 0)) continue;
    let matched = false;
    for (const pattern of patterns) {
      for (let span = findAt(words, pattern, used); span.length > 0; span = findAt(words, pattern, used)) {
        span.forEach((j) => used.add(j));
        matched = true;
      }
    }
    if (!matched) continue;
    for (const term of row.means) {
      if (!meaning.includes(term)) meaning.push(term);
      meaningWords.push(...compile(term));
    }
  }
  return {
    words: words.filter((w, i) => !used.has(i) && !LAY_NOISE.has(w)),
    translated: words.filter((w, i) => used.has(i) && !LAY_NOISE.has(w)),
    meaning,
  };
}
