// `carecircle-mcp --check`: the steps a first connection takes, each with a plain result and, when
// it fails, the fix. Uses the same Upstream as the bridge, so it fails the way the bridge would.
import { performance } from 'node:perf_hooks';
import { OAuthCredential, type Credential } from './credentials.js';
import { identifyEndpoint, kindOfName, TOOL_SCOPES, toolAccess, wrongEndpoint, type EndpointKind } from './identify.js';
import type { RpcErrorObject } from './messages.js';
import { loginCommand, type BridgeOptions } from './options.js';
import type { Exchange, Upstream } from './upstream.js';
import { COMMAND } from './command.js';

type Step = { ok: true; result: Record<string, unknown>; ms: number } | { ok: false; error: RpcErrorObject; ms: number };

let nextId = 1;

async function call(upstream: Upstream, method: string, params: Record<string, unknown>): Promise<Step> {
  const started = performance.now();
  const exchange: Exchange = await upstream.exchange(JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }), `check ${method}`);
  const ms = Math.round(performance.now() - started);
  if (exchange.kind === 'failed') return { ok: false, error: exchange.error, ms };
  const body = exchange.kind === 'reply' ? (exchange.body as { result?: Record<string, unknown>; error?: RpcErrorObject }) : undefined;
  if (body?.error) return { ok: false, error: body.error, ms };
  if (!body?.result)
    return {
      ok: false,
      error: { code: -32603, message: 'the server sent no result', data: { hint: "Check that CARECIRCLE_URL points at carecircle's app." } },
      ms,
    };
  return { ok: true, result: body.result, ms };
}

/** Runs the check, writing a report with `print`; resolves to true when the bridge is ready. */
export async function runCheck(
  options: BridgeOptions,
  credential: Credential,
  upstream: Upstream,
  print: (line: string) => void,
  userAgent = 'carecircle-mcp',
): Promise<boolean> {
  print(`${COMMAND} --check`);
  print(`  endpoint  ${options.endpoint}`);
  const oauth = credential instanceof OAuthCredential ? credential : undefined;
  const accepted = oauth ? 'sign-in accepted' : 'key accepted';
  // Which credential, never the secret: the key's last four characters, or where the sign-in is kept and what it may read.
  if (!oauth) print(`  key       ${credential.describe().replace(/^key /, '')}`);
  else print(`  sign-in   OAuth (${COMMAND} --login), stored in ${oauth.file}`);
  // A sign-in that has ended, or cannot be renewed, fails here, before anything is sent.
  const usable = oauth ? await oauth.authorization() : undefined;
  if (oauth) print(`  scopes    ${usable?.ok ? oauth.scope || 'none granted' : 'none: not signed in'}`);
  print('');
  const failWith = (what: string, message: string, hint: unknown): false => {
    print(`  FAIL  ${what}: ${message}`);
    print(`        fix: ${typeof hint === 'string' ? hint : 'see the message above.'}`);
    print('');
    print(`Verdict: NOT READY. Fix the step marked FAIL, then run ${COMMAND} --check again.`);
    return false;
  };
  const fail = (what: string, step: Extract<Step, { ok: false }>): false => failWith(what, `${step.error.message} (${step.error.code})`, step.error.data?.hint);
  // The directory and the sandbox answer initialize too; only their names tell them from the workspace.
  const notWorkspace = (kind: Exclude<EndpointKind, 'workspace'>): false => {
    const wrong = wrongEndpoint(kind, options);
    return failWith('the workspace endpoint', wrong.message, wrong.hint);
  };

  const kind = await identifyEndpoint(options, userAgent);
  if (kind && kind !== 'workspace') return notWorkspace(kind);

  if (usable && !usable.ok) return fail(accepted, { ok: false, error: usable.error, ms: 0 });

  const init = await call(upstream, 'initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'carecircle-mcp-check', version: '1' },
  });
  // A refused key still proves the server answered: say so before the key's own verdict.
  if (!init.ok && init.error.code === -32001) print(`  ok    server reached${kind ? ': the family workspace endpoint' : ''} (${init.ms} ms)`);
  else if (!init.ok) return fail('reach the server', init);
  else {
    const info = init.result.serverInfo as { name?: string; version?: string } | undefined;
    const named = kindOfName(info?.name);
    if (named && named !== 'workspace') return notWorkspace(named);
    const version = typeof init.result.protocolVersion === 'string' ? init.result.protocolVersion : undefined;
    if (version) upstream.protocolVersion = version;
    const what = (kind ?? named) ? ', the family workspace endpoint' : '';
    print(`  ok    server reached: ${info?.name ?? 'unknown'} ${info?.version ?? ''} (MCP ${version ?? '?'}, ${init.ms} ms)${what}`);
  }
  if (!init.ok) return fail(accepted, init);

  const ping = await call(upstream, 'tools/call', { name: 'ping', arguments: {} });
  if (!ping.ok) return fail(accepted, ping);
  const pong = ((ping.result.content as { text?: string }[] | undefined) ?? []).map((c) => c.text ?? '').join(' ');
  print(`  ok    ${accepted}: ${pong || 'ping answered'}`);

  const list = await call(upstream, 'tools/list', {});
  if (!list.ok) return fail('list the tools', list);
  const names = ((list.result.tools as { name?: string }[] | undefined) ?? []).map((t) => t.name ?? '?');
  print(`  ok    ${names.length} tools: ${names.join(', ')}`);
  // A server that hides the tools a sign-in may not call still has them: name those too.
  const granted = oauth?.scope;
  const known = oauth ? Object.keys(TOOL_SCOPES).filter((n) => !names.includes(n)) : [];
  const access = toolAccess([...names, ...known], granted).filter((t) => names.includes(t.name) || t.missing);
  const allowed = access.filter((t) => !t.missing).map((t) => t.name);
  const refused = access.filter((t) => t.missing);
  const credentialName = oauth ? 'this sign-in' : 'this key';
  if (!oauth) print(`        usable with ${credentialName}: all ${names.length} listed (a read-only key is shown no write tools)`);
  else print(`        usable with ${credentialName}: ${allowed.join(', ') || 'none'}`);
  if (refused.length > 0) {
    const lacking = [...new Set(refused.map((t) => t.missing!))];
    print(`  WARN  refused with ${credentialName}: ${refused.map((t) => `${t.name} (needs ${t.missing})`).join(', ')}`);
    print(
      `        fix: run ${loginCommand(options)} again in a terminal and tick ${lacking.join(' and ')} on the consent page; or use an MCP API key from ${options.settingsUrl}.`,
    );
  }
  print('');
  print(
    `Verdict: READY (${allowed.length} of ${access.length} tools usable with ${credentialName}). Add carecircle-mcp to your assistant (README, "Desktop assistants (stdio bridge)").`,
  );
  return true;
}
