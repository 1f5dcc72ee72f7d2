// Record the tools/list of real MCP servers once, into catalog-NAME.json.
// Run by hand after `npm ci` here (never by the bench, which reads the
// committed files): node capture.mjs.  Dummy credentials only: listing
// tools calls no remote API.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'capture-'));
const servers = [
  ['filesystem', '@modelcontextprotocol/server-filesystem', [dir], {}],
  ['memory', '@modelcontextprotocol/server-memory', [],
    { MEMORY_FILE_PATH: join(dir, 'memory.json') }],
  ['everything', '@modelcontextprotocol/server-everything', ['stdio'], {}],
  ['sequential-thinking', '@modelcontextprotocol/server-sequential-thinking',
    [], {}],
  ['playwright', '@playwright/mcp', ['--headless'], {}],
  ['github', '@modelcontextprotocol/server-github', [],
    { GITHUB_PERSONAL_ACCESS_TOKEN: 'dummy' }],
  ['gitlab', '@modelcontextprotocol/server-gitlab', [],
    { GITLAB_PERSONAL_ACCESS_TOKEN: 'dummy' }],
  ['slack', '@modelcontextprotocol/server-slack', [],
    { SLACK_BOT_TOKEN: 'dummy', SLACK_TEAM_ID: 'T0' }],
  ['google-maps', '@modelcontextprotocol/server-google-maps', [],
    { GOOGLE_MAPS_API_KEY: 'dummy' }],
  ['brave-search', '@modelcontextprotocol/server-brave-search', [],
    { BRAVE_API_KEY: 'dummy' }],
  ['notion', '@notionhq/notion-mcp-server', [], { NOTION_TOKEN: 'dummy' }],
];

for (const [name, pkg, args, env] of servers) {
  const meta = JSON.parse(readFileSync(`node_modules/${pkg}/package.json`));
  const bin = typeof meta.bin === 'string' ? meta.bin :
    Object.values(meta.bin)[0];
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [`node_modules/${pkg}/${bin}`, ...args],
    env: { PATH: process.env.PATH, HOME: dir, ...env },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'capture', version: '1' });
  await client.connect(transport);
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  await client.close();
  writeFileSync(`catalog-${name}.json`, JSON.stringify({
    server: name, package: pkg, version: meta.version,
    captured: new Date().toISOString().slice(0, 10), tools }, null, 1) + '\n');
  console.log(`${name}: ${pkg}@${meta.version}: ${tools.length} tools`);
}
