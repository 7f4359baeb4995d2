// Settings → Connect an assistant: ready-to-paste configurations for the common MCP clients, with
// the app's URL and (right after minting) the new key filled in, and OAuth as the keyless way.
// Clients that start a local command run the bridge file this app serves, with node, from any folder.
import { BRIDGE_FILE, BRIDGE_PATH, type BridgeBundle } from './bridgeDownload.js';
import type { MintedFlash } from './flash.js';

const json = (value: unknown) => JSON.stringify(value, null, 2);

/** Where the stdio snippets expect the downloaded bridge; the person puts their own full path there. */
export const BRIDGE_PLACEHOLDER = `/PATH/TO/${BRIDGE_FILE}`;

/** Each client's configuration, in the format its own documentation gives. */
export function assistantConfigs(appUrl: string, key: string) {
  const mcpUrl = `${appUrl}/api/mcp`;
  const bridge = { command: 'node', args: [BRIDGE_PLACEHOLDER], env: { CARECIRCLE_URL: appUrl, CARECIRCLE_API_KEY: key } };
  const remote = { url: mcpUrl, headers: { Authorization: `Bearer ${key}` } };
  const local = `Download the bridge first (above) and put its full path where it says ${BRIDGE_PLACEHOLDER}.`;
  return [
    {
      id: 'claude-desktop',
      name: 'Claude Desktop',
      where: `Settings → Developer → Edit Config opens claude_desktop_config.json; paste this, save, and restart Claude Desktop. ${local}`,
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
      where: `settings.json (the command “zed: open settings”). ${local}`,
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

/** The bridge download, with the checksum to compare; without a bundle (it could not be built) the page says so. */
function bridgeSection(bundle: Pick<BridgeBundle, 'sha256' | 'version'> | null) {
  return (
    <section class="card" id="bridge">
      <h2>For Claude Desktop and Zed: the carecircle bridge</h2>
      <p>
        These apps start a small program on your computer that passes their requests to carecircle. It is one file, run by Node.js (version 22 or newer, from{' '}
        <a href="https://nodejs.org/">nodejs.org</a>); nothing else is installed.
      </p>
      {bundle ? (
        <>
          <p>
            <a href={BRIDGE_PATH} download={BRIDGE_FILE} id="bridge-download">
              Download {BRIDGE_FILE}
            </a>{' '}
            (version {bundle.version}) and keep it in a folder of your own, for example your home folder.
          </p>
          <p>Its SHA-256 checksum, to compare with what your computer says of the file you saved:</p>
          <p class="secret" id="bridge-sha256">
            {bundle.sha256}
          </p>
          <p>
            Check it with <code>shasum -a 256 {BRIDGE_FILE}</code> (macOS, Linux) or <code>Get-FileHash {BRIDGE_FILE}</code> (Windows PowerShell) in the folder
            where you saved it.
          </p>
        </>
      ) : (
        <p class="notice" id="bridge-unavailable">
          The bridge cannot be downloaded from this server right now. Use the Cursor, VS Code or remote configuration below, or try again later.
        </p>
      )}
      <p>
        In the configuration below, replace <code>{BRIDGE_PLACEHOLDER}</code> with the full path of the file you saved (a desktop app does not expand{' '}
        <code>~</code>). If the app says it cannot find <code>node</code>, write node's full path instead: <code>which node</code> (macOS, Linux) or{' '}
        <code>where node</code> (Windows) prints it. To try the key first, run <code>node {BRIDGE_FILE} --check</code> in a terminal with{' '}
        <code>CARECIRCLE_URL</code> and <code>CARECIRCLE_API_KEY</code> set.
      </p>
      <p>This file comes only from this server: it is not an npm package, so do not install one of that name.</p>
    </section>
  );
}

export function connectBody(appUrl: string, minted: MintedFlash | null, bundle: Pick<BridgeBundle, 'sha256' | 'version'> | null) {
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
      {bridgeSection(bundle)}
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
          For Claude Desktop or Zed through the bridge, run{' '}
          <code>
            node {BRIDGE_FILE} --login {appUrl}
          </code>{' '}
          once in a terminal, in the folder where you saved it, then leave <code>CARECIRCLE_API_KEY</code> out of the configuration.
        </p>
      </section>
    </>
  );
}
