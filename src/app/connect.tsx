// Settings → Connect an assistant: ready-to-paste configurations for the common MCP clients, with
// the app's URL and (right after minting) the new key filled in, and OAuth as the keyless way.
import type { MintedFlash } from './flash.js';

const json = (value: unknown) => JSON.stringify(value, null, 2);

/** Each client's configuration, in the format its own documentation gives. */
export function assistantConfigs(appUrl: string, key: string) {
  const mcpUrl = `${appUrl}/api/mcp`;
  const bridge = { command: 'npx', args: ['-y', 'carecircle-mcp'], env: { CARECIRCLE_URL: appUrl, CARECIRCLE_API_KEY: key } };
  const remote = { url: mcpUrl, headers: { Authorization: `Bearer ${key}` } };
  return [
    {
      id: 'claude-desktop',
      name: 'Claude Desktop',
      where: 'Settings → Developer → Edit Config opens claude_desktop_config.json; paste this, save, and restart Claude Desktop. It needs Node.js for npx.',
      text: json({ mcpServers: { carecircle: bridge } }),
    },
    {
      id: 'cursor',
      name: 'Cursor',
      where: '~/.cursor/mcp.json for every project, or .cursor/mcp.json in one project.',
      text: json({ mcpServers: { carecircle: remote } }),
    },
    {
      id: 'vscode',
      name: 'VS Code',
      where: '.vscode/mcp.json in a project, or the command “MCP: Open User Configuration”.',
      text: json({ servers: { carecircle: { type: 'http', ...remote } } }),
    },
    {
      id: 'zed',
      name: 'Zed',
      where: 'settings.json (the command “zed: open settings”). It needs Node.js for npx.',
      text: json({ context_servers: { carecircle: bridge } }),
    },
    {
      id: 'remote',
      name: 'Any other MCP client (remote HTTP)',
      where: 'For a client that connects to a remote MCP server over Streamable HTTP itself.',
      text: `URL: ${mcpUrl}\nHeader: Authorization: Bearer ${key}`,
    },
  ];
}

export function connectBody(appUrl: string, minted: MintedFlash | null) {
  const key = minted?.plaintext ?? 'PASTE-YOUR-KEY-HERE';
  return (
    <>
      <h1>Connect an assistant</h1>
      {minted ? (
        <section class="card" id="minted">
          <h2>Your new key “{minted.keyName}”: copy it now</h2>
          <p>This is the only time it is shown; it is already filled in below. Store it somewhere safe, such as your assistant's configuration.</p>
          <p class="secret" id="new-key">
            {minted.plaintext}
          </p>
          <button type="button" class="secondary" data-copy="new-key" hidden>
            Copy key
          </button>
        </section>
      ) : (
        <p class="notice" id="no-key">
          A key is shown only once, right after it is made. Put yours where it says PASTE-YOUR-KEY-HERE, or <a href="/settings#mcp-api-keys">mint a new key</a>.
        </p>
      )}
      {assistantConfigs(appUrl, key).map((c) => (
        <section class="card config" id={`for-${c.id}`}>
          <h2>{c.name}</h2>
          <p>{c.where}</p>
          <pre class="config-text" id={`config-${c.id}`} tabindex={0}>
            {c.text}
          </pre>
          <button type="button" class="secondary" data-copy={`config-${c.id}`} hidden>
            Copy the {c.name} configuration
          </button>
        </section>
      ))}
      <section class="card" id="oauth">
        <h2>Without a key: sign in with OAuth</h2>
        <p>
          Assistants that support OAuth (Claude's and ChatGPT's connectors, VS Code, Cursor) need only the address <code>{appUrl}/api/mcp</code>: when you add
          it, they open a carecircle page where you sign in and tick what the assistant may read. No key is copied anywhere, and you can end the access in{' '}
          <a href="/settings#connected-apps">Settings → Connected apps</a>.
        </p>
        <p>
          For Claude Desktop or Zed through <code>npx carecircle-mcp</code>, run <code>npx carecircle-mcp --login {appUrl}</code> once in a terminal, then leave{' '}
          <code>CARECIRCLE_API_KEY</code> out of the configuration.
        </p>
      </section>
    </>
  );
}
