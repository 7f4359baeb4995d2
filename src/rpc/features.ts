// Prompts and resources beside the tools: declared once by a slice, served by rpc/mcp.ts in both eras.
import { RPC } from './codes.js';
import { InsufficientScope, RpcError } from './errors.js';
import type { CallContext, ScopeCheck } from './tool.js';

/** A prompt as clients and discovery documents see it (prompts/list). */
export interface PromptDeclaration {
  name: string;
  title: string;
  description: string;
  arguments: readonly { name: string; description: string; required: boolean }[];
}

export type PromptMessage = { role: 'user' | 'assistant'; content: { type: 'text'; text: string } };

export interface PromptDefinition extends PromptDeclaration {
  /** The OAuth scope a caller needs to be shown the prompt and to get it, enforced by the server. */
  scope?: string;
  /** Builds the messages from the arguments, already checked for the required ones. */
  get(args: Record<string, string>, ctx: CallContext): Promise<{ description?: string; messages: PromptMessage[] }>;
}

/** A URI template clients fill in themselves (resources/templates/list). */
export interface ResourceTemplateDeclaration {
  uriTemplate: string;
  name: string;
  title: string;
  description: string;
  mimeType: string;
}

export interface ResourceEntry {
  uri: string;
  name: string;
  title: string;
  description?: string;
  mimeType: string;
}

export interface ResourceContents {
  uri: string;
  mimeType: string;
  text: string;
}

export interface ResourceProvider {
  templates: readonly ResourceTemplateDeclaration[];
  /** The OAuth scope a caller needs to be shown the resources and to read one, enforced by the server. */
  scope?: string;
  list(ctx: CallContext): Promise<ResourceEntry[]>;
  /** The contents of a URI this provider serves; undefined when the URI is not one of its shapes. */
  read(uri: string, ctx: CallContext): Promise<ResourceContents[] | undefined>;
}

export interface Features {
  prompts?: readonly PromptDefinition[];
  resources?: ResourceProvider;
}

/** The methods these features add, in both eras. */
export const FEATURE_METHODS = ['prompts/list', 'prompts/get', 'resources/list', 'resources/read', 'resources/templates/list'] as const;

const stringArgs = (raw: unknown): Record<string, string> | undefined => {
  if (raw === undefined) return {};
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const entries = Object.entries(raw as Record<string, unknown>);
  return entries.every(([, v]) => typeof v === 'string') ? Object.fromEntries(entries as [string, string][]) : undefined;
};

const invalid = (message: string, hint: string, extra: Record<string, unknown> = {}) =>
  new RpcError(RPC.INVALID_PARAMS, `Invalid params: ${message}`, { hint, ...extra });

export class FeatureSet {
  constructor(
    private readonly features: Features,
    private readonly holds: ScopeCheck,
  ) {}

  /** Whether a caller may see and use a feature that declares `scope`. */
  private allowed(f: { scope?: string } | undefined, caller: unknown): boolean {
    return !f?.scope || this.holds(caller, f.scope);
  }

  /** What initialize (every declared feature) and server/discover (what this caller is shown) advertise. */
  capabilities(ctx?: CallContext): Record<string, unknown> {
    const shown = (f: { scope?: string }) => !ctx || this.allowed(f, ctx.caller);
    return {
      ...(this.features.prompts?.some(shown) ? { prompts: { listChanged: false } } : {}),
      ...(this.features.resources && shown(this.features.resources) ? { resources: { subscribe: false, listChanged: false } } : {}),
    };
  }

  handles(method: string): boolean {
    const prompts = this.features.prompts?.length ? method.startsWith('prompts/') : false;
    return (FEATURE_METHODS as readonly string[]).includes(method) && (prompts || (this.features.resources !== undefined && method.startsWith('resources/')));
  }

  /** Answers one of FEATURE_METHODS; `cache` adds the 2026-07-28 caching hints. */
  async dispatch(
    method: string,
    params: Record<string, unknown> | undefined,
    ctx: CallContext,
    cache: (ttlMs?: number) => Record<string, unknown>,
  ): Promise<Record<string, unknown>> {
    const caller = ctx.caller;
    const prompts = (this.features.prompts ?? []).filter((p) => this.allowed(p, caller));
    const resources = this.features.resources;
    const resourcesShown = resources !== undefined && this.allowed(resources, caller);
    switch (method) {
      case 'prompts/list':
        return { prompts: prompts.map(({ name, title, description, arguments: args }) => ({ name, title, description, arguments: args })), ...cache() };
      case 'prompts/get':
        // Looked up among all prompts: one the caller is not shown refuses it in its own words (a scope).
        return this.getPrompt(this.features.prompts ?? [], params, ctx);
      case 'resources/list':
        return { resources: resourcesShown ? await resources.list(ctx) : [], ...cache() };
      case 'resources/templates/list':
        return { resourceTemplates: resourcesShown ? resources.templates : [], ...cache() };
      default: {
        const uri = params?.uri;
        if (typeof uri !== 'string' || uri === '')
          throw invalid('uri: a non-empty string is required', 'resources/read takes {"uri": string} from resources/list or a template.');
        if (resources && !resourcesShown) throw new InsufficientScope(resources.scope!);
        const contents = resources ? await resources.read(uri, ctx) : undefined;
        if (!contents) throw invalid(`Resource not found: ${uri}`, 'Call resources/list or resources/templates/list for the URIs this server serves.', { uri });
        return { contents, ...cache(0) };
      }
    }
  }

  private async getPrompt(
    prompts: readonly PromptDefinition[],
    params: Record<string, unknown> | undefined,
    ctx: CallContext,
  ): Promise<Record<string, unknown>> {
    const name = params?.name;
    const prompt = typeof name === 'string' ? prompts.find((p) => p.name === name) : undefined;
    if (!prompt)
      throw invalid(
        typeof name === 'string' ? `Unknown prompt: ${name}` : 'name: a string is required',
        `Available prompts: ${prompts.map((p) => p.name).join(', ') || 'none'}. Call prompts/list.`,
      );
    const args = stringArgs(params?.arguments);
    if (!args) throw invalid('arguments: an object of strings is expected', 'prompts/get takes {"name": string, "arguments": {string: string}}.');
    const missing = prompt.arguments.find((a) => a.required && !args[a.name]?.trim());
    if (missing) throw invalid(`arguments.${missing.name}: required`, `${prompt.name} needs ${missing.name}: ${missing.description}`);
    if (!this.allowed(prompt, ctx.caller)) throw new InsufficientScope(prompt.scope!);
    return { ...(await prompt.get(args, ctx)) };
  }
}
