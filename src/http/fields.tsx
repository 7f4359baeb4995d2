// A form's one-line field as every page writes it: its label, the input, and the hint the input is described by.
import type { ComponentChildren } from 'preact';

export interface TextFieldProps {
  /** The input's id and name. */
  id: string;
  label: ComponentChildren;
  type?: 'text' | 'date' | 'time';
  value: string;
  required?: boolean;
  maxLength?: number;
  placeholder?: string;
  /** The form's error box names this field: screen readers announce the input as invalid. */
  invalid?: boolean;
  /** A line under the input, read out with it (`aria-describedby`). */
  hint?: ComponentChildren;
}

export function TextField(p: TextFieldProps) {
  const hintId = p.hint === undefined ? undefined : `${p.id}-hint`;
  // Preact types a date or time input apart from a text one: one branch each, so each checks.
  const type = p.type === 'date' || p.type === 'time' ? { type: p.type } : { type: 'text' as const };
  return (
    <>
      <label for={p.id}>{p.label}</label>
      <input
        id={p.id}
        name={p.id}
        {...type}
        required={p.required}
        maxLength={p.maxLength}
        value={p.value}
        aria-invalid={p.invalid ? 'true' : undefined}
        placeholder={p.placeholder}
        aria-describedby={hintId}
      />
      {hintId ? (
        <p class="muted" id={hintId}>
          {p.hint}
        </p>
      ) : null}
    </>
  );
}
