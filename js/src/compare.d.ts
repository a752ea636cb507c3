// Generated from src/turnfold/render/compare_nodes.py by `python -m turnfold.render.compare_nodes`; do not edit: the tests
// fail when the two differ. Read by tsc --strict through the JS view's JSDoc imports.

import type { SessionNode, OutcomeNode, NoticeNode, TopNode } from "./nodes";

export interface DiffPart {
  name: string;
  text: string;
  changed: boolean;
}

export interface PairHeader {
  label: string;
  status: string;
  status_label: string;
  parts: DiffPart[];
  text: string;
}

export interface PairNode {
  kind: "pair";
  key: string;
  header: PairHeader;
  a: TopNode[] | null;
  b: TopNode[] | null;
}

export interface CompareSide {
  key: string;
  name: string;
  session: SessionNode | null;
  outcome: OutcomeNode | null;
  notice: NoticeNode | null;
  gap: string;
}

export interface CompareView {
  schema: number;
  key: string;
  locale: string;
  mode: string;
  show_thinking: boolean;
  sides: CompareSide[];
  summary: string;
  first: string | null;
  links: Record<string, string>;
  pairs: PairNode[];
  only: string | null;
}

export interface TableRow {
  kind: "pair-row";
  key: string;
  title: string | null;
  change: string;
  change_label: string;
  a: string;
  b: string;
  only: string | null;
}

export interface TotalsLine {
  side: string;
  name: string;
  text: string;
}

export interface PairTable {
  summary: string;
  totals: TotalsLine[];
  columns: string[];
  rows: TableRow[];
  page: number;
  pages: number;
  range_label: string;
  selected: string | null;
  selected_only: string | null;
  empty: string | null;
}

export interface SelectRequest {
  type: "select";
  key: string;
  only: string | null;
}

export interface PageRequest {
  type: "page";
  page: number;
}

export interface CompareTraits {
  _compare: CompareView | null;
  _table: PairTable | null;
  _folds: Record<string, Record<string, Record<string, "open" | "closed" | "owned">>>;
  _strings: Record<string, string>;
}
