// The figures of an answer, placed in its text: the server found each one (its characters from
// the answer's start) and checked it against the turn's tool results. Pure, so the page's
// placing of every figure is tested without a browser.

import type { FiguresEvent } from '../api/types';

/** A run of the answer's text: plain, bold (`**…**`), and perhaps one figure (its index). */
export interface Segment {
  text: string;
  bold: boolean;
  figure?: number;
}

/** Where each figure stands in `cps` (the text's code points): `[start, end)` or `null`. */
function placed(cps: string[], check: FiguresEvent): ([number, number] | null)[] {
  // The answer ends the text (an earlier step's words may come before it).
  const base = cps.length - check.chars;
  // Where the next figure is looked for when its offsets do not fit: after the last one placed,
  // in the answer first, then anywhere after it.
  let from = Math.max(base, 0);
  let after = 0;
  return check.figures.map((f) => {
    const length = Array.from(f.text).length;
    const at = base + f.start;
    let found = at >= 0 && cps.slice(at, at + length).join('') === f.text ? at : search(cps, f.text, from);
    if (found < 0) found = search(cps, f.text, after);
    if (found < 0) return null;
    from = after = found + length;
    return [found, found + length];
  });
}

function search(cps: string[], text: string, from: number): number {
  const needle = Array.from(text);
  for (let i = from; i + needle.length <= cps.length; i += 1) {
    if (needle.every((c, j) => cps[i + j] === c)) return i;
  }
  return -1;
}

/** `text` as runs of plain and bold words, each figure of `check` a run of its own. */
export function answerSegments(text: string, check: FiguresEvent | null): Segment[] {
  const cps = Array.from(text);
  // Per code point: bold or not, and whether it is a `**` marker (not shown).
  const bold = new Array<boolean>(cps.length).fill(false);
  const marker = new Array<boolean>(cps.length).fill(false);
  for (let i = 0; i + 1 < cps.length; i += 1) {
    if (cps[i] !== '*' || cps[i + 1] !== '*') continue;
    let close = -1;
    for (let j = i + 3; j + 1 < cps.length; j += 1) {
      if (cps[j] === '*' && cps[j + 1] === '*') {
        close = j;
        break;
      }
      if (cps[j] === '*') break;
    }
    if (close < 0) continue;
    marker[i] = marker[i + 1] = marker[close] = marker[close + 1] = true;
    for (let k = i + 2; k < close; k += 1) bold[k] = true;
    i = close + 1;
  }
  const figureAt = new Array<number>(cps.length).fill(-1);
  if (check) {
    placed(cps, check).forEach((span, n) => {
      if (!span) return;
      for (let k = span[0]; k < span[1]; k += 1) figureAt[k] = n;
    });
  }
  const out: Segment[] = [];
  cps.forEach((c, k) => {
    if (marker[k]) return;
    const figure = figureAt[k] ?? -1;
    const last = out[out.length - 1];
    if (last && last.bold === bold[k] && (last.figure ?? -1) === figure) {
      last.text += c;
    } else {
      out.push({ text: c, bold: bold[k] ?? false, ...(figure >= 0 ? { figure } : {}) });
    }
  });
  return out;
}

/** The sentence under an answer whose figures were not all found. */
export function ungroundedNote(check: FiguresEvent): string | null {
  const missing = check.figures.filter((f) => f.grounding === 'ungrounded').map((f) => f.text);
  if (missing.length === 0) return null;
  const list = missing.length === 1 ? missing[0] : `${missing.slice(0, -1).join(', ')} and ${missing[missing.length - 1]}`;
  const verb = missing.length === 1 ? 'was' : 'were';
  return (
    `${list} ${verb} not found in your ledger's results: no tool the agent used for this answer returned ` +
    `${missing.length === 1 ? 'it' : 'them'}, nor two figures that add, subtract or divide to ${missing.length === 1 ? 'it' : 'them'}. ` +
    `Treat ${missing.length === 1 ? 'it' : 'them'} as unchecked: ask again, or look in the ledger.`
  );
}

/** What a figure's rows come to: their sum, or (a figure that is their average) the sum divided
 * by their count, rounded half away from zero as the tool rounds — in integers, never floats. */
export function madeOfRows(sumMinor: number, count: number, aggregate: 'sum' | 'average' | undefined): bigint {
  const sum = BigInt(sumMinor);
  if (aggregate !== 'average' || count === 0) return sum;
  const n = BigInt(count);
  const half = n / 2n;
  return sum >= 0n ? (sum + half) / n : (sum - half) / n;
}

/** How a grounded figure was made, in words: "total spending", "Dining + Groceries". */
export function howWords(how: FiguresEvent['figures'][number]['how'], labels: string[]): string {
  if (!how) return '';
  const l = (i: number) => labels[i] ?? '?';
  switch (how.op) {
    case 'equal':
      return l(how.source);
    case 'sum':
      return `${l(how.a)} + ${l(how.b)}`;
    case 'difference':
      return `${l(how.a)} − ${l(how.b)}`;
    case 'ratio':
      return `${l(how.part)} as a share of ${l(how.whole)}`;
    case 'change':
      return `the change from ${l(how.from)} to ${l(how.to)}`;
  }
}
