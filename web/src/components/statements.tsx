// The statements a visitor keeps (GET /api/uploads): each with its name, size, date and whether it
// was imported, and a way to delete one. Deleting a statement never touches the ledger: the rows
// an import added stay.

import { useEffect, useState } from 'preact/hooks';
import { api } from '../api/client';
import type { Upload } from '../api/types';
import { shortDate } from '../lib/format';
import { refusalSentence } from '../lib/refusals';
import { Mark } from './mark';
import { Section } from './paper';

/** Bytes as a person reads them: "812 B", "14.2 KiB", "3.1 MiB". */
export function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/** Whether and when a statement was imported, in words. */
export function importedText(u: Pick<Upload, 'imported_at' | 'imported_rows'>): string {
  if (!u.imported_at) return 'not imported';
  const rows = u.imported_rows ?? 0;
  return `imported ${shortDate(u.imported_at)}, ${rows} ${rows === 1 ? 'row' : 'rows'} added`;
}

export function Statements({ visiting }: { visiting: boolean }) {
  const [uploads, setUploads] = useState<Upload[] | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<string | null>(null);

  useEffect(() => {
    if (!visiting) {
      setUploads([]);
      return;
    }
    api
      .uploads()
      .then((r) => setUploads(r?.uploads ?? []))
      .catch((e) => setProblem(refusalSentence(e).text));
  }, [visiting]);

  async function remove(upload: Upload) {
    setDeleting(upload.id);
    setProblem(null);
    try {
      await api.deleteUpload(upload.id);
      setUploads((us) => (us ?? []).filter((u) => u.id !== upload.id));
    } catch (e) {
      setProblem(`${upload.filename} was not deleted: ${refusalSentence(e).text}`);
    } finally {
      setDeleting(null);
    }
  }

  const own = (uploads ?? []).filter((u) => !u.sample).length;
  return (
    <Section
      title="Your statements"
      id="statements"
      note="The files you uploaded for the importer: at most 20 (the sample statement aside). Deleting one keeps what an import of it added to your ledger."
    >
      {uploads === null && problem === null ? (
        <p class="muted small" role="status">
          <span class="pulse">Reading your statements…</span>
        </p>
      ) : null}
      {uploads !== null && uploads.length === 0 ? <p class="muted small">No statements kept. Bring one from the chat's Statement button.</p> : null}
      {uploads !== null && uploads.length > 0 ? (
        <>
          <ol class="rows statement-list">
            {uploads.map((u) => (
              <li key={u.id} class="row statement-row">
                <span class="statement-name">
                  {u.filename}
                  {u.sample ? <span class="tiny faint"> (the sample)</span> : null}
                </span>
                <span class="tiny faint num">
                  {size(u.size_bytes)} · {shortDate(u.created_at)} · {importedText(u)}
                </span>
                <button
                  type="button"
                  class="btn compact btn-secondary"
                  disabled={deleting !== null}
                  aria-label={`Delete ${u.filename}`}
                  onClick={() => void remove(u)}
                >
                  {deleting === u.id ? 'Deleting…' : 'Delete'}
                </button>
              </li>
            ))}
          </ol>
          <p class="tiny faint">{own} of 20 kept.</p>
        </>
      ) : null}
      {problem ? (
        <p class="small" role="alert">
          <Mark tone="danger">failed</Mark> {problem}
        </p>
      ) : null}
    </Section>
  );
}
