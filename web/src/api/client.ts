// The one module that speaks HTTP to the functions. Every call goes to the same origin under
// /api/ with the session cookie; a refusal becomes an [`ApiError`] carrying the status, the
// server's sentence and its reason code, so pages decide what to say from typed values.

import type {
  AccountKind,
  CategoryList,
  Deleted,
  EditList,
  RuleList,
  AdminAction,
  AdminActionDone,
  AdminOverview,
  Gone,
  HomeCurrency,
  Reset,
  Sent,
  SignedOut,
  Verified,
  Conversation,
  ConversationList,
  Dashboard,
  EvalReport,
  ImportPreview,
  RefusalBody,
  FigureRows,
  RunDetail,
  RunList,
  Session,
  ToolList,
  Upload,
  UploadList,
  LedgerEdit,
  RegisterPage,
  BudgetAmount,
  BudgetMonth,
  CategoryItem,
  RuleInput,
  RuleItem,
  RuleLike,
  TakenLine,
} from './types';
import type { Decision } from '../lib/confirm';

export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    message: string,
    readonly reason?: string,
    /** A file of several statements (`several_statements`): each in a few words, statement 1 first. */
    readonly statements: string[] = [],
  ) {
    super(message);
  }
}

async function refusal(response: Response): Promise<ApiError> {
  // What a proxy in between says need not be ours: read it as at most a refusal's body.
  let body: Partial<RefusalBody> = {};
  try {
    body = (await response.json()) as Partial<RefusalBody>;
  } catch {
    // Not JSON (a proxy's page): the status says enough.
  }
  const sentence = typeof body.error === 'string' && body.error !== '' ? body.error : `HTTP ${response.status}`;
  const statements = Array.isArray(body.statements) ? body.statements.filter((s): s is string => typeof s === 'string') : [];
  return new ApiError(response.status, sentence, typeof body.reason === 'string' ? body.reason : undefined, statements);
}

async function request(path: string, init: RequestInit = {}): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(path, { credentials: 'same-origin', ...init });
  } catch (e) {
    if (e instanceof DOMException && e.name === 'AbortError') throw e;
    throw new ApiError(0, 'The site could not be reached. Check the connection and try again.');
  }
  if (!response.ok) throw await refusal(response);
  return response;
}

async function json<T>(path: string, init: RequestInit = {}): Promise<T> {
  const response = await request(path, init);
  return (await response.json()) as T;
}

/** What a preview may be asked with. */
export interface PreviewOptions {
  currency?: string;
  account?: string;
  kind?: AccountKind;
  /** Rows the balance column refuses, taken in at the figure the person chose. */
  figures?: TakenLine[];
  /** Which statement of a file of several (1-based). */
  statement?: number;
}

/** Only the options given: an empty body asks for the defaults. */
export function previewBody(options: PreviewOptions): Record<string, string | number | TakenLine[]> {
  const body: Record<string, string | number | TakenLine[]> = {};
  if (options.currency) body.currency = options.currency;
  if (options.account?.trim()) body.account = options.account.trim();
  if (options.kind) body.kind = options.kind;
  if (options.figures?.length) body.figures = options.figures;
  if (options.statement) body.statement = options.statement;
  return body;
}

function post(body: unknown, method = 'POST', signal?: AbortSignal): RequestInit {
  return {
    method,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  };
}

/** `null` instead of a `404`, for reads that may find nothing. */
async function orNull<T>(promise: Promise<T>): Promise<T | null> {
  try {
    return await promise;
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) return null;
    throw e;
  }
}

/** `null` for no session (`401`): the page shows its signed-out state instead of an error. */
async function orSignedOut<T>(promise: Promise<T>): Promise<T | null> {
  try {
    return await promise;
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) return null;
    throw e;
  }
}

