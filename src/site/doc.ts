// One page model, two renderings: HTML for people (docHtml.tsx, through JSX) and markdown for
// agents (here) come from the same blocks, so they cannot drift apart.
import { joinedRuns } from '../http/prose.js';
import type { BarChart } from './chart.js';

/** Only http(s), mailto, tel and same-site links are rendered as links; anything else is text. */
export function safeHref(href: string): string | undefined {
  if (href.startsWith('/') && !href.startsWith('//')) return href;
  if (href.startsWith('#')) return href;
  return /^(https?:|mailto:|tel:)/i.test(href) ? href : undefined;
}

/** A run of inline content: plain text, a link, strong text or code. */
export type Inline = string | { text: string; href: string } | { strong: string } | { code: string };

const inlineText = (p: Inline): string => (typeof p === 'string' ? p : 'href' in p ? p.text : 'strong' in p ? p.strong : p.code);

/** The runs as printed: no second full stop after a run that ends a sentence (a name like "David O."). */
export const printedRuns = (parts: readonly Inline[]): Inline[] => joinedRuns(parts, inlineText, (p) => (typeof p === 'string' ? p.slice(1) : p));

export interface FormField {
  name: string;
  label: string;
  type: 'text' | 'search' | 'email' | 'number' | 'select' | 'hidden' | 'textarea';
  value?: string;
  options?: readonly { value: string; label: string }[];
  min?: number;
  max?: number;
  step?: string;
  maxLength?: number;
  required?: boolean;
  autocomplete?: string;
  hint?: string;
  /** What is wrong with the submitted value, shown beside the field. */
  error?: string;
}

export interface FormSpec {
  action: string;
  method: 'get' | 'post';
  label: string;
  fields: FormField[];
  submit: string;
  /** A quieter button, for an action beside the page's main one (leaving a channel). */
  secondary?: boolean;
  /** How an agent does the same thing; the markdown rendering shows this instead of the form. */
  markdown: Inline[];
}

export type Block =
  | { kind: 'heading'; level: 2 | 3; text: string; id?: string }
  | { kind: 'para'; content: Inline[] }
  /** For agents only: how to do it over HTTP. The markdown shows it as a paragraph; a person's
   *  page never shows raw requests, headers or tokens. */
  | { kind: 'agents'; content: Inline[] }
  | { kind: 'list'; items: Inline[][] }
  | { kind: 'facts'; items: { term: string; value: Inline[] }[] }
  | { kind: 'table'; caption: string; head: string[]; rows: Inline[][][] }
  | { kind: 'form'; form: FormSpec }
  /** Text someone wrote (a thread or comment body): paragraphs split on blank lines, never markup. */
  | { kind: 'text'; text: string }
  | { kind: 'notice'; tone: 'error' | 'info'; content: Inline[] }
  | { kind: 'card'; blocks: Block[] }
  /** A chart drawn in the page; the markdown leaves it out, so give its data as a table too. */
  | { kind: 'chart'; chart: BarChart };

export interface Page {
  status: number;
  title: string;
  description: string;
  /** Site path of the page, with its query when the query changes the content. */
  path: string;
  blocks: Block[];
  /** Messages naming each invalid input, for a 400 ApiError in the markdown API. */
  errors?: { field: string; message: string }[];
}

/** Text someone wrote, as paragraphs split on blank lines. */
export function paragraphs(text: string): string[] {
  return text
    .replace(/\r\n?/g, '\n')
    .split(/\n{2,}/)
    .map((p) => p.trim())
    .filter(Boolean);
}

// ---------------------------------------------------------------------------
// Markdown
// ---------------------------------------------------------------------------

/** Escape text so it reads as itself in CommonMark: no emphasis, links, HTML or headings. */
export function escapeMarkdown(value: string): string {
  return (
    value
      // Characters that open code, emphasis, links, HTML or table cells anywhere in a line.
      .replace(/[\\`*[\]<>|~]/g, '\\$&')
      // Underscores emphasise only at word edges (care_circle stays as it is).
      .replace(/(^|[^\p{L}\p{N}])_|_(?=$|[^\p{L}\p{N}])/gu, (m) => m.replace('_', '\\_'))
      // Line starts that would make a heading, quote, list or rule.
      .replace(/^(\s*)([#+=-])/gm, '$1\\$2')
      .replace(/^(\s*\d+)([.)])/gm, '$1\\$2')
  );
}

function absolute(href: string, siteUrl: string): string {
  return href.startsWith('/') && !href.startsWith('//') ? `${siteUrl}${href}` : href;
}

function mdUrl(href: string): string {
  return href.replace(/[()\s<>]/g, (c) => encodeURIComponent(c));
}

function inlineMd(parts: readonly Inline[], siteUrl: string, cell = false): string {
  const out = printedRuns(parts)
    .map((p) => {
      if (typeof p === 'string') return escapeMarkdown(p);
      if ('href' in p) {
        const href = p.href.startsWith('#') ? p.href : safeHref(p.href);
        if (!href) return escapeMarkdown(p.text);
        return `[${escapeMarkdown(p.text)}](${mdUrl(absolute(href, siteUrl))})`;
      }
      if ('strong' in p) return `**${escapeMarkdown(p.strong)}**`;
      return `\`${p.code.replace(/`/g, "'")}\``;
    })
    .join('');
  return cell ? out.replace(/\n/g, ' ') : out;
}

function blockMd(b: Block, siteUrl: string): string {
  switch (b.kind) {
    case 'heading':
      return `${'#'.repeat(b.level)} ${escapeMarkdown(b.text)}`;
    case 'para':
    case 'agents':
      return inlineMd(b.content, siteUrl);
    case 'list':
      return b.items.map((i) => `- ${inlineMd(i, siteUrl)}`).join('\n');
    case 'facts':
      return b.items.map((i) => `- **${escapeMarkdown(i.term)}:** ${inlineMd(i.value, siteUrl)}`).join('\n');
    case 'table':
      return [
        `**${escapeMarkdown(b.caption)}**`,
        '',
        `| ${b.head.map(escapeMarkdown).join(' | ')} |`,
        `| ${b.head.map(() => '---').join(' | ')} |`,
        ...b.rows.map((r) => `| ${r.map((c) => inlineMd(c, siteUrl, true)).join(' | ')} |`),
      ].join('\n');
    case 'form':
      return inlineMd(b.form.markdown, siteUrl);
    case 'text':
      return paragraphs(b.text)
        .map((p) => escapeMarkdown(p).replace(/\n/g, '  \n'))
        .join('\n\n');
    case 'notice':
      return `> ${inlineMd(b.content, siteUrl)}`;
    case 'card':
      return b.blocks.map((x) => blockMd(x, siteUrl)).join('\n\n');
    case 'chart':
      return '';
  }
}

/** The page as a markdown document: title, summary, canonical URL, then the same blocks as the HTML. */
export function renderMarkdown(page: Page, siteUrl: string): string {
  const body = page.blocks.map((b) => blockMd(b, siteUrl)).filter(Boolean);
  return (
    [`# ${escapeMarkdown(page.title)}`, `> ${escapeMarkdown(page.description)}`, `Source: ${mdUrl(`${siteUrl}${page.path}`)}`, ...body].join('\n\n') + '\n'
  );
}
