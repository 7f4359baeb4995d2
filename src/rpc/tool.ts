// How a tool is declared once by its slice and implemented beside it; its schemas as clients see them.
import { z } from 'zod';
import type { ElicitAnswer, ElicitQuestion } from './writes.js';

/** Whether a caller holds an OAuth scope: the one question the server asks of a declared `scope`. */
export type ScopeCheck = (caller: unknown, scope: string) => boolean;

export interface CallContext {
  requestId: string;
  clientIp: string;
  protocolVersion: string;
  /** True for a 2026-07-28 request: stateless, `resultType` on every result. */
  modern?: boolean;
  /** Whatever the surface verified about the caller (absent on public endpoints). */
  caller?: unknown;
  /** Told, for each write tool call (by JSON-RPC id), what it changed and how it was confirmed: for the audit log. */
  reportWrite?: (id: unknown, report: WriteReport) => void;
  /** A 2025-era request's `Mcp-Session-Id`: what its client declared at initialize (rpc/writes.ts). */
  sessionId?: string;
  /** A single 2025-era message, whose reply may be an event stream: where a question for the person goes. */
  streamQuestion?: (question: ElicitQuestion) => void;
  /** The person's answer to the question this call put on its stream, handed back by the gateway. */
  answer?: ElicitAnswer;
}

/** What one write tool call did, for its audit row. */
export interface WriteReport {
  tool: string;
  /** The records it added or changed (ids), when it applied. */
  targets: readonly string[];
  /** not_needed, asked (input_required or elicitation/create sent), confirmed, declined, cancelled, unanswered, refused (a bad requestState or question id), waiting_in_app, approved_in_app, declined_in_app. */
  confirmation: string;
  /** Answered with the first result of the same write, without applying it again. */
  replayed: boolean;
}

export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface ToolResult {
  /** The machine-readable result: sent as JSON text, and as `structuredContent` when negotiated. */
  structured: Record<string, unknown>;
  /** A readable summary, sent as the first text block when present. */
  summary?: string;
  /** For a write: the ids of the records it added or changed, named in its audit row (default: the result's `id` and `…Id` fields). */
  targets?: readonly string[];
}

/** What a tool is, as clients and discovery documents see it: declared once by its slice. */
export interface ToolDeclaration {
  name: string;
  title: string;
  description: string;
  annotations: ToolAnnotations;
  /** What `structuredContent` holds; served as `outputSchema` from 2025-06-18 on. */
  output: z.ZodType;
  /**
   * The OAuth scope a caller needs to be shown the tool and to call it; none: any verified caller.
   * The server enforces it (tools/list, server/discover and tools/call), never the handler.
   */
  scope?: string;
}

export interface ToolDefinition<S extends z.ZodType = z.ZodType> extends ToolDeclaration {
  input: S;
  /**
   * A hand check of the arguments for the common case: what `input` would make of them, or
   * undefined to let `input` decide (and name the fault). It must never accept what `input` refuses.
   */
  accept?: (args: Record<string, unknown>) => z.output<S> | undefined;
  handler: (args: z.output<S>, ctx: CallContext) => Promise<ToolResult>;
  /**
   * For a consequential write (changing or stopping a medication, withdrawing an entry, anything
   * that notifies others): the question the person must see and approve before the handler runs,
   * in plain words ("Stop Metformin 500 mg for Ada?"), or undefined when these arguments need no
   * confirmation. The MCP server asks it (the client's `input_required` round trip or elicitation,
   * else a change the person approves in the app); the handler never asks.
   */
  confirm?: (args: z.output<S>, ctx: CallContext) => Promise<string | undefined> | string | undefined;
  /**
   * With `confirm`: what the question was about as it stood when asked (a medication's version, an
   * entry's state). A change approved later in the app is applied only while this is unchanged;
   * otherwise it is refused as stale, since the person approved something that is no longer so.
   */
  basis?: (args: z.output<S>, ctx: CallContext) => Promise<string | undefined>;
}

/** Helps TypeScript infer a tool's argument type from its schema. */
export const defineTool = <S extends z.ZodType>(tool: ToolDefinition<S>): ToolDefinition => tool as unknown as ToolDefinition;

/** A declared tool with its arguments and handler; infers the argument type from the schema. */
export const implementTool = <S extends z.ZodType>(
  declaration: ToolDeclaration,
  impl: Pick<ToolDefinition<S>, 'input' | 'accept' | 'handler' | 'confirm' | 'basis'>,
): ToolDefinition => ({ ...declaration, ...impl }) as unknown as ToolDefinition;

/** JSON Schema of a tool's arguments, generated once from zod. */
export function toInputSchema(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete json.$schema;
  return json;
}

/** JSON Schema of a tool's `structuredContent`, generated once from zod. */
export function toOutputSchema(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) as Record<string, unknown>;
  delete json.$schema;
  return json;
}
