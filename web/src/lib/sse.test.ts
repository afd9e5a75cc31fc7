import { describe, expect, it } from 'vitest';
import { consumeTurn, readEvents, StreamCut, type SseEvent } from './sse';

/** A body that delivers `chunks` one read at a time, as a network would. */
function body(chunks: (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(typeof chunk === 'string' ? encoder.encode(chunk) : chunk);
      controller.close();
    },
  });
}

async function all(stream: ReadableStream<Uint8Array>): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  for await (const e of readEvents(stream)) out.push(e);
  return out;
}

describe('readEvents', () => {
  it('joins frames split across chunks, even inside a multi-byte character', async () => {
    const text = 'event: token\ndata: {"delta":"₹23,350"}\n\nevent: turn_end\ndata: {"status":"ok"}\n\n';
    const bytes = new TextEncoder().encode(text);
    // Split at every possible byte offset: the result must never change.
    for (let cut = 1; cut < bytes.length; cut++) {
      const events = await all(body([bytes.slice(0, cut), bytes.slice(cut)]));
      expect(events, `cut at byte ${cut}`).toEqual([
        { event: 'token', data: { delta: '₹23,350' } },
        { event: 'turn_end', data: { status: 'ok' } },
      ]);
    }
  });

  it('skips keep-alive comments and accepts CRLF line ends', async () => {
    const events = await all(
      body([': keep-alive\n\n', 'event: token\r\ndata: {"delta":"a"}\r\n\r\n', ': keep-alive\n\n']),
    );
    expect(events).toEqual([{ event: 'token', data: { delta: 'a' } }]);
    const split = await all(body(['event: token\r', '\ndata: {"delta":"b"}\r\n\r', '\n']));
    expect(split, 'a CRLF split between chunks is one line end').toEqual([{ event: 'token', data: { delta: 'b' } }]);
  });

  it('joins several data lines with a newline', async () => {
    const events = await all(body(['event: x\ndata: {"a":\ndata: 1}\n\n']));
    expect(events).toEqual([{ event: 'x', data: { a: 1 } }]);
  });

  it('treats a frame cut off mid-way as a cut stream, not as an event', async () => {
    await expect(all(body(['event: token\ndata: {"delta":"a"}\n\nevent: turn_end\ndata: {"sta']))).rejects.toThrow(
      StreamCut,
    );
  });

  it('refuses data that is not JSON', async () => {
    await expect(all(body(['event: token\ndata: not json\n\n']))).rejects.toThrow(StreamCut);
  });
});

describe('consumeTurn', () => {
  it('passes every event on and accepts a stream that ends with turn_end', async () => {
    const seen: string[] = [];
    await consumeTurn(body(['event: token\ndata: {"delta":"hi"}\n\n', 'event: turn_end\ndata: {}\n\n']), (e) =>
      seen.push(e.event),
    );
    expect(seen).toEqual(['token', 'turn_end']);
  });

  it('accepts a stream that ends with an error event', async () => {
    await expect(consumeTurn(body(['event: error\ndata: {"message":"no"}\n\n']), () => {})).resolves.toBeUndefined();
  });

  it('shows a stream that stops before the turn ended as an error', async () => {
    const seen: string[] = [];
    await expect(
      consumeTurn(body(['event: token\ndata: {"delta":"half an ans"}\n\n']), (e) => seen.push(e.event)),
    ).rejects.toThrow(StreamCut);
    expect(seen, 'what arrived before the cut is still shown').toEqual(['token']);
  });
});
