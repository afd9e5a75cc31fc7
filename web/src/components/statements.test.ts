import { describe, expect, it } from 'vitest';
import { importedText, size } from './statements';

describe('a kept statement in words', () => {
  it('gives its size as a person reads it', () => {
    expect(size(812)).toBe('812 B');
    expect(size(14_540)).toBe('14.2 KiB');
    expect(size(3_250_000)).toBe('3.1 MiB');
  });

  it('says whether it was imported, and how many rows that added', () => {
    expect(importedText({ imported_at: null, imported_rows: null })).toBe('not imported');
    expect(importedText({ imported_at: '2026-12-05T10:00:00Z', imported_rows: 1 })).toMatch(/^imported .+, 1 row added$/);
    expect(importedText({ imported_at: '2026-12-05T10:00:00Z', imported_rows: 12 })).toMatch(/, 12 rows added$/);
  });
});
