// Markup for every page: JSX rendered by preact-render-to-string escapes every text and attribute
// it is given; markup that must go out as written is asked for by name, with `trustedHtml`.
import { Fragment, h, type ComponentChildren, type VNode } from 'preact';
import { renderToString } from 'preact-render-to-string';

/** Markup already built elsewhere and trusted as it is: the only way raw HTML reaches a page. */
export class TrustedHtml {
  constructor(readonly html: string) {}
}

export const trustedHtml = (html: string): TrustedHtml => new TrustedHtml(html);

/** What a page part may be: JSX (escaped when rendered) or markup trusted by name. */
export type Markup = VNode | TrustedHtml | ComponentChildren;

export function renderMarkup(markup: Markup): string {
  if (markup instanceof TrustedHtml) return markup.html;
  return renderToString(h(Fragment, null, markup as ComponentChildren));
}
