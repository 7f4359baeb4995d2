// The text of `carecircle-mcp --help`, in the command the person ran (the installed name or the downloaded file).
import { DEFAULT_TIMEOUT_MS, DEFAULT_URL } from './options.js';

export const helpText = (command: string): string => `carecircle-mcp: connects a desktop assistant (Claude Desktop, Cursor, VS Code, Zed) to your
carecircle family workspace. The assistant starts it and speaks MCP on its stdin and stdout, one
JSON-RPC message per line; the bridge forwards each message to the workspace MCP endpoint with
your API key, or with the tokens of a browser sign-in (--login). Logs go to stderr; stdout carries
protocol messages only.

Usage
  ${command} [URL] [options]
      run the bridge (your assistant starts it)
  ${command} --check [URL]
      reach the server, check the key or sign-in, list the tools, say what to fix
  ${command} --login [URL]
      sign in with your browser once, instead of using a key (run it in a terminal)
  ${command} --logout [URL]
      revoke that sign-in and forget its tokens

  URL   the app URL (APP_URL) or its MCP endpoint; default $CARECIRCLE_URL, else ${DEFAULT_URL}

Environment
  CARECIRCLE_URL        as URL above
  CARECIRCLE_API_KEY    your MCP API key (sk-svc-…): sign in to the app, open Settings → MCP API keys.
                        A configured key always wins: the bridge then never reads the sign-in tokens.
  CARECIRCLE_CONFIG_DIR where --login keeps its tokens (tokens.json, yours alone); default
                        $XDG_CONFIG_HOME/carecircle or ~/.config/carecircle (macOS: ~/Library/Application
                        Support/carecircle; Windows: %APPDATA%\\carecircle)
  CARECIRCLE_NO_BROWSER=1  --login prints the sign-in address instead of opening a browser

Options
  --api-key-file PATH       read the key from PATH instead (it must be yours alone: chmod 600 PATH)
  --header "Name: value"    send a header with every request; \${VAR} in the value is replaced from the
                            environment (repeatable), e.g. --header "Authorization: Bearer \${TOKEN}"
  --timeout-ms N            give up on a request after N ms and answer -32603 (default ${DEFAULT_TIMEOUT_MS})
  --allow-http              allow plain http:// to another machine (the key or tokens travel unencrypted)
  --log-level LEVEL         stderr detail: debug, info (default), warn, error, silent
  --check                   diagnose the configuration and exit: 0 ready, 1 not ready
  --login                   sign in with your browser (OAuth): tick what the assistant may read (and write,
                            if you choose), and the bridge keeps the tokens and renews them; no key needed afterwards
  --logout                  revoke the stored sign-in for this server and delete its tokens
  --version                 print the version
  -h, --help                print this help

Errors your assistant may show (JSON-RPC codes)
  -32001  the key is missing, unknown or revoked: mint one in Settings → MCP API keys; with a sign-in:
          it has ended (revoked, signed out) or lacks a scope: run ${command} --login again
  -32029  too many requests a minute for this key: the bridge waited and retried once; wait a little
  -32030  the service is up but busy or without workers: try again shortly
  -32603  the bridge could not reach carecircle (message says why), or it did not answer in time
  -32700  a line on stdin was not JSON or over 1 MiB (a client bug; the bridge keeps running)

Exit status: 0 when stdin closes or on SIGINT/SIGTERM (after every pending reply), 1 when --check
finds a problem or --login/--logout did not complete, 2 when the configuration is wrong (the
message says what to change).
`;
