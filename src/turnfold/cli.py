"""``turnfold``: read a transcript without starting Jupyter (spec W-6).

Two commands share one set of options::

    turnfold render session.jsonl            # writes session.html, a standalone page
    turnfold render session.jsonl -o -       # the page on stdout
    turnfold render ~/.claude/projects -o site/   # a site: an index and a page per run
    turnfold show session.jsonl --mode flat  # the outline in the terminal (colour with rich)
    turnfold session.jsonl                   # the same as: turnfold show session.jsonl
    turnfold render --compare a.eval b.eval  # two runs side by side (B-3): a-vs-b.html

Both load the file with :func:`turnfold.load`, build the view model with the chosen display
settings and draw it with the same renderers the notebook uses for its static outputs
(:mod:`turnfold.render.html`, :mod:`turnfold.render.text`). Exit status: 0 on success, 2 for
bad usage or a file that is missing, is not a transcript (the message on stderr names the file,
the first offending line, the closest formats if any, how many formats were tried (``-v``:
each) and how to name the format) or holds nothing to show, 1 when the output
cannot be written (a reader that left, ``| head``, too: silently, as Python's own recipe for
SIGPIPE ends), 130 when interrupted (Ctrl-C). ``FILE`` may be ``-``, standard input, or a named
pipe (``<(gzip -dc x.jsonl.gz)``), read once as standard input is.
"""

from __future__ import annotations

from turnfold.gcpause import collector_paused

# What a command imports is tens of thousands of functions, classes and dicts that live as long
# as the process: the cyclic collector would walk them some fifty times on the way, a few
# milliseconds of every command for nothing (issue 19).
with collector_paused():
    import argparse
    import codecs
    import contextlib
    import glob
    import io
    import os
    import re
    import select
    import shlex
    import stat
    import sys
    import unicodedata
    import warnings
    from collections.abc import Callable, Iterator, Sequence
    from pathlib import Path
    from typing import IO, TYPE_CHECKING, Any, BinaryIO, NoReturn, TextIO

    from turnfold import progress
    from turnfold.atomic import write_whole
    from turnfold.forking import Partner, can_fork, free_core
    from turnfold.formats import FORMATS, TranscriptFormatError, folder_format, load
    from turnfold.formats.errors import LISTED_IDS, TRIED_NAMED, tried_said
    from turnfold.formats.source import RECORD_LIMIT_ENV
    from turnfold.i18n import translate
    from turnfold.model import Transcript, printable
    from turnfold.render.content import MORE_CHARS
    from turnfold.render.page import write_page
    from turnfold.render.viewmodel import build_view_model, open_all
    from turnfold.settings import DISPLAY_MODES, SettingsSnapshot, snapshot_of

if TYPE_CHECKING:  # the view model's schema, for types only (issue 19: not imported by a page)
    from turnfold.formats.source import Source
    from turnfold.render.nodes import View

__all__ = ["build_parser", "expand_all", "main", "with_zone"]

#: Exit status for input that cannot be read as a transcript (as argparse uses for bad usage).
EXIT_BAD_INPUT = 2
EXIT_CANNOT_WRITE = 1
#: Exit status after Ctrl-C: 128 + SIGINT, as a shell reports a command the signal ended.
EXIT_INTERRUPTED = 130

#: ``FILE`` as ``-``: the transcript is read from standard input (``… | turnfold show -``).
STDIN = Path("-")
#: The languages of ``--locale``.
LOCALES = ("en", "zh")

_DESCRIPTION = """\
Render an AI-agent transcript (a coding agent's session: Claude Code, Codex
CLI, Gemini CLI, Qwen Code and more; an eval log; an agent framework's run;
OpenAI or Anthropic message lists; turnfold's own JSONL: --format lists them
all) the way the notebook widget folds it: one process fold per turn with the
answer outside it, activity groups, one-line tool summaries."""

# Raw text, as argparse does not wrap it: lines under 80 columns, for the narrowest terminals.
_EPILOG = """\
examples:
  turnfold session.jsonl                       the outline in the terminal: a
                                               FILE (or FILE#ID) in the place
                                               of a command is shown, as by
                                               turnfold show session.jsonl
  turnfold render session.jsonl                session.html, next to the file
  turnfold render session.jsonl -o page.html   the page where you say it goes
                                               ("-o -": stdout)
  turnfold show log.eval#7/1                   one run of a file of many, by
                                               its scan key
  turnfold render runs/ -o site/               a site of every run in a folder
                                               or eval log: site/index.html,
                                               one page per run
  turnfold show session.jsonl --mode flat      the outline in the terminal
  turnfold show session.jsonl --expand | less  everything open, as plain text
  turnfold render --compare a.eval b.eval      two runs side by side: the
                                               samples that changed, each
                                               opening its two transcripts
  claude -p … --output-format stream-json --verbose | turnfold show -
                                               a transcript from standard input

The page is self-contained (inline CSS, nothing loaded from the network):
folds are native <details> elements; its one small script, allowed by the
page's Content-Security-Policy and nothing else, opens the folds around a
link's #turn-N or #call-ID. ▸ marks a closed fold and ▾ an open one in the
terminal outline, drawn in colour unless NO_COLOR is set."""


#: What FILE may be besides one transcript, for the command that writes sites (B-2).
_SITE_FILE_HELP = (
    "; a folder, an eval log or a file of runs with -o SITE/ (a folder's default: FOLDER-site/):"
    " a site of every run in it"
)


def _add_common_options(
    parser: argparse.ArgumentParser, *, file_optional: bool = False, site: bool = False
) -> None:
    parser.add_argument(
        "file",
        type=Path,
        metavar="FILE",
        nargs="?" if file_optional else None,
        help="the transcript file to read ('-': standard input); FILE#ID is one run of a file "
        "of many, as a scan keys it (an eval log's FILE#sample/epoch, a dataset's FILE#3)"
        + (_SITE_FILE_HELP if site else ""),
    )
    parser.add_argument(
        "--mode",
        choices=DISPLAY_MODES,
        default=None,
        help="process display: flat (no groups), command-first (commands as their own rows) "
        "or fully-folded (the default: activity groups)",
    )
    parser.add_argument(
        "--no-thinking",
        action="store_true",
        help="hide the model's reasoning rows (stored reasoning is not changed)",
    )
    parser.add_argument(
        "--locale",
        choices=LOCALES,
        default=None,
        help="language of labels and summaries",
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        metavar="FORMAT",
        help=f"skip detection and read the file as one of: {', '.join(FORMATS)}",
    )
    parser.add_argument(
        "--expand",
        action="store_true",
        help="open every fold (turn processes, groups, thinking, summaries, tools) instead of "
        "the default fold states, in which a finished turn shows only its answer",
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        help="when FILE is not recognised, name every format tried (by default: how many)",
    )


