import { describe, expect, it } from 'vitest';
import { runLeg } from './leg';

const encoder = new TextEncoder();

/** A body that hands out one chunk per read, then ends (or fails, as a dropped connection does). */
function response(chunks: string[], failAfter = false): Response {
  let next = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[next++];
      if (chunk !== undefined) controller.enqueue(encoder.encode(chunk));
      else if (failAfter) controller.error(new TypeError('network error'));
      else controller.close();
    },
  });
  return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
}

const run = (r: Response, signal = new AbortController().signal) => {
  const seen: string[] = [];
  return runLeg(async () => r, signal, (e) => seen.push(e.event)).then((result) => ({ result, seen }));
};

describe('runLeg', () => {
  it('is complete when the stream ends with turn_end', async () => {
    const { result, seen } = await run(response(['event: token\ndata: {"delta":"a"}\n\n', 'event: turn_end\ndata: {}\n\n']));
    expect(result.outcome).toBe('complete');
    expect(seen).toEqual(['token', 'turn_end']);
  });

  it('reports an error event as a failed leg, not a finished one', async () => {
    const { result } = await run(response(['event: tool_result\ndata: {}\n\n', 'event: error\ndata: {"message":"x"}\n\n']));
    expect(result.outcome).toBe('error');
  });

  it('takes a connection that drops mid-answer for a cut stream, not a refusal', async () => {
    const { result, seen } = await run(response(['event: token\ndata: {"delta":"half"}\n\n'], true));
    expect(result.outcome).toBe('cut');
    expect(seen).toEqual(['token']);
  });

  it('says stopped when the person stopped reading', async () => {
    const controller = new AbortController();
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(encoder.encode('event: token\ndata: {"delta":"a"}\n\n'));
        controller.abort();
        c.error(new DOMException('The operation was aborted.', 'AbortError'));
      },
    });
    const { result } = await run(new Response(body), controller.signal);
    expect(result.outcome).toBe('stopped');
  });

  it('lets a refusal before any event through to the caller', async () => {
    await expect(runLeg(async () => Promise.reject(new Error('503')), new AbortController().signal, () => {})).rejects.toThrow('503');
  });
});
