// Generated from src/turnfold/render/nodes.py by `python -m turnfold.render.nodes`; do not edit: the tests
// fail when the two differ. Read by tsc --strict through the JS view's JSDoc imports.

export interface View {
  schema: number;
  locale: string;
  mode: string;
  show_thinking: boolean;
  session: SessionNode | null;
  timeline: TimelineNode | null;
  outcome: OutcomeNode | null;
  notice: NoticeNode | null;
  nodes: TopNode[];
}

export interface SessionNode {
  kind: "session";
  key: string;
  text: string;
  parts: SessionPart[];
}

export interface SessionPart {
  name: string;
  text: string;
  title: string | null;
}

export interface TimelineNode {
  kind: "timeline";
  key: string;
  open: boolean;
  title: string;
  note: string | null;
  origin: number;
  span: number;
  height: number;
  bar: number;
  mark: number;
  sparkline: string;
  back: string | null;
  turns: TimelineTurn[];
  deferred?: boolean;
}

export interface TimelineTurn {
  key: string;
  x: number;
  w: number;
  height: number;
  number: string | null;
  label: string;
  gaps: TimelineGap[];
  bars: TimelineBar[] | null;
  category: string | null;
  failed: boolean;
  call: string | null;
}

export interface TimelineGap {
  x: number;
  w: number;
  label: string;
  clock: boolean;
}

export interface TimelineBar {
  key: string;
  x: number;
  w: number;
  y: number;
  category: string;
  failed: boolean;
  label: string;
}

export interface OutcomeNode {
  kind: "outcome";
  key: string;
  status: string;
  text: string;
}

export interface NoticeNode {
  kind: "notice";
  key: string;
  text: string;
  items: string[];
}

export interface UserNode {
  kind: "user";
  key: string;
  label: string;
  command: string | null;
  html: string;
  more_html?: string;
  more_label?: string;
  omitted_label?: string;
  all_label?: string;
}

export interface SystemNode {
  kind: "system";
  key: string;
  level: string;
  html: string;
}

export interface CompactionNode {
  kind: "compaction";
  key: string;
  text: string;
  summary_html: string | null;
}

export interface TurnNode {
  kind: "turn";
  key: string;
  status: string;
  running: boolean;
  header: TurnHeader;
  process: ProcessNode | null;
  outside: OutsideNode[];
  answer: AnswerNode | null;
}

export interface TurnHeader {
  label: string;
  duration: string | null;
  count: string | null;
  usage?: string;
  usage_title?: string;
  duration_title?: string;
  text: string;
}

export interface ProcessNode {
  kind: "process";
  key: string;
  open: boolean;
  active: boolean;
  children: ChildNode[];
  deferred?: boolean;
  left_out?: boolean;
}

export interface ErrorNode {
  kind: "error";
  key: string;
  html: string;
}

export interface AbortNode {
  kind: "abort";
  key: string;
  html: string;
}

export interface PendingNode {
  kind: "pending";
  key: string;
  action: string;
  label: string;
  html: string;
  options: string[];
}

export interface AnswerNode {
  kind: "answer";
  key: string;
  html: string;
  tentative: boolean;
  rejected_label: string | null;
  omitted_label?: string;
  all_label?: string;
}

export interface GroupNode {
  kind: "group";
  key: string;
  title: string;
  count: string | null;
  open: boolean;
  active: boolean;
  children: ChildNode[];
}

export interface ThinkingNode {
  kind: "thinking";
  key: string;
  label: string;
  form: string;
  form_label: string | null;
  html: string;
  open: boolean;
  streaming: boolean;
  rejected_label: string | null;
}

export interface ThinkingIndicatorNode {
  kind: "thinking-indicator";
  key: string;
  label: string;
}

export interface ProgressNode {
  kind: "progress";
  key: string;
  html: string;
  rejected_label: string | null;
  omitted_label?: string;
  all_label?: string;
}

export interface CommandNode {
  kind: "command";
  key: string;
  tool: ToolNode;
}

export interface BatchNode {
  kind: "batch";
  key: string;
  active: boolean;
  rows: RowNode[];
  memory: string | null;
  label: string | null;
}

export interface SummaryNode {
  kind: "summary";
  key: string;
  text: string;
  active: boolean;
  open: boolean;
  tools: ToolNode[];
  rejected_label: string | null;
}

export interface ToolNode {
  kind: "tool";
  key: string;
  call_id: string;
  name: string;
  category: string;
  status: string;
  status_text: string;
  status_label: string | null;
  description: string | null;
  args: string | null;
  show_args: boolean;
  result: ResultView | null;
  result_folded: boolean;
  forced_open: boolean;
  struck: boolean;
  open: boolean;
  fold: ToolFold;
  subagent: SubagentView | null;
  rejected_label: string | null;
  deferred?: boolean;
  scoring?: boolean;
  scoring_label?: string;
}

export interface ToolFold {
  args: boolean;
  result: boolean;
  note: string | null;
  subagent: boolean;
}

export interface ResultView {
  kind: string;
  html: string;
  text: string;
  lines: number;
  truncated: boolean;
  more_html?: string;
  more_lines?: number;
  omitted_lines?: number;
  images: string[];
  notes: ResultNote[];
  notes_text: string[];
  more_label: string | null;
  omitted_label: string | null;
  all_label: string | null;
}

export interface ResultNote {
  key: string;
  params: Record<string, string>;
}

export interface SubagentView {
  line: string | null;
  nodes: TopNode[];
}

export type TopNode = UserNode | SystemNode | CompactionNode | TurnNode;

export type OutsideNode = ErrorNode | AbortNode | PendingNode;

export type ChildNode = GroupNode | ThinkingNode | ThinkingIndicatorNode | ProgressNode | CommandNode | BatchNode;

export type RowNode = SummaryNode | ToolNode;

export type AnyNode = UserNode | SystemNode | CompactionNode | TurnNode | ErrorNode | AbortNode | PendingNode | AnswerNode | ProcessNode | GroupNode | ThinkingNode | ThinkingIndicatorNode | ProgressNode | CommandNode | BatchNode | SummaryNode | ToolNode | OutcomeNode | NoticeNode | TimelineNode;

export type ProseNode = UserNode | AnswerNode | ProgressNode;
