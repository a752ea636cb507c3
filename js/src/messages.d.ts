// Generated from src/turnfold/transport.py by `python -m turnfold.transport`; do not edit: the tests
// fail when the two differ. Read by tsc --strict through the JS view's JSDoc imports.

import type { View, TimelineTurn, TopNode, ChildNode, RowNode, AnyNode } from "./nodes";

export interface Upsert {
  after: string | null;
  node: TopNode;
}

export interface ChildUpsert {
  after: string | null;
  node: ChildNode | RowNode;
}

export interface NodePatch {
  key: string;
  fields?: Record<string, unknown>;
  upsert?: ChildUpsert[];
  remove?: string[];
  change?: NodePatch[];
}

export interface TimelineUpsert {
  after: string | null;
  turn: TimelineTurn;
}

export interface TimelinePatch {
  fields: Record<string, unknown>;
  upsert: TimelineUpsert[];
  remove: string[];
}

export interface PatchMessage {
  type: "patch";
  rev: number;
  base: number;
  upsert: Upsert[];
  remove: string[];
  change?: NodePatch[];
  fields?: Record<string, unknown>;
  timeline?: TimelinePatch;
}

export interface FullMessage {
  type: "full";
  to: string;
  rev: number;
  view: View | null;
}

export interface ReplaceMessage {
  type: "replace";
  rev: number;
  view: View;
  folds: Record<string, "open" | "closed" | "owned">;
}

export interface ContentMessage {
  type: "content";
  to: string;
  nodes: Record<string, AnyNode | null>;
}

export interface OutputMessage {
  type: "output";
  to: string;
  key: string;
  part: number;
  parts: number;
  text: string;
}

export interface RevealMessage {
  type: "reveal";
  key: string;
  path: string[];
  nodes: Record<string, AnyNode | null>;
  to?: string;
}

export interface SearchHit {
  key: string;
  path: string[];
}

export interface SearchMessage {
  type: "search";
  to: string;
  id: number;
  query: string;
  hits: SearchHit[];
  total: number;
  label: string;
  nodes: Record<string, AnyNode | null>;
}

export interface HelloRequest {
  type: "hello";
  view: string;
  rev?: number;
}

export interface ContentRequest {
  type: "content";
  view: string;
  keys: string[];
}

export interface OutputRequest {
  type: "output";
  view: string;
  key: string;
}

export interface SearchRequest {
  type: "search";
  view: string;
  id: number;
  query: string;
}

export interface RevealRequest {
  type: "reveal";
  view: string;
  key: string;
}

export interface SavedView {
  rev: number;
  view: View;
}

export interface TranscriptTraits {
  _view: DataView;
  _folds: Record<string, "open" | "closed" | "owned">;
  _strings: Record<string, string>;
}

export type KernelMessage = PatchMessage | FullMessage | ReplaceMessage | ContentMessage | OutputMessage | RevealMessage | SearchMessage;

export type ViewRequest = HelloRequest | ContentRequest | OutputRequest | SearchRequest | RevealRequest;
