// The HTTP contract of the functions (README "The functions"), as the page reads it. Amounts are
// integer minor units with their currency; USD costs are list-price estimates in dollars.

import type { Amount } from '../lib/money';
import type {
  AdminOverview,
  ErrorBody,
  Kept,
  Upload as UploadRow,
  UploadList,
  BotCheckView,
  Budget,
  Category,
  CategoryList,
  Deleted,
  Edit,
  EditKind,
  EditList,
  Kind,
  Like,
  Line,
  MessagesLeft,
  ModelView,
  MonthView,
  Page,
  Row,
  Rule,
  RuleInput,
  RuleList,
  SessionView,
  SignedIn,
  VisitorView,
  Anomaly,
  BalancesOutput,
  Block,
  CategoryStatus,
  CheckOutcome,
  Dashboard,
  DashboardTransaction,
  EvalReport,
  Group,
  Merchant,
  SpendReport,
  TaskResult,
  Conversation,
  ConversationList,
  ConversationSummary,
  Event,
  EventUsage,
  Message,
  PendingTurn,
  RunDetail,
  RunEvent,
  RunList,
  RunSummary,
  Tier as WireTier,
  ToolInfo,
  ToolList,
  ToolOutcome,
  TurnEnd,
  WriteDecision,
} from './wire';

export type Tier = WireTier;

// The read side's answers, generated from the Rust types (`wire.ts`).
export type {
  UploadList,
  CategoryList,
  Deleted,
  EditKind,
  EditList,
  MessagesLeft,
  RuleInput,
  RuleList,
  SignedIn,
  AdminOverview,
  Anomaly,
  CategoryStatus,
  CheckOutcome,
  Dashboard,
  EvalReport,
  SpendReport,
  TaskResult,
  Conversation,
  ConversationList,
  ConversationSummary,
  PendingTurn,
  RunDetail,
  RunEvent,
  RunList,
  RunSummary,
  ToolInfo,
  ToolList,
};
/** A stored canonical message, as the conversation holds it. */
export type StoredMessage = Message;
export type StoredBlock = Block;
export type Session = SessionView;
export type Visitor = VisitorView;
export type ModelInfo = ModelView;
export type BotCheck = BotCheckView;
export type MessagesToday = MessagesLeft;
export type RegisterKind = Kind;
export type RegisterRow = Row;
export type RegisterPage = Page;
export type LedgerEdit = Edit;
/** A category of the person's chart (`GET /api/categories`). */
export type CategoryItem = Category;
/** A categorisation rule (`GET /api/rules`), in the order rules are tried. */
export type RuleItem = Rule;
/** What giving a rule's category to the past rows like it would do (`POST /api/rules/preview`). */
export type RuleLike = Like;
export type BudgetAmount = Budget;
/** One spending category in a month (`GET /api/budgets`). */
export type BudgetLine = Line;
export type BudgetMonth = MonthView;
export type SpendGroup = Group;
export type RecurringMerchant = Merchant;
export type LedgerRow = DashboardTransaction;
/** `get_balances`: what each account holds (owed negative), net worth and what waits in transit. */
export type Balances = BalancesOutput;

/** A refusal's or failure's body: the sentence, and a reason code for those a page acts on. */
export type RefusalBody = ErrorBody;

// region: turn events (chat and confirm streams)
//
// Generated from the Rust types (`wire.ts`, from `kakeibo_core::wire`): an SSE frame's data is
// the event without its `type`, which the frame names.

type EventData<T extends Event['type']> = Omit<Extract<Event, { type: T }>, 'type'>;

export type { ToolOutcome, WriteDecision };
export type TokenEvent = EventData<'token'>;
export type ToolCallEvent = EventData<'tool_call'>;
export type ToolResultEvent = EventData<'tool_result'>;
export type ConfirmRequestEvent = EventData<'confirm_request'>;
export type TurnEndEvent = TurnEnd;
export type ErrorEvent = EventData<'error'>;
export type Usage = EventUsage;

// endregion

// region: uploads and the import preview

/** An upload as listed, or kept (`reused` then: the same bytes were kept already). */
export type Upload = Kept | UploadRow;

export interface RowError {
  line: number;
  column: string | null;
  message: string;
  raw: string;
  /** A row whose amount disagrees with the balance column: both figures, as they would be booked. */
  figures?: Figures;
}

/** A row's amount and the change of the balance column across it, in minor units. */
export interface Figures {
  amount_minor: number;
  balance_minor: number;
  currency: string;
}

