// The bot check's gate on the composer. While the session asks for the check (the server's
// `bot_check`), a message may go only with a token the widget issued and no turn has spent yet;
// tokens are single-use, so each try spends the one it carried and the widget issues the next.
// Once the visitor passed, the session stops asking and the gate stays open.

export interface Gate {
  /** Whether the session asks for the check. */
  asked: boolean;
  /** The widget's unspent token, if any. */
  token: string | null;
}

/** Whether a message may be sent now. */
export function mayAsk(gate: Gate): boolean {
  return !gate.asked || gate.token !== null;
}

/** The gate after a message went (answered or refused): its token is spent. */
export function spent(gate: Gate): Gate {
  return { ...gate, token: null };
}
