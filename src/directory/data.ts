/**
 * The public care-resource directory's data: national resources for family
 * caregivers, community channels and care-planning glossary terms.
 *
 * The three JSON files under ./data/ are reviewed by hand (see
 * ./data/SOURCES.md). They are read once per process and validated with zod;
 * a bad file fails loudly with the file name and the path of the bad field.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { STATE_CODES } from './states.js';

export const RESOURCE_CATEGORY_VALUES = [
  'helpline',
  'government',
  'dementia',
  'disease-specific',
  'respite',
  'hospice-and-grief',
  'medicare-and-insurance',
  'benefits-and-money',
  'legal',
  'elder-abuse-and-fraud',
  'crisis',
  'veterans',
  'caregiver-support',
  'housing-and-facilities',
  'nutrition-and-transport',
  'care-management',
] as const;

export type ResourceCategory = (typeof RESOURCE_CATEGORY_VALUES)[number];

const slug = z.string().regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'must be a kebab-case slug (a-z, 0-9 and single hyphens)');

const text = (max: number) =>
  z
    .string()
    .min(1, 'must not be empty')
    .max(max, `must be at most ${max} characters`)
    .refine((s) => s.trim() === s, 'must not start or end with whitespace');

const httpsUrl = z.string().refine((s) => {
  try {
    const u = new URL(s);
    return u.protocol === 'https:' && u.hostname.includes('.');
  } catch {
    return false;
  }
}, 'must be an absolute https:// URL');

/** A US phone number written 1-NNN-NNN-NNNN, or a three-digit service code such as 988 or 211. */
const phone = z.string().regex(/^(?:1-\d{3}-\d{3}-\d{4}|[2-9]\d\d)$/, 'must look like 1-800-677-1116, or a 3-digit code such as 988');

const languageCode = z.string().regex(/^[a-z]{2}$/, 'must be a two-letter ISO 639-1 code');

const stateCodeSet = new Set<string>(STATE_CODES);
/** "national", or the USPS code of the one state (or DC) a resource serves. */
const coverage = z.union([z.literal('national'), z.string().refine((s) => stateCodeSet.has(s), 'must be "national" or a USPS state code such as "OH"')]);

export const resourceSchema = z
  .object({
    id: slug,
    name: text(120),
    category: z.enum(RESOURCE_CATEGORY_VALUES),
    summary: text(600),
    phone: phone.nullable(),
    website: httpsUrl,
    coverage,
    hours: text(200).nullable(),
    languages: z.array(languageCode).min(1, 'must list at least one language'),
    tags: z.array(text(60).regex(/^[a-z0-9' -]+$/, 'must be lowercase words')).min(1, 'must have at least one tag'),
    source: httpsUrl,
  })
  .strict();

export const glossaryTermSchema = z
  .object({
    id: slug,
    term: text(120),
    definition: text(900),
    related: z.array(slug),
  })
  .strict();

export const channelSchema = z
  .object({
    slug,
    name: text(120),
    summary: text(600),
    topics: z.array(text(80)).min(1, 'must have at least one topic'),
    language: z.enum(['en', 'es']),
  })
  .strict();

export const resourcesFileSchema = z.array(resourceSchema);
export const glossaryFileSchema = z.array(glossaryTermSchema);
export const channelsFileSchema = z.array(channelSchema);

export type Resource = z.infer<typeof resourceSchema>;
export type GlossaryTerm = z.infer<typeof glossaryTermSchema>;
export type Channel = z.infer<typeof channelSchema>;

export interface DirectoryData {
  resources: Resource[];
  glossary: GlossaryTerm[];
  channels: Channel[];
}

export const DIRECTORY_FILES = {
  resources: 'resources.json',
  glossary: 'glossary.json',
  channels: 'channels.json',
} as const;

/** Formats a zod issue path as `[3].phone` so an error names the exact field. */
function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out === '' ? '(root)' : out;
}

function parseFile<T>(file: string, schema: z.ZodType<T>, raw: unknown): T {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  const issues = result.error.issues.slice(0, 5).map((i) => `${formatPath(i.path)}: ${i.message}`);
  const more = result.error.issues.length > 5 ? ` (and ${result.error.issues.length - 5} more)` : '';
  throw new Error(`directory data file ${file} is invalid: ${issues.join('; ')}${more}`);
}

function fail(file: string, field: string, message: string): never {
  throw new Error(`directory data file ${file} is invalid: ${field}: ${message}`);
}

/**
 * Validates already-decoded JSON for the three files, including the checks that
 * span records: unique ids and slugs, and glossary cross-references.
 */
export function parseDirectoryData(raw: { resources: unknown; glossary: unknown; channels: unknown }): DirectoryData {
  const resources = parseFile(DIRECTORY_FILES.resources, resourcesFileSchema, raw.resources);
  const glossary = parseFile(DIRECTORY_FILES.glossary, glossaryFileSchema, raw.glossary);
  const channels = parseFile(DIRECTORY_FILES.channels, channelsFileSchema, raw.channels);

  const firstDuplicate = (ids: string[]): number => {
    const seen = new Set<string>();
    return ids.findIndex((id) => (seen.has(id) ? true : (seen.add(id), false)));
  };
  const dupResource = firstDuplicate(resources.map((r) => r.id));
  if (dupResource >= 0) fail(DIRECTORY_FILES.resources, `[${dupResource}].id`, `duplicate id "${resources[dupResource]?.id}"`);
  const dupTerm = firstDuplicate(glossary.map((g) => g.id));
  if (dupTerm >= 0) fail(DIRECTORY_FILES.glossary, `[${dupTerm}].id`, `duplicate id "${glossary[dupTerm]?.id}"`);
  const dupChannel = firstDuplicate(channels.map((c) => c.slug));
  if (dupChannel >= 0) fail(DIRECTORY_FILES.channels, `[${dupChannel}].slug`, `duplicate slug "${channels[dupChannel]?.slug}"`);

  const termIds = new Set(glossary.map((g) => g.id));
  glossary.forEach((g, i) => {
    g.related.forEach((id, j) => {
      if (!termIds.has(id)) fail(DIRECTORY_FILES.glossary, `[${i}].related[${j}]`, `unknown glossary id "${id}"`);
      if (id === g.id) fail(DIRECTORY_FILES.glossary, `[${i}].related[${j}]`, 'a term must not list itself');
    });
  });

  return { resources, glossary, channels };
}

function readJson(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(new URL(`./data/${file}`, import.meta.url), 'utf8');
  } catch (err) {
    throw new Error(`directory data file ${file} could not be read: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new Error(`directory data file ${file} is not valid JSON: ${(err as Error).message}`);
  }
}

let cached: DirectoryData | undefined;

/** Reads and validates the directory's JSON files; the result is cached for the life of the process. */
export function loadDirectoryData(): DirectoryData {
  cached ??= parseDirectoryData({
    resources: readJson(DIRECTORY_FILES.resources),
    glossary: readJson(DIRECTORY_FILES.glossary),
    channels: readJson(DIRECTORY_FILES.channels),
  });
  return cached;
}
