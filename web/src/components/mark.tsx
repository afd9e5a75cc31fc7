import type { ComponentChildren } from 'preact';

export type Tone = 'ok' | 'warn' | 'danger';

/** A status word: colour only ever beside a word. */
export function Mark({ tone, children }: { tone: Tone; children: ComponentChildren }) {
  return <span class={`mark tone-${tone}`}>{children}</span>;
}

/** The site's mark: one ledger cell, drawn in the current colour. */
export function Logo() {
  return (
    <svg width="20" height="20" viewBox="0 0 24 24" aria-hidden="true" fill="none" stroke="currentColor" stroke-width="1.25" stroke-linecap="square">
      <rect x="2.5" y="2.5" width="19" height="19" />
      <line x1="16" y1="2.5" x2="16" y2="21.5" />
      <line x1="5.5" y1="8" x2="12.5" y2="8" opacity="0.55" />
      <line x1="5.5" y1="12" x2="12.5" y2="12" opacity="0.55" />
      <line x1="17.5" y1="16.5" x2="20" y2="16.5" />
      <line x1="17.5" y1="18.5" x2="20" y2="18.5" />
    </svg>
  );
}
