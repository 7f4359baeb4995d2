// The words of an alert or digest mail: the loved one's first name and what happened in the
// subject, a plain-text part and an accessible HTML part with the same words, a link to the app
// (the configured public URL only), and the RFC 8058 one-click unsubscribe headers.
import { renderMarkup } from '../http/html.js';
import { ALERT_KINDS, type AlertKind } from './kinds.js';
import type { OutgoingMessage } from './outbox.js';

export interface MailParts {
  to: string;
  subject: string;
  /** Paragraphs, in order; plain text. */
  paragraphs: string[];
  /** Lines shown as a list after the paragraphs (a digest's record). */
  lines?: string[];
  link: { href: string; text: string };
  unsubscribe: { href: string; text: string };
}

const oneLine = (s: string) => s.replace(/[\r\n]+/g, ' ').trim();

export function composeMail(p: MailParts): OutgoingMessage {
  const subject = oneLine(p.subject).slice(0, 200);
  const text = [
    ...p.paragraphs,
    ...(p.lines?.length ? [p.lines.join('\n')] : []),
    `${p.link.text}: ${p.link.href}`,
    `${p.unsubscribe.text}: ${p.unsubscribe.href}`,
  ].join('\n\n');
  const html = `<!doctype html>${renderMarkup(
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{subject}</title>
      </head>
      <body style="font-family: system-ui, sans-serif; font-size: 16px; line-height: 1.5; color: #1a1a1a; max-width: 40em; margin: 0 auto; padding: 1em;">
        <main>
          <h1 style="font-size: 1.25em;">{subject}</h1>
          {p.paragraphs.map((t) => (
            <p>{t}</p>
          ))}
          {p.lines?.length ? (
            <ul>
              {p.lines.map((l) => (
                <li>{l.replace(/^- /, '')}</li>
              ))}
            </ul>
          ) : null}
          <p>
            <a href={p.link.href} style="color: #0b5394;">
              {p.link.text}
            </a>
          </p>
        </main>
        <footer>
          <p style="font-size: 0.9em; color: #444;">
            <a href={p.unsubscribe.href} style="color: #0b5394;">
              {p.unsubscribe.text}
            </a>
          </p>
        </footer>
      </body>
    </html>,
  )}`;
  return {
    to: p.to,
    subject,
    text,
    html,
    headers: { 'List-Unsubscribe': `<${p.unsubscribe.href}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
  };
}

/** "Rose: the 8:00 am dose of Metoprolol was not recorded as given" */
export function alertMail(to: string, firstName: string, kind: AlertKind, what: string, appUrl: string, path: string, unsubscribe: string): OutgoingMessage {
  const said = what.charAt(0).toUpperCase() + what.slice(1);
  return composeMail({
    to,
    subject: `${firstName}: ${what}`,
    paragraphs: [`${said}.`, `You get this right away because of your alert settings for ${firstName} (${ALERT_KINDS[kind].label.toLowerCase()}).`],
    link: { href: `${appUrl}${path}`, text: `See it in carecircle` },
    unsubscribe: { href: unsubscribe, text: `Stop these alerts about ${firstName} (${ALERT_KINDS[kind].label.toLowerCase()})` },
  });
}
