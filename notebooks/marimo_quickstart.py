"""turnfold in marimo (spec N-2): a transcript, its settings panel and a browser of runs through
``mo.ui.anywidget``.

marimo edit notebooks/marimo_quickstart.py     # or: marimo run notebooks/marimo_quickstart.py
"""

import marimo

__generated_with = "0.25.2"
app = marimo.App(width="medium")


@app.cell
def _():
    import marimo as mo

    import turnfold
    import turnfold.samples

    return mo, turnfold


@app.cell
def _(mo):
    mo.md(
        """
        # turnfold in marimo

        turnfold folds an agent's transcript the way agent UIs do: each turn is one process
        disclosure followed by its answer, and runs of reads and searches collapse into one
        line. Wrap the widget in `mo.ui.anywidget` to show it; click a turn's header to open
        its process, and a group's header to open its rows.
        """
    )
    return


@app.cell
def _(mo, turnfold):
    transcript = turnfold.TranscriptWidget(turnfold.samples.demo_session())
    mo.ui.anywidget(transcript)
    return


@app.cell
def _(mo):
    mo.md(
        """
        A settings panel changes how every view linked to it folds: *Show thinking*, the
        *Process display* mode (*Flat*, *Command-first*, *Fully folded*) and the choices
        indented under them. Make the panel in the cell that makes its views: a cell that
        reads a view's `mo.ui.anywidget` runs again whenever the reader opens or closes a
        fold in it (its value), and would make a new panel each time.
        """
    )
    return


@app.cell
def _(mo, turnfold):
    linked = turnfold.TranscriptWidget(turnfold.samples.demo_session())
    panel = turnfold.SettingsWidget(linked)
    mo.vstack([mo.ui.anywidget(panel), mo.ui.anywidget(linked)])
    return


@app.cell
def _(mo, turnfold):
    session = turnfold.TranscriptWidget(turnfold.samples.claude_code_session())
    mo.vstack(
        [
            mo.md("A real Claude Code session, with sub-agents working inline:"),
            mo.ui.anywidget(session),
        ]
    )
    return


@app.cell
def _(mo, turnfold):
    runs = turnfold.scan([turnfold.samples.demo_session(), turnfold.samples.claude_code_session()])
    mo.vstack(
        [
            mo.md(
                "Many runs: `turnfold.scan` makes a corpus of them, and the session browser "
                "shows it as a table to sort, filter and search; open a row to read its run."
            ),
            mo.ui.anywidget(turnfold.SessionBrowser(runs)),
        ]
    )
    return


if __name__ == "__main__":
    app.run()
