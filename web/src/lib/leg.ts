// One leg of a turn: a request whose answer is the turn's event stream (POST /api/chat, or
// POST /api/confirm), read to its end. A refusal before any event is thrown to the caller (the
// turn did not start); once the stream has begun, every way it can end is an outcome, so a
// dropped connection is never mistaken for a refusal.

import { StreamCut, consumeTurn, type SseEvent } from './sse';

/**
 * `complete`: the stream ended with `turn_end`. `error`: the server said the leg failed (its
 * state is kept and can be tried again). `stopped`: the person stopped reading. `cut`: the
 * stream broke off before the turn said how it ended.
 */
export type LegOutcome = 'complete' | 'error' | 'stopped' | 'cut';

export interface LegResult {
  outcome: LegOutcome;
  /** Why a cut stream was cut, in words. */
  detail?: string;
}

function aborted(e: unknown): boolean {
  return e instanceof DOMException && e.name === 'AbortError';
}

export async function runLeg(
  start: (signal: AbortSignal) => Promise<Response>,
  signal: AbortSignal,
  onEvent: (event: SseEvent) => void,
): Promise<LegResult> {
  // A refusal (or the site being unreachable) throws from here: nothing started.
  const response = await start(signal);
  if (!response.body) return { outcome: 'cut', detail: 'the answer arrived without a body' };
  let sawError = false;
  try {
    await consumeTurn(response.body, (event) => {
      if (event.event === 'error') sawError = true;
      onEvent(event);
    });
    return { outcome: sawError ? 'error' : 'complete' };
  } catch (e) {
    if (aborted(e) || signal.aborted) return { outcome: 'stopped' };
    if (e instanceof StreamCut) return { outcome: 'cut', detail: e.message };
    // The browser's own failure while reading (a dropped connection is a TypeError in Chromium).
    return { outcome: 'cut', detail: 'the connection dropped while the answer was arriving' };
  }
}
