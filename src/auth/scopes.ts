// The scopes of the workspace MCP endpoint, declared once: what OAuth grants and the workspace
// enforces, with the plain-language line the consent page shows.

export const SCOPES = ['profile:read', 'care_circle:read', 'care_circle:write'] as const;
export type Scope = (typeof SCOPES)[number];

export const SCOPE_TEXT: Record<Scope, { title: string; reveals: string }> = {
  'profile:read': {
    title: 'Your profile',
    reveals: 'Your name, email address and account type, and the name of your family workspace with how many people are in it.',
  },
  'care_circle:read': {
    title: 'Your loved ones and their care events',
    reveals: 'The names of the loved ones in your workspace and their recent care events: visits, notes, medications, vital signs and forwarded mail.',
  },
  'care_circle:write': {
    title: "Add to your loved ones' care record",
    reveals:
      'Add notes, doses, home readings, medications, appointments and tasks in your name, take or finish tasks, and correct or withdraw what was added. Changing a medication or withdrawing an entry asks you first.',
  },
};

export const isScope = (value: string): value is Scope => (SCOPES as readonly string[]).includes(value);

/** The scopes named in a space-separated string that are ours, in our order, without repeats. */
export function scopesIn(value: string | undefined): Scope[] {
  const named = new Set((value ?? '').split(' ').filter(Boolean));
  return SCOPES.filter((s) => named.has(s));
}