/** Which figure a refused row is taken in at. */
export type Figure = 'amount' | 'balance';

/** A refused row, and the figure to take it in at (what the preview is asked with). */
export interface TakenLine {
  line: number;
  take: Figure;
}

/** A refused row taken in at the figure its person chose, as the plan records it. */
export interface TakenFigure extends Figures {
  line: number;
  take: Figure;
}

export interface DuplicateRow {
  line: number;
  date: string;
  description: string;
  amount_minor: number;
  reason: string;
}

/** How a statement's amounts agreed with its running-balance column. */
export interface Reconciliation {
  column: string;
  order: 'oldest_first' | 'newest_first';
  position: 'after' | 'before';
  balance_kind: 'held' | 'owed';
  checked: number;
  reconciled: number;
  signs_from_balance: boolean;
}

/** The kinds of account a person has: cards and loans are owed (liabilities). */
export type AccountKind = 'checking' | 'savings' | 'card' | 'cash' | 'loan' | 'transit';

/** An account a statement goes into: created on import when it does not exist. */
export interface PlannedAccount {
  name: string;
  currency: string;
  exists: boolean;
  kind?: AccountKind;
  /** Why it is of that kind: asked for, the account's own, the statement's, or the default. */
  kind_from?: string;
}

/** One side of a transfer: a row of this statement, or one waiting in transit in the ledger. */
export interface TransferSide {
  transaction_id: string | null;
  line: number | null;
  account: string;
  date: string;
  description: string;
  amount: Amount;
}

export interface PlannedTransfer {
  row: TransferSide;
  /** Why the row looks like a transfer. */
  why: string;
  status: 'paired' | 'in_transit' | 'ask';
  in_words: string;
  with: TransferSide | null;
  /** For a question: the rows that fit equally, and the person's answer (an index) once given. */
  candidates: TransferSide[];
  answer?: number | null;
}

/** A row of the preview, as the statement will be booked. */
export interface PreviewRow {
  line: number;
  date: string;
  description: string;
  category: string;
  amount: Amount;
  direction: 'in' | 'out';
}

/** Where every line of the file went; the counts add up to `total`. */
export interface LineCount {
  total: number;
  banner: number;
  header: number;
  blank: number;
  notes: number;
  rows: number;
  duplicates: number;
  skipped: number;
  unreadable: number;
  continued: number;
}

export interface ImportPreview {
  plan_id: string;
  filename: string;
  format?: {
    reconciliation?: Reconciliation | null;
    date_order?: 'day_first' | 'month_first' | 'year_first';
    date_order_assumed?: boolean;
    /** Where the currency of amounts that name none came from; null when every amount names its own. */
    currency_from?: string | null;
    /** The kind of account the statement says it is of, and why. */
    account_kind?: { kind: AccountKind; why: string } | null;
    /** Rows the balance column refused that were taken in at the figure chosen. */
    taken?: TakenFigure[];
  };
  /** The detected layout in words. */
  layout: string;
  /** How the amounts agreed with the running-balance column, in a sentence; null without one. */
  balance_check: string | null;
  accounts: PlannedAccount[];
  rows_to_add: number;
  /** Rows that look like money moved between the person's own accounts, and what becomes of each. */
  transfers?: PlannedTransfer[];
  transfer_window_days?: number;
  opening_balance?: { account: string; date: string; amount: Amount } | null;
  closing_balance?: {
    account: string;
    date: string;
    bank: Amount;
    ledger: Amount;
    checked: boolean;
    agrees: boolean;
    in_words: string;
  } | null;
  /** Rows already in another of the person's accounts (not added again). */
  elsewhere?: { account: string; rows: number } | null;
  /** The person's accounts that hold money, to choose another one. */
  account_choices?: { name: string; kind: AccountKind; currency: string }[];
  /** Why the statement goes into its account when none was named (the last one of its layout). */
  account_from?: string | null;
  date_range: { from: string; to: string } | null;
  money_in: Amount[];
  money_out: Amount[];
  by_category: { category: string; rows: number; amounts: Amount[] }[];
  uncategorized: number;
  duplicates_skipped: number;
  duplicates: DuplicateRow[];
  parse_errors: number;
  errors: RowError[];
  skipped: RowError[];
  lines: LineCount;
  first_rows: PreviewRow[];
  last_rows: PreviewRow[];
}

// endregion

// region: the read side

// endregion

// region: evaluations

// endregion

// region: the register (GET /api/transactions, the edits)

