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

/**
 * What became of one write, as the resumed stream's `tool_result` says: allowed and written,
 * allowed but failed when it ran, declined, expired — or unknown, when the answer stopped before
 * the server said (the page never guesses it from the person's choice).
 */
export type WriteOutcome = 'allowed' | 'failed' | 'declined' | 'expired' | 'unknown';

/**
 * `pending`: waiting for the person; `sending`: the decisions are on their way; `done`: the server
 * took them; `expired`: the confirmation was gone before it was answered (nothing was written).
 */
export type SlipStatus = 'pending' | 'sending' | 'done' | 'expired';

export interface Slip {
  /** This slip, apart from any other: a resumed turn that asks again keeps its suspended id. */
  key: string;
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

let slips = 0;

/** Writes grouped into slips by suspended turn, in first-seen order; a write seen twice counts once. */
export function groupBySuspendedTurn(writes: PendingWrite[]): Slip[] {
  const out: Slip[] = [];
  for (const write of writes) {
    let slip = out.find((s) => s.suspendedTurnId === write.suspendedTurnId);
    if (slip === undefined) {
      slips += 1;
      slip = { key: `slip-${slips}`, suspendedTurnId: write.suspendedTurnId, writes: [], choices: {}, status: 'pending', outcomes: {} };
      out.push(slip);
    }
    if (!slip.writes.some((w) => w.id === write.id)) slip.writes.push(write);
  }
  return out;
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

/**
 * The server took the decisions; `reported` is what the resumed stream said of each write. A
 * write it said nothing of is `unknown`: never inferred from what the person chose.
 */
export function accepted(slip: Slip, reported: Record<string, WriteOutcome>): Slip {
  const outcomes: Record<string, WriteOutcome> = {};
  for (const w of slip.writes) {
    outcomes[w.id] = reported[w.id] ?? 'unknown';
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

/** The slip's heading, following each decision: what will change while it waits, what did once
 * it is settled. */
export function slipHeading(slip: Slip): string {
  const total = slip.writes.length;
  if (slip.status === 'expired') return 'Nothing was changed';
  if (slip.status === 'done') {
    const written = slip.writes.filter((w) => slip.outcomes[w.id] === 'allowed').length;
    if (written === 0) return 'Nothing was changed';
    if (written === total) return total === 1 ? 'Done: your ledger changed' : `Done: ${total} writes changed your ledger`;
    return `${written} of ${total} writes changed your ledger`;
  }
  if (total === 1) return 'This will change your ledger';
  const declined = slip.writes.filter((w) => slip.choices[w.id] === false).length;
  if (declined === 0) return `These ${total} writes will change your ledger`;
  if (declined === total) return 'None of these writes will change your ledger';
  return `${total - declined} of these ${total} writes will change your ledger`;
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
      const n = (o: WriteOutcome) => values.filter((v) => v === o).length;
      if (n('unknown') > 0) {
        return 'Your decision was sent, but the answer stopped before the server said what each write did. The trace of this turn has it.';
      }
      if (n('failed') > 0) {
        const failed = n('failed');
        const written = n('allowed') > 0 ? `; ${n('allowed')} written` : '';
        return `${failed === 1 ? 'One write' : `${failed} writes`} failed when ${failed === 1 ? 'it' : 'they'} ran and changed nothing (see the margin)${written}.`;
      }
      if (n('allowed') === values.length) return 'Allowed. Done.';
      if (n('allowed') === 0) return n('expired') > 0 ? 'Expired or declined: nothing was changed.' : 'Declined. Nothing was changed.';
      return `${n('allowed')} of ${values.length} allowed and done; the others changed nothing.`;
    }
  }
}
