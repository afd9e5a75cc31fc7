// Server-sent events read from a POST response: `fetch` gives the body as a stream of bytes, and
// this turns it into events. EventSource cannot send a POST, so it is not used.
//
// A frame is lines up to a blank line; `event: NAME` names it and `data: …` lines carry its JSON
// (several data lines are joined with "\n", as the SSE format says). Lines starting with ":" are
// comments (the server's keep-alive). Frames may arrive split across chunks at any byte, a
// multi-byte character included.

export interface SseEvent {
  event: string;
  data: unknown;
}

/** The events of `body`, in order. A frame whose data is not JSON is an error, never skipped. */
export async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder('utf-8');
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      // A "\r" at the end may be the first half of a "\r\n" still on its way: keep it for now.
      const held = !done && buffer.endsWith('\r');
      buffer = (held ? buffer.slice(0, -1) : buffer).replace(/\r\n?/g, '\n') + (held ? '\r' : '');
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        const frame = parseFrame(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (frame !== null) yield frame;
        end = buffer.indexOf('\n\n');
      }
      if (done) {
        // A frame without its closing blank line was cut off mid-way: it is not an event.
        if (buffer.trim() !== '') throw new StreamCut('the stream ended in the middle of an event');
        return;
      }
    }
  } finally {
    reader.releaseLock();
  }
}

function parseFrame(text: string): SseEvent | null {
  let event = 'message';
  const data: string[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  if (data.length === 0) return null;
  const raw = data.join('\n');
  try {
    return { event, data: JSON.parse(raw) as unknown };
  } catch {
    throw new StreamCut(`an event (${event}) carried data that is not JSON`);
  }
}

/** The stream stopped before the turn said how it ended. */
export class StreamCut extends Error {
  override name = 'StreamCut';
}

/** The events that end a leg of a turn: after one of them, the stream has said everything. */
export const TERMINAL_EVENTS = new Set(['turn_end', 'error']);

/**
 * Hands every event of `body` to `onEvent` and checks the stream ended properly: with `turn_end`
 * or `error`. A stream that stops before either (a dropped connection, a dead function) throws
 * [`StreamCut`], so the page shows it as an error instead of a short answer.
 */
export async function consumeTurn(
  body: ReadableStream<Uint8Array>,
  onEvent: (event: SseEvent) => void,
): Promise<void> {
  let ended = false;
  for await (const event of readEvents(body)) {
    onEvent(event);
    if (TERMINAL_EVENTS.has(event.event)) ended = true;
  }
  if (!ended) throw new StreamCut('the answer stopped before the turn finished');
}
