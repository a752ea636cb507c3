// Generated from src/turnfold/browser.py by `python -m turnfold.browser`; do not edit: the tests
// fail when the two differ. Read by tsc --strict through the JS view's JSDoc imports.

export interface Filter {
  column: string;
  op: "==" | "!=" | ">=" | "<=" | "contains";
  value: string | number | null;
}

export interface Query {
  sort: string | null;
  descending: boolean;
  filters: Filter[];
  columns: string[];
  offset: number;
}

export interface ColumnHead {
  name: string;
  label: string;
  numeric: boolean;
  clip: boolean;
  sort: "ascending" | "descending" | null;
}

export interface Cell {
  text: string;
  tone?: "pass" | "fail" | "error" | "incomplete" | "other" | "dim";
  title?: string;
}

export interface Row {
  key: string;
  cells: Cell[];
  tone?: "pass" | "fail" | "error" | "incomplete" | "other" | "dim";
}

export interface Page {
  query: Query;
  total: number;
  columns: ColumnHead[];
  rows: Row[];
  label: string;
  problems: string[];
}

export interface ColumnChoice {
  name: string;
  label: string;
  kind: "text" | "count" | "tokens" | "duration" | "cost" | "datetime" | "outcome" | "failures" | "number" | "error";
  ops: ("==" | "!=" | ">=" | "<=" | "contains")[];
}

export interface Option {
  value: string;
  label: string;
  count: number;
}

export interface Control {
  kind: "choice" | "flag" | "date";
  column: string;
  op: "==" | "!=" | ">=" | "<=" | "contains";
  value: string | number | null;
  label: string;
  options: Option[];
}

export interface Choices {
  rows: number;
  controls: Control[];
  columns: ColumnChoice[];
  op_labels: Record<string, string>;
}

export interface Hit {
  key: string;
  title: string;
  where: string;
  entry: string;
  snippet: string;
}

export interface Hits {
  query: string;
  searching: boolean;
  hits: Hit[];
  label: string;
}

export interface OpenRequest {
  type: "open";
  key: string;
  entry: string | null;
}

export interface SearchRequest {
  type: "search";
  query: string;
}

export interface CloseRunRequest {
  type: "close_run";
}

export interface BrowserTraits {
  query: Query;
  selected: string | null;
  _page: Page;
  _choices: Choices;
  _counts: string;
  _hits: Hits | null;
  _strings: Record<string, string>;
  _transcript: string | null;
}

export type BrowserRequest = OpenRequest | SearchRequest | CloseRunRequest;
