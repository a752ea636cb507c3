// Generated from src/turnfold/settings_widget.py by `python -m turnfold.settings_widget`; do not edit: the tests
// fail when the two differ. Read by tsc --strict through the JS view's JSDoc imports.

export interface PanelOption {
  label: string;
  value: string;
}

export interface PanelRow {
  name: string;
  kind: "check" | "choice";
  label: string;
  value: boolean | string;
  options: PanelOption[];
  child: boolean;
  visible: boolean;
}

export interface PanelState {
  rows: PanelRow[];
  save: string;
  status: string;
}
