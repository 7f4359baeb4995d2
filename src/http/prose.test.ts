// A full stop after a name that already ends with one is printed once, wherever sentences are
// built: in plain strings, in the site's runs of inline content, in mail.
import { describe, expect, it } from 'vitest';
import { invitationText } from '../app/familyAccess.js';
import { renderMarkdown, type Inline } from '../site/doc.js';
import { blocksHtml } from '../site/docHtml.js';
import { endsSentence, sentence, stopAfter } from './prose.js';

const runs = (content: Inline[]) => blocksHtml([{ kind: 'para', content }]);

describe('prose - one full stop after a name', () => {
  it('sentence and stopAfter add a full stop only where the text does not already end one', () => {
    expect(sentence('Others see you as Ana')).toBe('Others see you as Ana.');
    expect(sentence('Others see you as David O.')).toBe('Others see you as David O.');
    expect(sentence('Made by Acme Inc.”')).toBe('Made by Acme Inc.”');
    expect(sentence('Asked by Who?')).toBe('Asked by Who?');
    expect(stopAfter('David O.')).toBe('');
    expect(stopAfter('David')).toBe('.');
    expect(endsSentence('Wait…')).toBe(true);
    expect(endsSentence('v1.2')).toBe(false);
  });

  it('when a run ending in a full stop is followed by a literal ".", then the page and its markdown print one', () => {
    const content: Inline[] = ["You're a member. Others see you as ", { strong: 'David O.' }, '.'];
    expect(runs(content)).toBe("<p>You're a member. Others see you as <strong>David O.</strong></p>");
    const md = renderMarkdown({ status: 200, title: 'T', description: 'D', path: '/x', blocks: [{ kind: 'para', content }] }, 'https://site.example');
    expect(md).toContain('Others see you as **David O.**\n');
    // A link's text counts too; an ellipsis that follows is kept as it is written.
    expect(runs(['In ', { text: 'Care Inc.', href: '/c' }, '. Next.'])).toBe('<p>In <a href="/c">Care Inc.</a> Next.</p>');
    expect(runs([{ strong: 'Wait.' }, '...'])).toBe('<p><strong>Wait.</strong>...</p>');
    expect(runs([{ strong: 'Ana' }, '.'])).toBe('<p><strong>Ana</strong>.</p>');
  });

  it('when an invitation names a loved one whose name ends in a full stop, then the mail has one', () => {
    const text = invitationText({
      to: 'a@example.com',
      workspaceName: 'Riveras',
      inviter: 'Ana',
      lovedOnes: ['Rosa Rivera Jr.'],
      link: 'https://app.example/join/x',
    });
    expect(text.split('\n')[0]).toBe('Ana invited you to the family workspace "Riveras" on carecircle to help look after Rosa Rivera Jr.');
  });
});
