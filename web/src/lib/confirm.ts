// The write-confirmation card's state, apart from the page so it can be tested alone.
//
// A turn that wants to write stops and sends one `confirm_request` per write, all naming the same
// suspended turn; they form one slip. The person decides each write (Allow or Decline), and the
// decisions go to the server together, in one `POST /api/confirm`, exactly once: one decision per
// write, none missing (the server would read a missing one as a decline), none twice. The slip
// states an outcome only after the server accepted the decisions.

export interface PendingWrite {
  id: string;
  tool: string;
  args: Record<string, unknown>;
  summary: string;
  suspendedTurnId: string;
}

/** What became of one write, as the resumed stream's `tool_result` says. */
export type WriteOutcome = 'allowed' | 'declined' | 'expired';

/**
 * `pending`: waiting for the person; `sending`: the decisions are on their way; `done`: the server
 * took them; `expired`: the confirmation was gone before it was answered (nothing was written).
 */
export type SlipStatus = 'pending' | 'sending' | 'done' | 'expired';

export interface Slip {
  suspendedTurnId: string;
  writes: PendingWrite[];
  /** The person's choice for each write id, before sending. */
  choices: Record<string, boolean>;
  status: SlipStatus;
  /** What happened to each write, once the server answered. */
  outcomes: Record<string, WriteOutcome>;
}

export interface Decision {
  id: string;
  allowed: boolean;
}

/** Writes grouped into slips by suspended turn, in first-seen order; a write seen twice counts once. */
export function groupBySuspendedTurn(writes: PendingWrite[]): Slip[] {
  const slips: Slip[] = [];
  for (const write of writes) {
    let slip = slips.find((s) => s.suspendedTurnId === write.suspendedTurnId);
    if (slip === undefined) {
      slip = { suspendedTurnId: write.suspendedTurnId, writes: [], choices: {}, status: 'pending', outcomes: {} };
      slips.push(slip);
    }
    if (!slip.writes.some((w) => w.id === write.id)) slip.writes.push(write);
  }
  return slips;
}

/** The person chose for one write; ignored once the slip is no longer pending. */
export function choose(slip: Slip, id: string, allowed: boolean): Slip {
  if (slip.status !== 'pending' || !slip.writes.some((w) => w.id === id)) return slip;
  return { ...slip, choices: { ...slip.choices, [id]: allowed } };
}

/** The same choice for every write of the slip. */
export function chooseAll(slip: Slip, allowed: boolean): Slip {
  return slip.writes.reduce((s, w) => choose(s, w.id, allowed), slip);
}

/** Every write has a decision. */
export function ready(slip: Slip): boolean {
  return slip.writes.length > 0 && slip.writes.every((w) => typeof slip.choices[w.id] === 'boolean');
}

/** One decision per write of the slip, in the order the writes were proposed. */
export function decisionsFor(slip: Slip): Decision[] {
  return slip.writes.map((w) => ({ id: w.id, allowed: slip.choices[w.id] === true }));
}

/**
 * Starts sending: the slip moves to `sending` and the decisions to send come back. `null` when
 * there is nothing to send — not every write is decided, or the slip was sent already — so a
 * double click or a second key press never sends a batch twice.
 */
export function send(slip: Slip): { slip: Slip; decisions: Decision[] } | null {
  if (slip.status !== 'pending' || !ready(slip)) return null;
  return { slip: { ...slip, status: 'sending' }, decisions: decisionsFor(slip) };
}

/** The server took the decisions; `reported` is what the resumed stream said of each write. */
export function accepted(slip: Slip, reported: Record<string, WriteOutcome>): Slip {
  const outcomes: Record<string, WriteOutcome> = {};
  for (const w of slip.writes) {
    outcomes[w.id] = reported[w.id] ?? (slip.choices[w.id] === true ? 'allowed' : 'declined');
  }
  const allExpired = slip.writes.every((w) => outcomes[w.id] === 'expired');
  return { ...slip, status: allExpired ? 'expired' : 'done', outcomes };
}

/** The server refused for now (a limit, a pause, a lost connection): the choices come back to the person. */
export function refused(slip: Slip): Slip {
  return slip.status === 'sending' ? { ...slip, status: 'pending' } : slip;
}

/** The confirmation was gone (410): nothing was written. */
export function expired(slip: Slip): Slip {
  const outcomes: Record<string, WriteOutcome> = {};
  for (const w of slip.writes) outcomes[w.id] = 'expired';
  return { ...slip, status: 'expired', outcomes };
}

/** The slip's closing sentence once it is settled, or null while it waits. */
export function verdict(slip: Slip): string | null {
  switch (slip.status) {
    case 'pending':
      return null;
    case 'sending':
      return 'Sending your decision…';
    case 'expired':
      return 'Expired: nothing was changed. This confirmation expired before it was answered. Ask again to start a fresh turn.';
    case 'done': {
      const values = slip.writes.map((w) => slip.outcomes[w.id]);
      if (values.every((v) => v === 'allowed')) return 'Allowed. The turn resumed.';
      if (values.every((v) => v !== 'allowed')) return 'Declined. Nothing was written.';
      const allowed = values.filter((v) => v === 'allowed').length;
      return `${allowed} of ${values.length} allowed; the others were not written. The turn resumed.`;
    }
  }
}