def build_parser() -> _Parser:
    """The argument parser of the ``turnfold`` command."""
    parser = _Parser(
        prog="turnfold",
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    render = commands.add_parser(
        "render",
        help="write a standalone HTML page",
        description="Write the transcript as one self-contained HTML page.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_common_options(render, file_optional=True, site=True)
    render.add_argument(
        "--compare",
        nargs=2,
        type=Path,
        metavar=("A", "B"),
        default=None,
        help="instead of FILE, two runs side by side (B-3): two transcripts, or two folders or "
        "eval logs of many samples, whose samples that changed are listed, each with its two "
        "transcripts (default page: A-vs-B.html beside A)",
    )
    render.add_argument(
        "-o",
        "--output",
        metavar="PAGE",
        default=None,
        help='where to write the page, never over FILE; "-" for stdout (default: FILE with the '
        "suffix .html, FILE-ID.html for FILE#ID; required when FILE is -); a folder (SITE/: "
        "new, empty, or a site turnfold wrote) for a site of every run in FILE, a folder or an "
        "eval log (the default for a folder: FOLDER-site/)",
    )
    render.add_argument(
        "--full-output",
        action="store_true",
        help=f"embed every tool output whole; by default the hidden rest of a long output is "
        f"embedded up to {MORE_CHARS:,} characters and the page says how many lines it left "
        "out (the transcript file keeps them)",
    )
    show = commands.add_parser(
        "show",
        help="print the transcript to the terminal; the command of a FILE given without one "
        "(turnfold FILE)",
        description="Print the transcript as an outline: in colour on a terminal; plain text\n"
        "in a pipe, with --width or when NO_COLOR is set.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _add_common_options(show)
    show.add_argument(
        "--width",
        type=_columns,
        default=None,
        help="line width, as plain text (default: COLUMNS when set, else the terminal's "
        "width, or 100 in a pipe)",
    )
    # Each command's own usage line for the errors main() finds after parsing.
    render.set_defaults(usage=_usage_error(render))
    show.set_defaults(usage=_usage_error(show))
    parser.commands = tuple(commands.choices)
    return parser


def _with_command(parser: _Parser, argv: Sequence[str]) -> list[str]:
    """``argv`` with ``show`` in front when it starts with a file where a command goes:
    ``turnfold FILE`` is the obvious thing to type, and was a usage error. A command's name
    comes first (a file named ``show`` is ``turnfold show show``), and a mistyped command
    that names no file is still argparse's error, with the closest command.

    >>> _with_command(build_parser(), ["-", "--width", "80"])
    ['show', '-', '--width', '80']
    >>> _with_command(build_parser(), ["shwo", "-"])
    ['shwo', '-']
    """
    args = list(argv)
    if args and args[0] not in parser.commands and _names_a_file(args[0]):
        return ["show", *args]
    return args


def _names_a_file(text: str) -> bool:
    """Whether ``text`` is what ``FILE`` takes and names something there: ``-`` (standard
    input), a path that exists, or ``FILE#ID`` of one. An option (``-h``) is never a file."""
    if text == str(STDIN):
        return True
    if not text or text.startswith("-"):
        return False
    try:
        return _file_and_run(Path(text))[0].exists()
    except (OSError, ValueError):  # a name too long for the system is no file either
        return False


def _usage_error(parser: argparse.ArgumentParser) -> Callable[[str], NoReturn]:
    """``parser``'s usage error for a message of turnfold's own, whose names (``-o``, FILE)
    are shown as :func:`_shown` shows any (spec X-1)."""

    def usage(message: str) -> NoReturn:
        parser.error(_shown(message))

    return usage


class _Parser(argparse.ArgumentParser):
    """An argument parser that answers a mistyped choice, an option's value or a command, with
    the closest, as argparse's ``suggest_on_error`` words it (Python 3.14; this runs on 3.10).
    A command's parser is one too (argparse makes it of its parent's class)."""

    #: The names of the commands, for :func:`_with_command` (none for a command's parser).
    commands: tuple[str, ...] = ()

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        # The method Python 3.14 extends for its suggestion, where every choice is checked: a
        # command cannot be checked by a ``type``, which argparse applies to its arguments too.
        if action.choices is not None and value not in action.choices:
            raise argparse.ArgumentError(action, _invalid_choice(value, list(action.choices)))


def _invalid_choice(text: str, names: Sequence[str]) -> str:
    """Why ``text`` is not one of ``names``: the closest named, when one is close.

    >>> _invalid_choice("shwo", ["render", "show"])
    "invalid choice: 'shwo', maybe you meant 'show'? (choose from render, show)"
    """
    import difflib

    closest = difflib.get_close_matches(text, names, 1)
    meant = f", maybe you meant {closest[0]!r}?" if closest else ""
    return f"invalid choice: {text!r}{meant} (choose from {', '.join(names)})"


def _columns(text: str) -> int:
    """``--width``: a positive number of columns (argparse turns the error into its usage)."""
    try:
        width = int(text)
    except ValueError:
        width = 0
    if width < 1:
        raise argparse.ArgumentTypeError(f"a positive number of columns, not {text!r}")
    return width


def _settings(options: argparse.Namespace) -> SettingsSnapshot:
    """The display settings the options choose, as a snapshot: a page is built from one, and
    live settings (``DisplaySettings``) would import traitlets for nothing (issue 19)."""
    values: dict[str, Any] = {"show_thinking": not options.no_thinking}
    if options.mode:
        values["transcript_display_mode"] = options.mode
    if options.locale:
        values["locale"] = options.locale
    return snapshot_of(values)


def expand_all(view: View) -> View:
    """``view`` with every fold open, for ``--expand`` (changes ``view`` and returns it).

    Only the default ``open`` flags change; what each fold holds stays as the view model says.
    """
    open_all(view["nodes"])
    return view


#: The exact moment in the title of the session's start (``started 2026-11-02 10:00:00 UTC``).
_EXACT_START = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}")


def with_zone(view: View) -> View:
    """``view`` with the session's start naming its time zone, as ``date`` does
    (``2026-11-02 11:00 CET``): the start is the reader's local time (U-3), which the page
    tells on hover, its title holding the moment in UTC; a terminal has no hover. Changes
    ``view`` and returns it."""
    from datetime import datetime, timezone

    session = view.get("session")
    for part in session["parts"] if session else ():
        exact = _EXACT_START.search(part["title"] or "") if part["name"] == "started" else None
        if exact is not None:
            moment = datetime.strptime(exact.group(), "%Y-%m-%d %H:%M:%S")
            zone = moment.replace(tzinfo=timezone.utc).astimezone().strftime("%Z")
            part["text"] = f"{part['text']} {zone}"
    return view


def _file_and_run(file: Path) -> tuple[Path, str | None]:
    """``FILE#SAMPLE``, a corpus's key (``log.eval#id/epoch``, ``train.jsonl#3``), as the file
    and the run it names in it; a path that exists is the file itself, whatever it holds.
    A run's id may hold a ``#`` too (an eval sample ``s#3``: ``log.eval#s#3/1``), so the file
    is the longest part before a ``#`` that is one."""
    if file.exists():
        return file, None
    text = str(file)
    at = len(text)
    while (at := text.rfind("#", 0, at)) > 0:
        if at + 1 < len(text) and Path(text[:at]).is_file():
            return Path(text[:at]), text[at + 1 :]
    return file, None


def _picked(path: Path, sample: str | None) -> dict[str, Any]:
    """``load()``'s keywords for the run ``sample`` names: an eval log's is ``id/epoch``."""
    if sample is None:
        return {}
    from turnfold.formats.harnesses import inspect_log

    name, slash, epoch = sample.rpartition("/")
    if slash and epoch.isdigit() and inspect_log.detect_path(path) is not None:
        return {"sample": name, "epoch": int(epoch)}
    return {"sample": sample}


def _shown(*lines: str) -> str:
    """A message for stderr of ``lines``, each as :func:`~turnfold.model.printable` writes it:
    the file names and reasons it holds are anyone's (a downloaded archive's names), and a
    terminal must show their escape sequences, not obey them (spec X-1). A newline in them is
    shown too, so that each line stays the one the command wrote (a reader of a log reads a
    message per line); the command's own line breaks are the separate ``lines``."""
    return "\n".join(printable(line) for line in lines)


def _load(options: argparse.Namespace, stderr: TextIO) -> Transcript | None:
    """The transcript, or None after saying on stderr why it cannot be read (L-4)."""
    path: Path = options.file
    source: Path | BinaryIO = path
    where = path
    opened: BinaryIO | None = None
    if path == STDIN:
        source, where = sys.stdin.buffer, Path("<stdin>")  # as load() names it
    elif _is_pipe(path):
        try:
            source = opened = _open_pipe(path, stderr)
        except OSError as error:
            print(_shown(f"turnfold: {path}: cannot read: {error.strerror or error}"), file=stderr)
            return None
    elif not path.exists():
        print(_shown(f"turnfold: {_no_such(path, 'file')}"), file=stderr)
        return None
    elif path.is_dir() and folder_format(path, not_told := list[OSError]()) is None:
        if not_told:  # which kind of run it is could not be told: not "a folder" (L-4)
            why = not_told[0].strerror or not_told[0]
            print(_shown(f"turnfold: {path}: cannot read: {why}"), file=stderr)
            return None
        print(
            _shown(
                f"turnfold: {path}: is a folder, not a transcript file; to write a page for each "
                f"run in it: turnfold render {shlex.quote(str(path))} -o SITE/"
            ),
            file=stderr,
        )
        return None
    with opened if opened is not None else contextlib.nullcontext():
        return _loaded(options, source, where, stderr)


def _loaded(
    options: argparse.Namespace, source: Path | BinaryIO, where: Path, stderr: TextIO
) -> Transcript | None:
    """:func:`_load` once ``source`` is known to exist, a path or a stream named ``where``."""
    path: Path = options.file
    seeking = None if isinstance(source, Path) else _read_by_seeking(source)
    if seeking is not None:
        print(_shown(f"turnfold: {where}: {seeking}, which a pipe cannot give: save it to a "
                     f"file, then: turnfold {options.command} FILE"), file=stderr)  # fmt: skip
        return None
    try:
        transcript = load(source, format=options.format, **_picked(path, options.sample))
    except TranscriptFormatError as error:
        print(_shown(*_not_a_transcript(error, options, path)), file=stderr)
        return None
    except ValueError as error:  # many runs (an eval log of many samples…), not one
        keys = _epoch_keys(path, options.sample)
        if keys:
            command = options.command
            lacks = _lacks_epoch(path, options.sample, keys)
            said = f"{lacks}; to {command} one: turnfold {command} {keys[0]}"
        else:
            said = f"{error}{_many_runs_hint(str(error), options.command, path)}"
        print(_shown(f"turnfold: {said}"), file=stderr)
        return None
    except OSError as error:
        print(_shown(f"turnfold: {path}: cannot read: {error.strerror or error}"), file=stderr)
        return None
    if not transcript.entries:
        # Never an empty page or outline that looks like success (spec X-2, issue 11).
        reasons = "; ".join(str(w) for w in transcript.warnings[-3:]) or "no entries"
        print(_shown(f"turnfold: {where}: nothing to show ({reasons})"), file=stderr)
        return None
    _say_warnings(where, transcript, stderr)
    return transcript


def _is_pipe(path: Path) -> bool:
    """Whether ``path`` names a pipe (``mkfifo``, or the ``/dev/fd/63`` of ``<(cmd)``): read
    once, as standard input is, and never opened again (nothing writes into it twice)."""
    try:
        return stat.S_ISFIFO(path.stat().st_mode)
    except (OSError, ValueError):
        return False


#: How long a named pipe nothing writes into keeps the command waiting before it says so.
PIPE_PATIENCE_S = 1.0


def _open_pipe(path: Path, stderr: TextIO) -> BinaryIO:
    """The pipe at ``path`` opened to be read, named by ``path`` as a file is (``load()``
    names a stream by its ``name``). A named pipe nothing writes into yet keeps its reader
    waiting, for ever if nothing comes: after a second without a byte the command says that it
    waits, and Ctrl-C ends it."""
    # Opened without waiting for a writer, so that the wait is one the command can tell.
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        if not select.select([descriptor], [], [], PIPE_PATIENCE_S)[0]:
            print(_shown(f"turnfold: {path}: waiting for a program to write into this named "
                         "pipe (Ctrl-C stops)"), file=stderr, flush=True)  # fmt: skip
            select.select([descriptor], [], [])
        os.set_blocking(descriptor, True)
        raw = io.FileIO(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise
    raw.name = str(path)
    return io.BufferedReader(raw)


#: The first bytes of what is read by seeking to an index (a zip's, a Parquet file's at its
#: end): a pipe, read once from its start, cannot give it.
_READ_BY_SEEKING = (
    (b"PK\x03\x04", "a zip archive (an eval log?) is read from its index at its end"),
    (b"PK\x05\x06", "a zip archive (an eval log?) is read from its index at its end"),
    (b"PAR1", "a Parquet file is read from its index at its end"),
    (b"SQLite format 3\x00", "an SQLite database is read by seeking to its pages"),
)


def _read_by_seeking(stream: BinaryIO) -> str | None:
    """What the stream ``stream`` (a pipe, standard input) holds that no pipe can give, told
    by its first bytes, looked at without reading them; None for anything else, or a stream
    that can seek (standard input redirected from a file), which ``load()`` reads as a file."""
    peek = getattr(stream, "peek", None)
    if peek is None or stream.seekable():
        return None
    head = peek(16)
    return next((what for magic, what in _READ_BY_SEEKING if head.startswith(magic)), None)


def _no_such(path: Path, what: str) -> str:
    """Why ``path`` cannot be read: there is no such file. A shell passes a pattern that
    matches nothing on as it is (``runs/*.jsonl``), and a quoted one is passed whole: the
    message says which, as a scan warns of a pattern that matches nothing."""
    text = str(path)
    if glob.escape(text) == text:  # no pattern in it
        return f"{path}: no such {what}"
    count = len(glob.glob(text))
    if count == 0:
        return f"{path}: no such {what}, and no file or folder matches it as a pattern"
    return (f"{path}: no such {what}; as a pattern it matches {_counted(count, 'path')}, "
            "which this command does not expand: name one file, or a folder of runs")  # fmt: skip


def _not_a_transcript(error: TranscriptFormatError, options: argparse.Namespace,
                      path: Path) -> tuple[str, ...]:  # fmt: skip
    """The lines of the message of a file no format recognised (L-4): the file, the first
    offending line and why, the closest formats detection weighed (in the reason), the formats
    tried (their count, each with ``-v``), and what to do next: name the format, if it is one
    of them."""
    command = options.command
    where = f"{error.source}, line {error.line}" if error.line is not None else error.source
    # load()'s own next step for a tie ("pass format="): here the line after says it.
    reason = error.reason.removesuffix("; pass format=")
    many = _many_runs_hint(str(error), command, path)
    tried = error.tried
    # Every format detection tried (some sixty) named only with ``-v``, else counted.
    said = tried_said(tried, options.verbose)
    if len(tried) > TRIED_NAMED and not options.verbose:
        said += " (-v names them)"
    message = f"turnfold: {where}: not a transcript ({reason}); {said}{many}"
    if many or len(tried) <= TRIED_NAMED or _read_by_none(reason):
        return (message,)
    file = shlex.quote(str(path) if path != STDIN else "-")
    # The installed command's own help, not the repository's docs/formats.md: a wheel has none.
    return (message, f"turnfold: if it is one of them, name it: turnfold {command} "
            f"--format NAME {file} (turnfold {command} --help names them)")  # fmt: skip


def _read_by_none(reason: str) -> bool:
    """Whether a file no format recognised is one that no format named with ``--format`` reads
    either: nothing in it (``load()`` says "the source is empty"), nothing decoded from it
    ("nothing read: …", compressed data cut off), or a record over the size limit, which every
    format skips unread (its reason names the variable that raises the limit)."""
    return (
        reason == "the source is empty"
        or reason.startswith("nothing read: ")
        or f"({RECORD_LIMIT_ENV})" in reason
    )


def _epoch_keys(path: Path, sample: str | None) -> list[str]:
    """For ``log.eval#1``, a sample of an eval log run in several epochs named without its
    epoch: the keys it could mean (``log.eval#1/1``, ``log.eval#1/2``…), shell-quoted; none
    for any other ``FILE#ID``."""
    from turnfold.formats.harnesses import inspect_log

    if sample is None or "epoch" in _picked(path, sample) or path == STDIN:
        return []
    try:
        if inspect_log.detect_path(path) is None:
            return []
        listed = inspect_log.samples(path)
    except (OSError, ValueError):  # the load said what is wrong with the file
        return []
    keys = [shlex.quote(f"{path}#{i}/{epoch}") for i, epoch in listed if str(i) == sample]
    return keys if len(keys) > 1 else []


def _lacks_epoch(path: Path, sample: str, keys: list[str]) -> str:
    """The message of ``FILE#ID`` that names a sample of several epochs (:func:`_epoch_keys`)."""
    shown = ", ".join(keys[:LISTED_IDS]) + (", …" if len(keys) > LISTED_IDS else "")
    return (f"{path}#{sample}: the key lacks the epoch: sample {sample} ran in {len(keys)} "
            f"epochs, {shown}")  # fmt: skip


def _many_runs_hint(message: str, command: str, path: Path) -> str:
    """The command line's words after ``load()``'s for a file of many runs, which tell a Python
    user to scan it or to pick one with ``sample=``: here a site or ``FILE#ID`` does it."""
    if "turnfold.scan(" not in message and "pick one with" not in message:
        return ""
    if path == STDIN or _is_pipe(path):
        what = "standard input" if path == STDIN else str(path)
        one = "turnfold " + command + " 'FILE#ID' (as a scan keys it)"
        if command == "render":
            return (f"; {what} is read once: save it to a file to write a page for each run: "
                    f"turnfold render FILE -o SITE/, or for one: {one}")  # fmt: skip
        return f"; {what} is read once: save it to a file to show one of its runs: {one}"
    first = _first_run(path)
    if first is None:
        one = f"turnfold {command} {shlex.quote(f'{path}#ID')} (as a scan keys it)"
    else:  # a command that runs as it is written, and the shape of every other run's key
        key, what, shape = first
        one = (f"turnfold {command} {shlex.quote(key)} (its first {what}; {shape}, as a scan "
               "keys it)")  # fmt: skip
    if command == "render":
        site = f"turnfold render {shlex.quote(str(path))} -o SITE/"
        return f"; to write a page for each run: {site}, or for one: {one}"
    return f"; to show one: {one}"


def _first_run(path: Path) -> tuple[str, str, str] | None:
    """The key of the first run of the file of many at ``path``, as a scan keys it, what that
    run is, and how any other's key is written: an eval log's first sample (``#crash/1``,
    from its listing), a database's first session (``#<id>``, from its reader's
    ``sessions(path)``), a dataset's first run (``#0``, or its name: a Batch API line's
    ``custom_id``). None for standard input, or a file that cannot be listed (the load said
    what is wrong with it)."""
    import sqlite3

    from turnfold.corpus.discover import SESSION_DATABASES
    from turnfold.formats.agents import opencode
    from turnfold.formats.harnesses import inspect_log

    if path == STDIN:
        return None
    # A folder's database is read as the folder (OpenCode's data folder): its key is the file's.
    held = opencode.databases_in(path)
    where = held[0] if path.is_dir() and held else path
    try:
        if inspect_log.detect_path(where) is not None:
            listed = inspect_log.samples(where)
            if not listed:
                return None
            sample, epoch = listed[0]
            return f"{where}#{sample}/{epoch}", "sample", "FILE#SAMPLE/EPOCH names any"
        for database in SESSION_DATABASES:
            if database.detect_path(where) is not None:
                session = next((s for s, _ in database.sessions(where)), None)
                if session is None:
                    return None
                return f"{where}#{session}", "session", "FILE#ID names any"
        return None if where.is_dir() else _first_row(where)
    except (OSError, ValueError, sqlite3.Error):
        return None


#: How far a hint reads a file of runs, from its start, for the names that spell its first
#: run's key where its first records cannot (:func:`_first_row`): the file's bytes, its records.
HINT_READ_BYTES = 8 * 2**20
HINT_READ_RECORDS = 100_000


def _first_row(path: Path) -> tuple[str, str, str]:
    """The key of a dataset's first run (a table's row, a record of JSON lines) as a scan keys
    it: a table's ``#0``; of a file of runs, its first record that holds a run (a Batch API
    file's first line may have lost its ``custom_id``: its row is an error, no run), keyed by
    its name where it names one, else by its place (``#@n`` where a run is named ``n``:
    :func:`~turnfold.formats.wrappers.run_samples`). A place is spelt by every name of the
    file, a later record's too, which the first records hold only when they are all of it: the
    file is read on for them (:func:`_names_read_on`), up to a bound; past it, the hint says
    which later name would make its key another run's."""
    from collections.abc import Mapping

    from turnfold.formats.source import open_source
    from turnfold.formats.tables import TABLE_SUFFIXES
    from turnfold.formats.wrappers import CUSTOM_ID, row_runs_key, run_name, run_samples, runs_key

    if not path.name.endswith(TABLE_SUFFIXES):
        with progress.muted():  # a read bounded for a hint: no bar of the file's whole size
            source, stream = open_source(path)
        with contextlib.closing(stream) if stream is not None else contextlib.nullcontext():
            records = [value for _, value in source.head] if runs_key(source) else []
            names = {place: name for place, value in enumerate(records)
                     if (name := run_name(value)) is not None}  # fmt: skip
            runs = (place for place, value in enumerate(records)
                    if isinstance(value, Mapping) and row_runs_key(value) is not None)  # fmt: skip
            first = next(runs, None)
            if first is not None and first in names:
                return f"{path}#{names[first]}", "run", f"FILE#<{CUSTOM_ID}> names any"
            if first is not None:
                count, whole = _names_read_on(source, stream, names)
                sample = run_samples(count, names).get(first, str(first))
                what = "run"
                if not whole:  # a record not read that names its run so has the key (run_samples)
                    what += (
                        f", unless a record after the first {count:,} (all a hint reads) "
                        f"names its run {sample!r}"
                    )
                return f"{path}#{sample}", what, "FILE#N names the n-th, from 0"
    return f"{path}#0", "run", "FILE#N names the n-th, from 0"


def _names_read_on(
    source: Source, stream: IO[bytes] | None, names: dict[int, str]
) -> tuple[int, bool]:
    """The names the records of ``source`` give their runs, added to ``names`` (which holds its
    first records' already) by place, reading on up to :data:`HINT_READ_BYTES` of its file or
    :data:`HINT_READ_RECORDS` records: how many records were read, and whether they are all.
    A JSON document was read whole when opened: only its records are counted."""
    from turnfold.formats.source import warned_records
    from turnfold.formats.wrappers import run_name

    head = len(source.head)
    count = 0
    for count, (_, value, _) in enumerate(warned_records(source), start=1):
        if count <= head:
            continue
        if (name := run_name(value)) is not None:
            names[count - 1] = name
        if count >= HINT_READ_RECORDS or (
            stream is not None and not source.is_document and stream.tell() >= HINT_READ_BYTES
        ):
            return count, False
    return count, True


def _say_warnings(path: Path, transcript: Transcript, stderr: TextIO) -> None:
    """Count on stderr what the load could not read, which the page or outline shows as a
    notice: a terminal user sees it without opening the page (L-4). The count is the
    notice's, its sub-agents' own warnings included."""
    from turnfold.nesting import warning_total

    count = warning_total(transcript)
    if not count:
        return
    noun = "problem" if count == 1 else "problems"
    said = f"turnfold: {path}: {count} {noun} while loading (shown as a notice)"
    if transcript.warnings:  # else they are all a sub-agent's, each named in the notice
        said += f"; first: {transcript.warnings[0]}"
    print(_shown(said), file=stderr)


def _title(transcript: Transcript, path: Path, sample: str | None = None) -> str:
    title = transcript.metadata.get("title")
    if isinstance(title, str) and title.strip():
        return title
    name = "stdin" if path == STDIN else path.name
    return name if sample is None else f"{name}#{sample}"


def _output_path(source: Path, output: str | None, sample: str | None = None) -> Path | None:
    """Where ``render`` writes: ``-o``, else the source with ``.html`` (None means stdout); one
    run of a file of many is ``<file>-<sample>.html``, so two runs never write one page."""
    if output == "-":
        return None
    if output is not None:
        return Path(output)
    if sample is not None:
        return source.with_name(f"{source.stem}-{re.sub(r'[^A-Za-z0-9._-]+', '_', sample)}.html")
    target = source.with_suffix(".html")
    # Never overwrite the transcript itself, even when it is called something.html.
    return target if target != source else source.with_name(source.name + ".html")


#: Files from this size up are read by a partner too (Q-1): reading and drawing such a session
#: takes about half a second, which a second core halves, at the price of reading it twice.
PARTNER_MIN_BYTES = 16 * 2**20


def _partner(options: argparse.Namespace) -> Partner | None:
    """A child forked before a large session is read, to draw half of its page
    (:class:`turnfold.forking.Partner`), when a core is idle for it."""
    if options.file == STDIN:
        return None  # a stream is read once, by this process
    try:
        large = options.file.stat().st_size >= PARTNER_MIN_BYTES
    except OSError:
        return None  # _load says what is wrong with the file
    return Partner() if large and can_fork() and free_core() else None


def _render(
    options: argparse.Namespace,
    transcript: Transcript,
    stdout: TextIO,
    partner: Partner | None = None,
) -> int:
    target = _output_path(options.file, options.output, options.sample)

    def write(stream: BinaryIO) -> int:
        return write_page(
            stream,
            transcript,
            _settings(options),
            title=_title(transcript, options.file, options.sample),
            more_chars=None if options.full_output else MORE_CHARS,
            expand=options.expand,
            partner=partner,
        )

    if partner is not None and partner.is_child:
        return write(io.BytesIO())  # its share, sent to this process (the page goes nowhere)
    return _write(target, write, stdout)


def _write(target: Path | None, write: Callable[[BinaryIO], int], stdout: TextIO) -> int:
    """Run ``write`` on ``target`` (None: stdout), saying on stderr where the page went.

    The page is written beside ``target`` and moved over it once whole: a page that could not
    be finished (a full disk, Ctrl-C) leaves the one that was there as it was, never half a page.
    A link is followed, so the page replaces the file it names and the link stays. A device or
    a pipe (``-o /dev/null``, ``-o /dev/stdout``, a named pipe) is written into: a page moved
    over it would put a file where it was.
    """
    if target is None:
        try:
            stdout.flush()
            write(stdout.buffer)
            stdout.buffer.flush()
        except BrokenPipeError:
            raise  # the reader left (``| head``): main() ends quietly
        except OSError as error:
            return _stdout_failed(error)
        return 0
    # The file the page replaces; None for a device or a pipe.
    real = None if _written_into(target) else Path(os.path.realpath(target))
    try:
        if real is not None:  # beside it, named by this process: two renders never share one
            size = write_whole(real, write, real.with_name(f".{real.name}.{os.getpid()}.part"))
        else:
            # Appended to, as the shell's ``>>``: opening a name of /dev anew may truncate it.
            with target.open("ab") as stream:
                size = write(stream)
    except BrokenPipeError:
        raise  # a pipe's reader left (``-o /dev/stdout | head``), as for ``-o -``
    except OSError as error:
        reason = error.strerror or str(error)
        if not target.parent.is_dir():
            reason = f"there is no folder {target.parent}"
        print(_shown(f"turnfold: cannot write {target}: {reason}"), file=sys.stderr)
        return EXIT_CANNOT_WRITE
    print(_shown(f"turnfold: wrote {target} ({size // 1024 or 1} KB)"), file=sys.stderr)
    return 0


def _written_into(path: Path) -> bool:
    """Whether the page goes into ``path`` as it is rather than moved over it: a device or a
    pipe, or a name in /dev for what the shell opened (``/dev/stdout`` after ``>> log``)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    if _opened_by_the_shell(path):
        return True
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _stdout_failed(error: OSError) -> int:
    """Say that standard output took not all of it (a full disk under ``> file``)."""
    reason = error.strerror or str(error)
    print(_shown(f"turnfold: cannot write to standard output: {reason}"), file=sys.stderr)
    return EXIT_CANNOT_WRITE


def _render_compare(options: argparse.Namespace, stdout: TextIO) -> int:
    """``render --compare A B``: the page of two runs side by side (B-3)."""
    from turnfold.comparison import open_run
    from turnfold.render.compare_page import render_compare_page

    first, second = options.compare
    runs = []
    names: list[str] = []
    stems: list[str] = []
    for given in (first, second):
        # FILE#ID is one run of a file of many (two samples of one eval log), as for FILE.
        path, sample = _file_and_run(given)
        if not path.exists():
            print(_shown(f"turnfold: {_no_such(path, 'file or folder')}"), file=sys.stderr)
            return EXIT_BAD_INPUT
        try:
            run = open_run(path) if sample is None else load(path, **_picked(path, sample))
        except TranscriptFormatError as error:
            print(_shown(*_not_a_transcript(error, options, path)), file=sys.stderr)
            return EXIT_BAD_INPUT
        except ValueError as error:
            keys = _epoch_keys(path, sample)
            said = _lacks_epoch(path, sample, keys) if keys and sample else str(error)
            print(_shown(f"turnfold: {said}"), file=sys.stderr)
            return EXIT_BAD_INPUT
        if isinstance(run, Transcript):
            _say_warnings(path, run, sys.stderr)
        runs.append(run)
        names.append(path.name if sample is None else f"{path.name}#{sample}")
        page_of_run = _output_path(path, None, sample)  # where its own page would go
        assert page_of_run is not None
        stems.append(page_of_run.stem)
    single = [isinstance(run, Transcript) for run in runs]
    if single[0] != single[1]:
        one, many = (first, second) if single[0] else (second, first)
        print(
            _shown(
                f"turnfold: cannot compare {one} (one transcript) with {many} (many runs): compare "
                "two transcripts or two corpora (folders, or eval logs of many samples)"
            ),
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    if names[0] == names[1]:  # two files of one name (two runs' stdout-0.jsonl)
        names = _told_apart(first, second) or [f"{names[0]} (A)", f"{names[0]} (B)"]
    title = translate("compare.title", _settings(options).locale, a=names[0], b=names[1])
    try:
        page = render_compare_page(runs[0], runs[1], _settings(options), names=names, title=title)
    except ValueError as error:  # two corpora whose samples cannot be joined
        print(_shown(f"turnfold: {error}"), file=sys.stderr)
        return EXIT_BAD_INPUT
    encoded = page.encode("utf-8")
    target: Path | None = _file_and_run(first)[0].with_name(f"{stems[0]}-vs-{stems[1]}.html")
    if options.output is not None:
        target = None if options.output == "-" else Path(options.output)
    return _write(target, lambda stream: stream.write(encoded), stdout)


def _told_apart(first: Path, second: Path) -> list[str] | None:
    """Two paths of one file name by the fewest last parts that differ (``work/x.jsonl`` and
    ``v1.1/work/x.jsonl`` as ``opencode/work/x.jsonl`` and ``v1.1/work/x.jsonl``); None for
    one path twice."""
    a, b = first.parts, second.parts
    for count in range(1, max(len(a), len(b)) + 1):
        if a[-count:] != b[-count:]:
            return [str(Path(*a[-count:])), str(Path(*b[-count:]))]
    return None


def _site_folder(options: argparse.Namespace) -> Path | None:
    """Where ``render`` writes a site (B-2): a folder named by ``-o`` (ending in ``/`` or
    already one), or ``FOLDER-site`` for a folder of runs; None for a single page. A folder of
    runs is never one page: ``-o`` names its site's folder, whatever its name ends with."""
    if options.command != "render":
        return None
    output: str | None = options.output
    source: Path = options.file
    if output == "-" or source == STDIN:
        return None
    if source.is_dir():
        return Path(output) if output is not None else source.with_name(source.name + "-site")
    if output is not None and (output.endswith(("/", os.sep)) or Path(output).is_dir()):
        return Path(output)
    return None


def _render_site(options: argparse.Namespace, folder: Path) -> int:
    from turnfold.render.site import build_site

    if not options.file.exists():
        print(_shown(f"turnfold: {_no_such(options.file, 'file or folder')}"), file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        report = build_site(options.file, folder, _settings(options), progress=sys.stderr.isatty())
    except OSError as error:
        print(
            _shown(f"turnfold: cannot write {folder}: {error.strerror or error}"), file=sys.stderr
        )
        return EXIT_CANNOT_WRITE
    print(
        _shown(
            f"turnfold: wrote {report.index} ({_counted(report.rows, 'run')}; "
            f"{_counted(report.written, 'page')} written, {report.kept} unchanged; "
            f"{_counted(report.skipped, 'file')} skipped)"
        ),
        file=sys.stderr,
    )
    return 0


def _counted(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _no_colour() -> bool:
    """Whether the user asked for no colour: ``NO_COLOR`` set and not empty (no-color.org),
    or a terminal that draws none (``TERM=dumb``)."""
    return bool(os.environ.get("NO_COLOR")) or os.environ.get("TERM") == "dumb"


#: The outline's own glyphs as ASCII, for a stream whose encoding lacks them (``LC_ALL=C``
#: without Python's UTF-8 mode): each one cell wide as the glyph is, but the ellipsis.
_ASCII_GLYPHS = {
    "▸": ">", "▾": "v", "·": "|", "…": "...", "≈": "~", "●": "*", "•": "*", "✔": "+",
    "✖": "x", "■": "#", "ℹ": "i", "⚠": "!",
    # U-4's timeline: its eight bar heights as a ramp of ASCII.
    **dict(zip("▁▂▃▄▅▆▇█", "_.:-=+*#", strict=True)),
}  # fmt: skip
#: The error handler that draws them (:func:`_ascii_glyph`).
GLYPH_ERRORS = "turnfold.glyphs"


def _ascii_glyph(error: UnicodeError) -> tuple[str, int]:
    """An encoding's error handler: a glyph of the outline (or a line of a box, U+2500–U+257F)
    its encoding lacks as ASCII; any other character of the transcript escaped as Python's own
    tools escape what a stream cannot encode (``\\u2715``: ``sys.stderr``, pydoc), readable
    where ``?`` would lose it."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    shown = []
    for character in error.object[error.start : error.end]:
        ascii_form = _ASCII_GLYPHS.get(character)
        if ascii_form is None and "\u2500" <= character <= "\u257f":
            name = unicodedata.name(character, "")
            lines = ("HORIZONTAL" in name, "VERTICAL" in name)
            ascii_form = {(True, False): "-", (False, True): "|"}.get(lines, "+")
        shown.append(ascii_form or character.encode("ascii", "backslashreplace").decode())
    return "".join(shown), error.end


def _show(options: argparse.Namespace, view: View, stdout: TextIO) -> int:
    # Imported here: ``render`` never draws text, and the text renderer brings html.parser.
    from turnfold.render.text import render_terminal, render_text

    narrower = 0
    if isinstance(stdout, io.TextIOWrapper) and stdout.encoding:
        codecs.register_error(GLYPH_ERRORS, _ascii_glyph)
        stdout.reconfigure(errors=GLYPH_ERRORS)
        if not _encodes(stdout.encoding, "…"):
            narrower = 2  # a line cut at the width ends in "...", two cells more than "…"
    try:
        if stdout.isatty() and options.width is None and not _no_colour():
            from rich.console import Console

            console = Console(file=stdout, highlight=False, markup=False, emoji=False)
            console.width = max(console.width - narrower, 1)
            render_terminal(view, console)
        else:
            # Plain text, with no escape code at all: rich keeps bold and dim under NO_COLOR.
            width = (options.width or _text_width(stdout)) - narrower
            stdout.write(render_text(view, width=width) + "\n")
        stdout.flush()  # here, where a failed write is said: the flush at exit ignores it
    except BrokenPipeError:
        raise  # the reader left (``| head``): main() ends quietly
    except OSError as error:
        return _stdout_failed(error)
    return 0


def _encodes(encoding: str, text: str) -> bool:
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def _text_width(stdout: TextIO) -> int:
    """The width of plain text: COLUMNS when the user sets it (for a pipe too, as ``shutil``
    reads it), else the terminal's, else 100 (a pipe, a file)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    with contextlib.suppress(OSError, ValueError):  # no terminal behind the stream
        return os.get_terminal_size(stdout.fileno()).columns
    return 100


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (``python -m turnfold`` calls this)."""
    with _stderr_nowhere_when_closed():
        return _main_with_stderr(argv)


@contextlib.contextmanager
def _stderr_nowhere_when_closed() -> Iterator[None]:
    """``2>&-``: the shell closed standard error, and Python holds no stream for it at all
    (``sys.stderr`` is None). A message printed to None goes to stdout (``print(file=None)``),
    into the page of ``-o -``: here every message, a warning's or a progress bar's too, goes
    nowhere, as the user chose; the exit status still tells a failure. The stream opened for
    it takes the lowest free descriptor, 2, which a file the command opens would get else."""
    closed = sys.stderr
    if closed is not None:
        yield
        return
    with open(os.devnull, "w", encoding="utf-8") as nowhere:
        sys.stderr = nowhere
        try:
            yield
        finally:
            sys.stderr = closed


def _main_with_stderr(argv: Sequence[str] | None) -> int:
    """:func:`main` once standard error is a stream."""
    parser = build_parser()
    args = _with_command(parser, sys.argv[1:] if argv is None else argv)
    options, unknown = parser.parse_known_args(args)
    if unknown:  # said by the command's parser, whose usage names the options it takes
        options.usage(f"unrecognized arguments: {' '.join(unknown)}")
    # A progress bar is for a person watching a terminal; in a log it is a line of carriage
    # returns for each refresh.
    quiet = progress.muted() if not sys.stderr.isatty() else contextlib.nullcontext()
    try:
        with quiet, _warnings_said():
            return _command(options, options.usage)
    except KeyboardInterrupt:  # Ctrl-C: a person's choice, not a failure to explain
        print(_shown("turnfold: interrupted"), file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # ``turnfold show … | head``: the reader left. Python's recipe (the signal module's
        # "Note on SIGPIPE"): silently, with the status Python itself ends with on EPIPE, 1, so
        # that ``set -o pipefail`` knows the output was not all read; what stdout still holds
        # goes nowhere rather than raise again at the flush on the way out.
        with contextlib.suppress(AttributeError, OSError, ValueError):  # no descriptor
            stdout = sys.stdout.fileno()
            nowhere = os.open(os.devnull, os.O_WRONLY)
            os.dup2(nowhere, stdout)
            os.close(nowhere)
        return EXIT_CANNOT_WRITE


@contextlib.contextmanager
def _warnings_said() -> Iterator[None]:
    """Warnings said as the command says everything else (``turnfold: warning: …``): Python's
    own form names the line that called turnfold, which for the command is its entry point
    (``__main__.py:8``), nothing of the reader's. Warning filters (``-W``) still apply."""
    with warnings.catch_warnings():
        warnings.showwarning = _say_warning
        yield


def _say_warning(
    message: Warning | str, category: type[Warning], filename: str, lineno: int,
    file: TextIO | None = None, line: str | None = None,
) -> None:  # fmt: skip
    print(_shown(f"turnfold: warning: {message}"), file=file or sys.stderr)


#: Options that shape one transcript's page or outline, and what no site or comparison reads.
_ONE_PAGE_OPTIONS = (
    ("expand", "--expand"),
    ("full_output", "--full-output"),
    ("format", "--format"),
)


def _command(options: argparse.Namespace, usage: Callable[[str], NoReturn]) -> int:
    """:func:`main` once the arguments parse: ``usage`` ends with a usage error (status 2)."""
    if sys.stdout is None and (options.command == "show" or options.output == "-"):
        # ``>&-``: the shell closed it, and Python holds no stream for it at all.
        what = "outline" if options.command == "show" else "page"
        print(_shown(f"turnfold: standard output is closed: nothing to write the {what} to"),
              file=sys.stderr)  # fmt: skip
        return EXIT_CANNOT_WRITE
    if options.command == "render" and options.compare:
        if options.file is not None:
            usage("give FILE or --compare A B, not both")
        _refuse_one_page_options(options, usage, "--compare")
        _refuse_overwriting(options, usage, *options.compare)
        output = options.output
        if output not in (None, "-") and (output.endswith(("/", os.sep)) or os.path.isdir(output)):
            # Path("new/") is "new": the page would be a file of that name, or fail as a folder.
            usage(f"-o {output} is a folder; --compare writes one page: -o PAGE.html")
        return _render_compare(options, sys.stdout)
    if options.file is None:
        usage("the following arguments are required: FILE")
    options.file, options.sample = _file_and_run(options.file)
    site = _site_folder(options)
    if site is not None:
        if options.sample is not None:
            whole = shlex.quote(str(options.file))
            usage(f"FILE#ID is one run, whose page is -o PAGE.html; a site of every run in the "
                  f"file: turnfold render {whole} -o SITE/")  # fmt: skip
        _refuse_one_page_options(options, usage, "a site")
        _refuse_foreign_folder(options, usage, site)
        return _render_site(options, site)
    if options.command == "render":
        if options.file == STDIN and options.output is None:
            usage("a transcript read from standard input has no file to write its page "
                  "beside: say where with -o PAGE.html, or -o - for stdout")  # fmt: skip
        if options.output is None and _opened_by_the_shell(options.file):
            usage(f"{options.file} names what the shell opened (as <(cmd) does), not a file in "
                  "a folder to write its page beside: say where with -o PAGE.html, or -o - "
                  "for stdout")  # fmt: skip
        _refuse_overwriting(options, usage, options.file)
    partner = _partner(options) if options.command == "render" else None
    try:  # the partner reads the file too and draws its share of the page, silently
        return _main(options, partner)
    finally:
        if partner is not None:
            partner.leave()  # the partner ends here; this process stops one not asked for


def _opened_by_the_shell(path: Path) -> bool:
    """Whether ``path`` names a stream the shell opened rather than a file in a folder: a name
    in /dev (``/dev/stdin``) or in a process's descriptors (``/dev/fd/63`` of ``<(cmd)``,
    which is ``/proc/self/fd/63``). Its page has no folder to go beside it: a name made there
    fails, or as root is a new file in /dev. A folder under /dev that holds files
    (``/dev/shm``) is a folder like any other."""
    parts = Path(os.path.realpath(path.parent)).parts
    return parts == ("/", "dev") or parts[:2] == ("/", "proc")


def _refuse_one_page_options(
    options: argparse.Namespace, usage: Callable[[str], NoReturn], what: str
) -> None:
    """A usage error for an option that would be ignored: a site and a comparison are drawn
    with the display settings only, each of their runs' format detected."""
    for name, flag in _ONE_PAGE_OPTIONS:
        if getattr(options, name, None):
            usage(f"{flag} is for one transcript's page; {what} does not take it")


def _refuse_foreign_folder(
    options: argparse.Namespace, usage: Callable[[str], NoReturn], folder: Path
) -> None:
    """A usage error for a site's folder that holds files of someone else's: a site writes
    its ``index.html`` and ``runs/`` there, over what has those names, and ``-o`` naming a
    folder that exists is as likely a page meant to go into it. A site goes into a folder that
    is new, empty, or one turnfold wrote (its manifest, or, of a first build cut short, only
    a site's own names)."""
    from turnfold.render.site import INDEX, MANIFEST, RUNS

    try:
        names = {entry.name for entry in folder.iterdir()}
    except OSError:  # not there yet, or not a folder: the build says what it cannot write
        return
    own = {INDEX, RUNS, MANIFEST}
    own |= {f".{name}.part" for name in own}  # what a build stopped half way left
    if not names or MANIFEST in names or (RUNS in names and names <= own):
        return
    source: Path = options.file
    name = source.name if source.is_dir() else source.stem
    site = shlex.quote(f"{folder / (name + '-site')}{os.sep}")
    page = shlex.quote(str(folder / f"{name}.html"))
    page = "" if source.is_dir() else f", or for one page: -o {page}"
    usage(f"the folder {folder} holds other files and no site turnfold wrote; a site "
          "(index.html, runs/) goes into a new or empty folder or over one it wrote before: "
          f"say where, as -o {site}{page}")  # fmt: skip


def _refuse_overwriting(
    options: argparse.Namespace, usage: Callable[[str], NoReturn], *sources: Path
) -> None:
    """A usage error for ``-o`` naming a file the command reads: the page would replace it."""
    if options.output in (None, "-"):
        return
    for source in sources:
        with contextlib.suppress(OSError):  # a file that does not exist is said so later
            if os.path.samefile(options.output, source):
                usage(f"-o {options.output} is the transcript itself; the page would replace "
                      "it: choose another PAGE")  # fmt: skip


def _main(options: argparse.Namespace, partner: Partner | None) -> int:
    """:func:`main` for one file, read and shown or rendered."""
    transcript = _load(options, sys.stderr)
    if transcript is None:
        return EXIT_BAD_INPUT
    stdout = sys.stdout
    if options.command == "render":
        return _render(options, transcript, stdout, partner)
    view = build_view_model(transcript, _settings(options))
    if options.expand:
        expand_all(view)
    return _show(options, with_zone(view), stdout)


def run() -> NoReturn:
    """The ``turnfold`` command: :func:`main`, then an exit that skips freeing what it built.

    A page of a large session leaves millions of objects, which the interpreter would free one
    by one before the process ends: a tenth of a second for a 50 MB session, a sixth of the
    command's time (Q-1). Everything was written through files that are closed by now; the two
    standard streams are flushed before the process ends. An exception still ends it as usual.
    """
    status = main()
    for stream in (sys.stdout, sys.stderr):
        if stream is None:  # closed by the shell (``>&-``): Python made no stream for it
            continue
        # A reader that left (``| head``) or a stream closed above has nothing more to take.
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(status)
