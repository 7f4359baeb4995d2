// The public directory's MCP tools: search, channel details, and the long-term-care cost calculator.
import { z } from 'zod';
import { ToolError } from '../rpc/errors.js';
import { implementTool, type ToolDeclaration, type ToolDefinition } from '../rpc/mcp.js';
import { calculateLongTermCareCost } from './cost.js';
import type { CostData } from './costData.js';
import { costInputSchema } from './costInput.js';
import { channelOutput, costOutput, searchOutput } from './outputs.js';
import { RESOURCE_CATEGORY_VALUES, type DirectoryData } from './data.js';
import type { DirectoryIndex } from './search.js';
import { resolveState } from './states.js';

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

/** The directory's tools as clients and discovery documents see them. */
export const DIRECTORY_TOOLS = {
  search: {
    name: 'search_care_resources',
    title: 'Search care resources',
    description:
      "Search carecircle's directory of national US resources for family caregivers (helplines, respite, hospice, Medicare counseling, veterans, elder-abuse lines and more), community channels and care-planning glossary terms. Returns the best matches with phone numbers and links.",
    annotations: READ_ONLY,
    output: searchOutput,
  },
  channel: {
    name: 'get_channel',
    title: 'Get a community channel',
    description: 'Details of one carecircle community channel (what it is for, its topics, language and link), by its slug.',
    annotations: READ_ONLY,
    output: channelOutput,
  },
  cost: {
    name: 'calculate_long_term_care_cost',
    title: 'Estimate long-term care costs',
    description:
      'Estimate what long-term care costs, nationally or in one US state, from published survey medians (CareScout/Genworth Cost of Care Survey): monthly, annual, and year-by-year with an annual increase, plus the survey year and source of each figure quoted.',
    annotations: READ_ONLY,
    output: costOutput,
  },
} as const satisfies Record<string, ToolDeclaration>;

const stateArg = z
  .string()
  .trim()
  .refine((s) => resolveState(s) !== undefined, { message: 'must be a US state or DC, as a USPS code ("OH") or full name ("Ohio")' });

export interface DirectoryDeps {
  data: DirectoryData;
  index: DirectoryIndex;
  costs: CostData;
  siteUrl: string;
}

const searchInput = z
  .object({
    query: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(200, 'must be at most 200 characters')
      .describe('What to look for, in plain words: "respite care", "dementia helpline", "medicaid look-back".'),
    limit: z.number().int().min(1).max(25).default(5).describe('How many results, 1-25 (default 5).'),
    category: z
      .enum([...RESOURCE_CATEGORY_VALUES, 'channel', 'glossary'])
      .optional()
      .describe('Only this resource category, or only channels or glossary terms.'),
    state: stateArg.optional().describe('A US state (USPS code or name): only resources that serve it.'),
  })
  .strict();

const SEARCH_KEYS = new Set(['query', 'limit', 'category', 'state']);
const SEARCH_CATEGORIES = new Set<unknown>([...RESOURCE_CATEGORY_VALUES, 'channel', 'glossary']);

/** Well-formed search arguments as `searchInput` reads them; anything else is left to it, to name the fault. */
function acceptSearch(args: Record<string, unknown>): z.output<typeof searchInput> | undefined {
  for (const k in args) if (!SEARCH_KEYS.has(k)) return undefined;
  const { query, limit = 5, category, state } = args;
  if (typeof query !== 'string' || typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > 25) return undefined;
  if (category !== undefined && !SEARCH_CATEGORIES.has(category)) return undefined;
  if (state !== undefined && (typeof state !== 'string' || resolveState(state.trim()) === undefined)) return undefined;
  const trimmed = query.trim();
  if (trimmed.length < 1 || trimmed.length > 200) return undefined;
  // A member given as undefined (in-process callers only) stays, as the schema keeps it.
  return {
    query: trimmed,
    limit,
    ...('category' in args ? { category: category as z.output<typeof searchInput>['category'] } : {}),
    ...('state' in args ? { state: state?.trim() } : {}),
  };
}

export function directoryTools(deps: DirectoryDeps): ToolDefinition[] {
  const slugs = deps.data.channels.map((c) => c.slug);
  return [
    implementTool(DIRECTORY_TOOLS.search, {
      input: searchInput,
      accept: acceptSearch,
      handler: async (args) => {
        const hits = deps.index.search(args.query, {
          limit: args.limit,
          ...(args.category ? { category: args.category } : {}),
          ...(args.state ? { state: resolveState(args.state)?.code ?? args.state } : {}),
        });
        return { structured: { query: args.query, count: hits.length, results: hits } };
      },
    }),
    implementTool(DIRECTORY_TOOLS.channel, {
      input: z
        .object({
          slug: z
            .string()
            .trim()
            .min(1, 'must not be empty')
            .max(100)
            .describe(`The channel slug, for example "${slugs[0] ?? 'dementia-and-alzheimers'}".`),
        })
        .strict(),
      handler: async ({ slug }) => {
        const channel = deps.data.channels.find((c) => c.slug === slug.toLowerCase());
        if (!channel)
          throw new ToolError(
            `Unknown channel "${slug}". Valid slugs come from search_care_resources with category "channel" (or ${deps.siteUrl}/channels): ${slugs.join(', ')}.`,
          );
        return { structured: { ...channel, url: `${deps.siteUrl}/channels/${channel.slug}` } };
      },
    }),
    implementTool(DIRECTORY_TOOLS.cost, {
      input: costInputSchema,
      handler: async (args) => ({ structured: { ...calculateLongTermCareCost(args, deps.costs) } }),
    }),
  ];
}
