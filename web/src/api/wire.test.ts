import { readFile } from 'node:fs/promises';

import { describe, expect, it } from 'vitest';

import { WIRE_TS, wireTypes } from '../../scripts/wire.mjs';

describe('the generated wire types', () => {
  it('are what the committed schema (made from the Rust types) says', async () => {
    const committed = await readFile(WIRE_TS, 'utf8');
    // On a difference: `npm run wire` (after `KAKEIBO_WRITE_WIRE=1 cargo test -p kakeibo-devserver --test it wire`).
    expect(committed).toBe(await wireTypes());
  });

  it('name every way a tool call can end', async () => {
    expect(await wireTypes()).toContain(
      "export type ToolOutcome = 'ran' | 'failed' | 'declined' | 'expired' | 'denied_by_rule' | 'refused_by_hook';",
    );
  });
});