export const api = {
  session: () => json<Session>('/api/session'),
  /** Starts an anonymous visit without a message (before an upload); with the bot check on, its
   * token goes along (it also passes the check for a visit that has not). */
  startVisit: (turnstileToken?: string) => json<Session>('/api/session', post(turnstileToken ? { turnstile_token: turnstileToken } : {})),
  signUp: (email: string, password: string, turnstileToken?: string) =>
    json<Pick<Session, 'visitor'>>('/api/session/sign-up', post({ email, password, ...(turnstileToken ? { turnstile_token: turnstileToken } : {}) })),
  signIn: (email: string, password: string) => json<Pick<Session, 'visitor'>>('/api/session/sign-in', post({ email, password })),
  signOut: () => json<SignedOut>('/api/session/sign-out', post({})),
  /** Every other session of the account ends; this browser gets a fresh one. */
  changePassword: (current: string, password: string) =>
    json<Pick<Session, 'visitor'>>('/api/session/password', post({ current, password })),
  /** The same answer whether or not the address has an account. */
  requestPasswordReset: (email: string) => json<Sent>('/api/session/password-reset', post({ email })),
  resetPassword: (token: string, password: string) =>
    json<Reset>('/api/session/password-reset/confirm', post({ token, password })),
  verifyEmail: (token: string) => json<Verified>('/api/session/verify-email', post({ token })),
  resendVerification: () => json<Sent>('/api/session/verify-email/resend', post({})),
  deleteAccount: () => json<Gone>('/api/account', { method: 'DELETE' }),
  /** "Download my data": the zip of the four export files, and the name the server gave it. */
  exportData: async (): Promise<{ blob: Blob; filename: string }> => {
    const response = await request('/api/export');
    const disposition = response.headers.get('content-disposition') ?? '';
    const named = /filename="([^"]+)"/.exec(disposition)?.[1];
    return { blob: await response.blob(), filename: named ?? 'kakeibo.zip' };
  },

  /** The turn's event stream; a refusal (`503`, `409`, …) throws before any event. The bot check's
   * token goes with it while the session asks for one. */
  chat: async (message: string, conversationId: string | null, signal: AbortSignal, turnstileToken?: string) =>
    request(
      '/api/chat',
      post(
        { message, ...(conversationId ? { conversation_id: conversationId } : {}), ...(turnstileToken ? { turnstile_token: turnstileToken } : {}) },
        'POST',
        signal,
      ),
    ),
  confirm: async (suspendedTurnId: string, decisions: Decision[], signal: AbortSignal) =>
    request('/api/confirm', post({ suspended_turn_id: suspendedTurnId, decisions }, 'POST', signal)),

  upload: (file: File) =>
    json<Upload>(`/api/uploads?filename=${encodeURIComponent(file.name)}`, {
      method: 'POST',
      headers: { 'content-type': file.type || 'text/csv' },
      body: file,
    }),
  /** The shipped sample statement, kept as an upload that uses none of the visitor's room. */
  uploadSample: () => json<Upload>('/api/uploads/sample', { method: 'POST' }),
  /** The importer's preview; `currency` names the currency of amounts the statement leaves unnamed,
   * `account` the account it goes into (and `kind`, when that account is new). */
  preview: (uploadId: string, options: PreviewOptions = {}) =>
    json<ImportPreview>(`/api/uploads/${encodeURIComponent(uploadId)}/preview`, post(previewBody(options))),
  /** The person's answers to a preview's questions (a row's line, the index of its candidate),
   * kept with the plan for its commit: the preview again. */
  answer: (planId: string, answers: { line: number; candidate: number }[]) =>
    json<ImportPreview>(`/api/uploads/plans/${encodeURIComponent(planId)}/answers`, post({ answers })),
  /** The currency new accounts and budgets take. */
  setHomeCurrency: (currency: string) => json<HomeCurrency>('/api/session/home-currency', post({ currency })),
  uploads: () => orSignedOut(json<UploadList>('/api/uploads')),
  deleteUpload: (id: string) => json<Gone>(`/api/uploads/${encodeURIComponent(id)}`, { method: 'DELETE' }),

  runs: () => orSignedOut(json<RunList>('/api/runs?limit=100')),
  run: (id: string) => orNull(orSignedOut(json<RunDetail>(`/api/runs/${encodeURIComponent(id)}`))),
  /** Figure `n` of a run's answer with the rows behind it, fetched again; null when there is none. */
  figureRows: (run: string, n: number) =>
    orNull(orSignedOut(json<FigureRows>(`/api/runs/${encodeURIComponent(run)}/figures/${n}`))),
  /** One page of the register; `query` is the search as URL parameters. */
  transactions: (query: string) => orSignedOut(json<RegisterPage>(`/api/transactions${query ? `?${query}` : ''}`)),
  changeTransaction: (id: string, change: { category?: string; description?: string }) =>
    json<EditList>(`/api/transactions/${encodeURIComponent(id)}`, post(change, 'PATCH')),
  splitTransaction: (id: string, shares: { category: string; amount_minor: number }[]) =>
    json<LedgerEdit>(`/api/transactions/${encodeURIComponent(id)}/split`, post({ shares })),
  deleteTransaction: (id: string) => json<LedgerEdit>(`/api/transactions/${encodeURIComponent(id)}`, { method: 'DELETE' }),
  undoImport: (id: string) => json<LedgerEdit>(`/api/imports/${encodeURIComponent(id)}/undo`, { method: 'POST' }),
  edits: () => orSignedOut(json<EditList>('/api/edits')),
  revertEdit: (id: string) => json<LedgerEdit>(`/api/edits/${encodeURIComponent(id)}/revert`, { method: 'POST' }),
  categories: () => orSignedOut(json<CategoryList>('/api/categories')),
  addCategory: (name: string, side: CategoryItem['side']) => json<CategoryItem>('/api/categories', post({ name, side })),
  renameCategory: (id: string, name: string) => json<CategoryItem>(`/api/categories/${encodeURIComponent(id)}`, post({ name }, 'PATCH')),
  /** `id`'s rows, rules and budgets moved to `into`, `id` gone: one recorded edit. */
  mergeCategory: (id: string, into: string) => json<LedgerEdit>(`/api/categories/${encodeURIComponent(id)}/merge`, post({ into })),
  rules: () => orSignedOut(json<RuleList>('/api/rules')),
  /** A new rule (`id` null) or rule `id` changed. */
  saveRule: (id: string | null, rule: RuleInput) =>
    id ? json<RuleItem>(`/api/rules/${encodeURIComponent(id)}`, post(rule, 'PATCH')) : json<RuleItem>('/api/rules', post(rule)),
  deleteRule: (id: string) => json<Deleted>(`/api/rules/${encodeURIComponent(id)}`, { method: 'DELETE' }),
  /** What filing the past rows holding `pattern` under `category` would do; nothing changes. */
  previewRule: (pattern: string, category: string) => json<RuleLike>('/api/rules/preview', post({ pattern, category })),
  applyRule: (pattern: string, category: string) => json<LedgerEdit>('/api/rules/apply', post({ pattern, category })),
  budgets: (month: string | null) =>
    orSignedOut(json<BudgetMonth>(month ? `/api/budgets?month=${encodeURIComponent(month)}` : '/api/budgets')),
  setBudget: (categoryId: string, month: string, amountMinor: number, currency?: string) =>
    json<BudgetAmount>(
      '/api/budgets',
      post({ category_id: categoryId, month, amount_minor: amountMinor, ...(currency ? { currency } : {}) }, 'PUT'),
    ),
  deleteBudget: (id: string) => json<Deleted>(`/api/budgets/${encodeURIComponent(id)}`, { method: 'DELETE' }),
  dashboard: (month: string | null) =>
    orSignedOut(json<Dashboard>(month ? `/api/dashboard?month=${encodeURIComponent(month)}` : '/api/dashboard')),
  conversations: () => orSignedOut(json<ConversationList>('/api/conversations')),
  conversation: (id: string) => orNull(orSignedOut(json<Conversation>(`/api/conversations/${encodeURIComponent(id)}`))),
  latestEvaluation: () => orNull(json<EvalReport>('/api/evals/latest')),
  tools: () => json<ToolList>('/api/tools'),

  adminOverview: () => orNull(json<AdminOverview>('/api/admin/overview')),
  /** Any visitor's run, for the operator; `null` for everyone else (the route is 404 to them). */
  adminRun: (id: string) => orNull(json<RunDetail>(`/api/admin/runs/${encodeURIComponent(id)}`)),
  adminAction: (action: AdminAction) => json<AdminActionDone>('/api/admin/action', post(action)),
};
