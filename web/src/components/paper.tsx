// The paper ground's building blocks: ruled sections, figures, rows, notes, empty states.

import type { ComponentChildren } from 'preact';
import { Mark, type Tone } from './mark';

export function Section(props: {
  title: string;
  note?: ComponentChildren;
  aside?: ComponentChildren;
  first?: boolean;
  id?: string;
  children: ComponentChildren;
}) {
  const headingId = props.id ? `${props.id}-title` : undefined;
  return (
    <section class={`section${props.first ? ' first' : ''}`} aria-labelledby={headingId} id={props.id}>
      <div class="section-head">
        <h2 class="section-title" id={headingId}>
          {props.title}
        </h2>
        {props.aside}
      </div>
      {props.note ? <p class="section-note">{props.note}</p> : null}
      <div class="section-body">{props.children}</div>
    </section>
  );
}

export function Figure(props: { value: ComponentChildren; label: string; note?: ComponentChildren; tone?: Tone }) {
  return (
    <div>
      <div class={`figure-value num${props.tone ? ` tone-${props.tone}` : ''}`}>{props.value}</div>
      <div class="figure-label">{props.label}</div>
      {props.note ? <div class="figure-note">{props.note}</div> : null}
    </div>
  );
}

export function MetaLine({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="metaline">
      <dt>{label}</dt>
      <dd class="num">{children}</dd>
    </div>
  );
}

export function Empty({ title, hint }: { title: string; hint?: ComponentChildren }) {
  return (
    <div class="empty">
      <p class="empty-title">{title}</p>
      {hint ? <p class="empty-hint">{hint}</p> : null}
    </div>
  );
}

/** A note between hairlines: the site speaking, never the agent. */
export function Note({ tone, word, children }: { tone: Tone; word: string; children: ComponentChildren }) {
  return (
    <div class="note" role={tone === 'danger' ? 'alert' : 'status'} tabIndex={-1}>
      <Mark tone={tone}>{word}</Mark>
      <span>{children}</span>
    </div>
  );
}

/** `**bold**` spans and nothing else: statement text stays inert. */
export function Prose({ text }: { text: string }) {
  const parts = text.split(/(\*\*[^*]+\*\*)/g);
  return (
    <div class="prose" style={{ whiteSpace: 'pre-wrap' }}>
      {parts.map((part, i) =>
        part.startsWith('**') && part.endsWith('**') && part.length > 4 ? <strong key={i}>{part.slice(2, -2)}</strong> : part,
      )}
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted small" role="status">
      <span class="pulse">Reading {what}…</span>
    </p>
  );
}

export function Failure({ message }: { message: string }) {
  return (
    <Note tone="danger" word="failed">
      {message}
    </Note>
  );
}
