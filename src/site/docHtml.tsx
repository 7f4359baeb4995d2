// The site's block model as HTML, through JSX: every text and attribute is escaped by the renderer,
// so partner-, member- and visitor-written text can never become markup.
import { h, type ComponentChildren } from 'preact';
import { renderMarkup } from '../http/html.js';
import { BarChartSvg } from './chart.js';
import { paragraphs, printedRuns, safeHref, type Block, type FormField, type Inline } from './doc.js';

function Inlines({ parts }: { parts: readonly Inline[] }) {
  return (
    <>
      {printedRuns(parts).map((p) => {
        if (typeof p === 'string') return p;
        if ('href' in p) {
          const href = safeHref(p.href);
          if (!href) return p.text;
          return /^https?:/i.test(href) ? (
            <a href={href} rel="noopener noreferrer">
              {p.text}
            </a>
          ) : (
            <a href={href}>{p.text}</a>
          );
        }
        if ('strong' in p) return <strong>{p.strong}</strong>;
        return <code>{p.code}</code>;
      })}
    </>
  );
}

function Field({ f, formId }: { f: FormField; formId: string }) {
  const id = `${formId}-${f.name}`;
  if (f.type === 'hidden') return <input type="hidden" name={f.name} value={f.value ?? ''} />;
  const described = [f.hint ? `${id}-hint` : '', f.error ? `${id}-error` : ''].filter(Boolean).join(' ');
  const common = {
    id,
    name: f.name,
    required: f.required ?? false,
    ...(described ? { 'aria-describedby': described } : {}),
    ...(f.error ? { 'aria-invalid': 'true' as const } : {}),
    ...(f.autocomplete ? { autocomplete: f.autocomplete } : {}),
  };
  let control: ComponentChildren;
  if (f.type === 'select')
    control = (
      <select {...common}>
        {(f.options ?? []).map((o) => (
          <option value={o.value} selected={o.value === (f.value ?? '')}>
            {o.label}
          </option>
        ))}
      </select>
    );
  else if (f.type === 'textarea')
    control = (
      <textarea {...common} rows={6} {...(f.maxLength !== undefined ? { maxLength: f.maxLength } : {})}>
        {f.value ?? ''}
      </textarea>
    );
  // Built with h(): preact's input types are split by `type`, which is only known at run time here.
  else
    control = h('input', {
      type: f.type,
      ...common,
      ...(f.min !== undefined ? { min: f.min } : {}),
      ...(f.max !== undefined ? { max: f.max } : {}),
      ...(f.step ? { step: f.step } : {}),
      ...(f.maxLength !== undefined ? { maxLength: f.maxLength } : {}),
      ...(f.type === 'number' ? { inputMode: 'decimal' } : {}),
      value: f.value ?? '',
    });
  return (
    <div class={f.error ? 'field field-error' : 'field'}>
      <label for={id}>{f.label}</label>
      {f.hint ? (
        <p class="hint" id={`${id}-hint`}>
          {f.hint}
        </p>
      ) : null}
      {f.error ? (
        <p class="error" id={`${id}-error`}>
          {f.error}
        </p>
      ) : null}
      {control}
    </div>
  );
}

function BlockView({ b, formId }: { b: Block; formId: () => string }): ComponentChildren {
  switch (b.kind) {
    case 'heading':
      return b.level === 2 ? <h2 {...(b.id ? { id: b.id } : {})}>{b.text}</h2> : <h3 {...(b.id ? { id: b.id } : {})}>{b.text}</h3>;
    case 'para':
      return (
        <p>
          <Inlines parts={b.content} />
        </p>
      );
    case 'agents':
      return null;
    case 'list':
      return (
        <ul>
          {b.items.map((i) => (
            <li>
              <Inlines parts={i} />
            </li>
          ))}
        </ul>
      );
    case 'facts':
      return (
        <dl class="facts">
          {b.items.map((i) => (
            <>
              <dt>{i.term}</dt>
              <dd>
                <Inlines parts={i.value} />
              </dd>
            </>
          ))}
        </dl>
      );
    case 'table':
      return (
        <div class="table-wrap">
          <table>
            <caption>{b.caption}</caption>
            <thead>
              <tr>
                {b.head.map((h) => (
                  <th scope="col">{h}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {b.rows.map((r) => (
                <tr>
                  {r.map((c) => (
                    <td>
                      <Inlines parts={c} />
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      );
    case 'form': {
      const id = formId();
      const f = b.form;
      return (
        <form class="form" action={f.action} method={f.method} aria-label={f.label}>
          {f.fields.map((field) => (
            <Field f={field} formId={id} />
          ))}
          <button type="submit" {...(f.secondary ? { class: 'secondary' } : {})}>
            {f.submit}
          </button>
        </form>
      );
    }
    case 'text':
      return (
        <div class="user-text">
          {paragraphs(b.text).map((p) => (
            <p>
              {p.split('\n').map((line, i) => (
                <>
                  {i ? <br /> : null}
                  {line}
                </>
              ))}
            </p>
          ))}
        </div>
      );
    case 'notice':
      return (
        <div class={`notice notice-${b.tone}`} {...(b.tone === 'error' ? { role: 'alert' } : {})}>
          <p>
            <Inlines parts={b.content} />
          </p>
        </div>
      );
    case 'card':
      return (
        <section class="card">
          {b.blocks.map((x) => (
            <BlockView b={x} formId={formId} />
          ))}
        </section>
      );
    case 'chart':
      return <BarChartSvg chart={b.chart} />;
  }
}

/** The blocks of one page; form ids are unique within it. */
export function Blocks({ blocks }: { blocks: readonly Block[] }) {
  let forms = 0;
  const formId = () => `form${++forms}`;
  return (
    <>
      {blocks.map((b) => (
        <BlockView b={b} formId={formId} />
      ))}
    </>
  );
}

export const blocksHtml = (blocks: readonly Block[]): string => renderMarkup(<Blocks blocks={blocks} />);
