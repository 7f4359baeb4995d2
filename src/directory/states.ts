/**
 * The 50 US states plus the District of Columbia, with their USPS codes.
 * Used by the directory's `state` filter: callers may pass either the code
 * ("CA") or the full name ("California"), in any letter case.
 */

export interface UsState {
  readonly code: string;
  readonly name: string;
}

export const STATES: readonly UsState[] = [
  { code: 'AL', name: 'Alabama' },
  { code: 'AK', name: 'Alaska' },
  { code: 'AZ', name: 'Arizona' },
  { code: 'AR', name: 'Arkansas' },
  { code: 'CA', name: 'California' },
  { code: 'CO', name: 'Colorado' },
  { code: 'CT', name: 'Connecticut' },
  { code: 'DE', name: 'Delaware' },
  { code: 'DC', name: 'District of Columbia' },
  { code: 'FL', name: 'Florida' },
  { code: 'GA', name: 'Georgia' },
  { code: 'HI', name: 'Hawaii' },
  { code: 'ID', name: 'Idaho' },
  { code: 'IL', name: 'Illinois' },
  { code: 'IN', name: 'Indiana' },
  { code: 'IA', name: 'Iowa' },
  { code: 'KS', name: 'Kansas' },
  { code: 'KY', name: 'Kentucky' },
  { code: 'LA', name: 'Louisiana' },
  { code: 'ME', name: 'Maine' },
  { code: 'MD', name: 'Maryland' },
  { code: 'MA', name: 'Massachusetts' },
  { code: 'MI', name: 'Michigan' },
  { code: 'MN', name: 'Minnesota' },
  { code: 'MS', name: 'Mississippi' },
  { code: 'MO', name: 'Missouri' },
  { code: 'MT', name: 'Montana' },
  { code: 'NE', name: 'Nebraska' },
  { code: 'NV', name: 'Nevada' },
  { code: 'NH', name: 'New Hampshire' },
  { code: 'NJ', name: 'New Jersey' },
  { code: 'NM', name: 'New Mexico' },
  { code: 'NY', name: 'New York' },
  { code: 'NC', name: 'North Carolina' },
  { code: 'ND', name: 'North Dakota' },
  { code: 'OH', name: 'Ohio' },
  { code: 'OK', name: 'Oklahoma' },
  { code: 'OR', name: 'Oregon' },
  { code: 'PA', name: 'Pennsylvania' },
  { code: 'RI', name: 'Rhode Island' },
  { code: 'SC', name: 'South Carolina' },
  { code: 'SD', name: 'South Dakota' },
  { code: 'TN', name: 'Tennessee' },
  { code: 'TX', name: 'Texas' },
  { code: 'UT', name: 'Utah' },
  { code: 'VT', name: 'Vermont' },
  { code: 'VA', name: 'Virginia' },
  { code: 'WA', name: 'Washington' },
  { code: 'WV', name: 'West Virginia' },
  { code: 'WI', name: 'Wisconsin' },
  { code: 'WY', name: 'Wyoming' },
];

/** The USPS codes, in the same order as {@link STATES}. */
export const STATE_CODES: readonly string[] = STATES.map((s) => s.code);

/** Collapses case, surrounding and repeated whitespace, and dots ("D.C." → "dc"). */
function normalizeStateInput(input: string): string {
  return input.trim().toLowerCase().replace(/\./g, '').replace(/\s+/g, ' ');
}

const LOOKUP: ReadonlyMap<string, UsState> = (() => {
  const map = new Map<string, UsState>();
  for (const state of STATES) {
    map.set(normalizeStateInput(state.code), state);
    map.set(normalizeStateInput(state.name), state);
  }
  // Common spellings of the District that are neither its code nor its full name.
  const dc = STATES.find((s) => s.code === 'DC');
  if (dc) {
    map.set('washington dc', dc);
    map.set('washington, dc', dc);
  }
  return map;
})();

/**
 * Resolves a USPS code or a full state name (case-insensitive) to the state.
 * Returns `undefined` for anything that is not one of the 50 states or DC.
 */
export function resolveState(input: string): { code: string; name: string } | undefined {
  if (typeof input !== 'string') return undefined;
  const found = LOOKUP.get(normalizeStateInput(input));
  return found ? { code: found.code, name: found.name } : undefined;
}
