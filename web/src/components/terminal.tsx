// The machine room's building blocks: cards, badges, stats, empty states.

import type { ComponentChildren } from 'preact';

export type BadgeTone = 'neutral' | 'accent' | 'ok' | 'warn' | 'danger';

export function Badge({ tone = 'neutral', children }: { tone?: BadgeTone; children: ComponentChildren }) {
  return <span class={`badge${tone === 'neutral' ? '' : ` ${tone}`}`}>{children}</span>;
}

/** A run's status as a badge: the word always, the colour only for what needs a look. */
/** What a run's status means, for the ones a person may not guess. */
const STATUS_MEANS: Record<string, string> = {
  waiting: 'A write waits for your decision in its conversation.',
  expired: 'It asked to write and nobody answered in time: nothing was written.',
  abandoned: 'It stopped mid-turn and nothing is working on it any more.',
  aborted: 'It was stopped before it finished.',
};

export function StatusBadge({ status }: { status: string }) {
  const tone: BadgeTone =
    status === 'ok' ? 'ok' : status === 'error' ? 'danger' : status === 'blocked' || status === 'stuck' || status === 'waiting' ? 'warn' : 'neutral';
  return (
    <span title={STATUS_MEANS[status]}>
      <Badge tone={tone}>{status}</Badge>
    </span>
  );
}

export function Card({ title, aside, children, class: extra }: { title?: string; aside?: ComponentChildren; children: ComponentChildren; class?: string }) {
  return (
    <section class={`card${extra ? ` ${extra}` : ''}`} aria-label={title}>
      {title ? (
        <h2 class="card-head">
          {title}
          {aside}
        </h2>
      ) : null}
      {children}
    </section>
  );
}

export function Stat({ label, value, hint }: { label: string; value: ComponentChildren; hint?: ComponentChildren }) {
  return (
    <div class="stat">
      <div class="stat-label">{label}</div>
      <div class="stat-value num">{value}</div>
      {hint !== undefined ? <div class="stat-hint">{hint}</div> : null}
    </div>
  );
}

export function EmptyState({ title, hint }: { title: string; hint?: ComponentChildren }) {
  return (
    <div class="t-empty">
      <p class="t-empty-title">{title}</p>
      {hint ? <p class="t-empty-hint">{hint}</p> : null}
    </div>
  );
}

/** Pretty JSON in a collapsible block. */
export function JsonBlock({ label, value, open }: { label: string; value: unknown; open?: boolean }) {
  return (
    <details class="t-details" open={open}>
      <summary>{label}</summary>
      <pre class="t-pre">{typeof value === 'string' ? value : JSON.stringify(value, null, 2)}</pre>
    </details>
  );
}
