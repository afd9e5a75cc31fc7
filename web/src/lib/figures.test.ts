import { describe, expect, it } from 'vitest';
import type { FiguresEvent } from '../api/types';
import { answerSegments, howWords, madeOfRows, ungroundedNote } from './figures';
import { applyEvent, newExchange } from './exchange';

type Checked = FiguresEvent['figures'][number];

function money(text: string, start: number, grounding: Checked['grounding'], value = '0'): Checked {
  return {
    text,
    start,
    end: start + Array.from(text).length,
    value,
    kind: { kind: 'money', currency: { code: 'INR' } },
    approximate: false,
    grounding,
    ...(grounding === 'ungrounded' ? {} : { how: { op: 'equal' as const, source: 0 } }),
  } as Checked;
}

function check(answer: string, figures: Checked[]): FiguresEvent {
  return { figures, sources: [], ungrounded: figures.filter((f) => f.grounding === 'ungrounded').length, chars: Array.from(answer).length };
}

describe("an answer's figures in its text", () => {
  const answer = 'You spent **₹1,40,619.00** in all, and ₹99,999.99 on Dining.';
  const figures = check(answer, [money('₹1,40,619.00', 12, 'exact'), money('₹99,999.99', 39, 'ungrounded')]);

  it('places each figure by its characters, bold kept and its markers dropped', () => {
    const segments = answerSegments(answer, figures);
    expect(segments.map((s) => [s.text, s.bold, s.figure])).toEqual([
      ['You spent ', false, undefined],
      ['₹1,40,619.00', true, 0],
      [' in all, and ', false, undefined],
      ['₹99,999.99', false, 1],
      [' on Dining.', false, undefined],
    ]);
  });

  it('counts from the end of the text: words of an earlier step come before the answer', () => {
    const prose = `I'll look at ₹99,999.99 first.\n\n${answer}`;
    const segments = answerSegments(prose, figures);
    const placed = segments.filter((s) => s.figure !== undefined);
    expect(placed.map((s) => s.text)).toEqual(['₹1,40,619.00', '₹99,999.99']);
    // The earlier step's ₹99,999.99 is not the answer's.
    expect(segments[0]?.text.startsWith("I'll look at ₹99,999.99 first.")).toBe(true);
  });

  it('finds a figure by its text when the offsets do not fit, and leaves out one it cannot find', () => {
    const moved = { ...figures, chars: 3 };
    const segments = answerSegments(answer, moved);
    expect(segments.filter((s) => s.figure !== undefined).map((s) => s.text)).toEqual(['₹1,40,619.00', '₹99,999.99']);
    const absent = check('nothing here', [money('₹5.00', 0, 'exact')]);
    expect(answerSegments('nothing here', absent)).toEqual([{ text: 'nothing here', bold: false }]);
  });

  it('says plainly what an ungrounded figure means, and nothing when all are grounded', () => {
    expect(ungroundedNote(figures)).toMatch(/^₹99,999\.99 was not found in your ledger's results: no tool/);
    expect(ungroundedNote(check(answer, [money('₹1,40,619.00', 12, 'exact')]))).toBeNull();
    const two = check(answer, [money('₹1.00', 0, 'ungrounded'), money('₹2.00', 0, 'ungrounded')]);
    expect(ungroundedNote(two)).toMatch(/^₹1\.00 and ₹2\.00 were not found/);
  });

  it("makes a figure of its rows as the tool did: a sum, or an average rounded half away from zero", () => {
    expect(madeOfRows(-64900, 1, undefined)).toBe(-64900n);
    expect(madeOfRows(-129800, 2, 'sum')).toBe(-129800n);
    expect(madeOfRows(-100, 3, 'average')).toBe(-33n);
    expect(madeOfRows(-101, 2, 'average')).toBe(-51n);
    expect(madeOfRows(101, 2, 'average')).toBe(51n);
    expect(madeOfRows(0, 0, 'average')).toBe(0n);
  });

  it('names how a figure was made from its sources', () => {
    expect(howWords({ op: 'sum', a: 0, b: 1 }, ['Dining', 'Groceries'])).toBe('Dining + Groceries');
    expect(howWords({ op: 'ratio', part: 0, whole: 1 }, ['Dining', 'total'])).toBe('Dining as a share of total');
  });

  it('keeps the figures event on the exchange, and a result headline in the margin', () => {
    const x = [
      ['tool_call', { id: 'c1', name: 'get_spend_report', args: {}, tier: 'read' }],
      ['tool_result', { id: 'c1', name: 'get_spend_report', summary: '{}', outcome: 'ran', headline: { label: 'total spending', formatted: '₹1,40,619.00', amount_minor: 14061900, currency: 'INR' } }],
      ['token', { delta: answer }],
      ['figures', figures],
    ].reduce((e, [event, data]) => applyEvent(e, { event: event as string, data }), newExchange('how much?'));
    expect(x.figures?.ungrounded).toBe(1);
    expect(x.tools[0]?.result?.headline?.amount_minor).toBe(14061900);
  });
});
