"""Find the charts that command-line paths name: named files, and the charts in folder walks.

Folder walks behave as in a git repository: `.git/` is never entered, the
`.gitignore` files of the folder walked, of its subfolders and of its parents up
to the repository's top level apply (deeper files win, `!` re-includes, as in
git), and so does the repository's `.git/info/exclude`. The patterns of
`exclude` (`[tool.statekit.lint]`, `--exclude`) are gitignore patterns relative
to the folder of the configuration (or the current folder). In a folder walk
only YAML files that are charts (the root mapping of the first document has a
`statechart` key; see `is_chart_file`) are linted; the other YAML files are
counted as skipped. A file named explicitly is always linted; a folder named
explicitly is walked even if ignored (the rules apply below it).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pathspec
import yaml

from statekit.compiler.source.files import describe_non_regular
from statekit.lint.config import Exclude

CHART_SUFFIXES = (".yaml", ".yml")

SNIFF_BYTES = 64 * 1024
"""How much of a YAML file a folder walk reads to decide whether it is a chart."""

NEVER_WALKED = frozenset({".git", ".hg", ".svn"})
"""Folders of version control systems: a walk never enters them, whatever the patterns say."""

DEFAULT_EXCLUDE = (".venv/", "venv/", "node_modules/", "__pycache__/", ".tox/", ".nox/")
"""Folders skipped even where no `.gitignore` names them; `exclude` adds to these."""

_ROOT_KEY = re.compile(r"""^(?:statechart|"statechart"|'statechart')[ \t]*:(?:[ \t\r]|$)""", re.M)
_DOCUMENT_END = re.compile(r"^(?:---|\.\.\.)(?:[ \t]|$)", re.M)
_BELOW_GROUP = "ps_d"
"""The group pathspec's expressions use for "or a path below" (`(?:(?P<ps_d>/)|$)`)."""
_BYTE_ORDER_MARKS = (
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\xfe\xff", "utf-16-be"),
    (b"\xff\xfe", "utf-16-le"),
)
_NUL_PATTERNS = (
    ((True, True, True, False), "utf-32-be"),
    ((False, True, True, True), "utf-32-le"),
    ((True, False, True, False), "utf-16-be"),
    ((False, True, False, True), "utf-16-le"),
)
_SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class UsageError(Exception):
    """A path that does not exist or cannot be linted (exit code 2)."""


@dataclass(frozen=True, slots=True)
class FileSelection:
    """What a set of command-line paths stands for.

    `files` are the charts to lint (named files and the charts found in named
    folders, in order, without duplicates); `skipped` counts the YAML files of
    folder walks that are not charts; `empty_folders` names the folders in
    which no chart was found (a warning, not an error).
    """

    files: tuple[Path, ...]
    skipped: int = 0
    empty_folders: tuple[str, ...] = ()


# -- what a path is -----------------------------------------------------------


def find_repository_root(start: Path) -> Path | None:
    """The top level of the git repository holding `start`: the nearest folder with `.git`.

    `.git` may be a folder or (in worktrees and submodules) a file; no git
    command runs.
    """
    start = start.absolute()
    for folder in [start, *start.parents]:
        if (folder / ".git").exists():
            return folder
    return None


def _git_dir(root: Path) -> Path | None:
    """The repository's common git folder (where `info/exclude` lives), or None."""
    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git
    try:
        first = dot_git.read_text(encoding="utf-8", errors="replace").splitlines()[0]
    except (OSError, IndexError):
        return None
    if not first.startswith("gitdir:"):
        return None
    git_dir = (root / first.removeprefix("gitdir:").strip()).resolve()
    try:  # a linked worktree: its `commondir` names the main repository's git folder
        common = (git_dir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return git_dir
    return (git_dir / common).resolve()


def is_chart_file(path: Path) -> bool:
    """Whether the root mapping of the file's first YAML document has a `statechart` key.

    Reads at most `SNIFF_BYTES` and stops at the key; where that prefix is not
    YAML (a syntax error, or a template), a `statechart:` line at the start of
    a line of the first document counts. A file in UTF-16 or UTF-32 is read as
    such (linting it then says that charts are UTF-8). Unreadable files count
    as charts, so that linting them says why.
    """
    try:
        with path.open("rb") as stream:
            head = stream.read(SNIFF_BYTES)
    except OSError:
        return True
    return is_chart_text(head.decode(_encoding(head), errors="replace"))


def is_chart_text(text: str) -> bool:
    """Whether chart text (an editor's buffer, say) is a chart, as `is_chart_file` decides.

    Only the first `SNIFF_BYTES` characters are read.
    """
    text = text[:SNIFF_BYTES].lstrip("\ufeff")
    try:
        return _root_has_statechart_key(text)
    except yaml.YAMLError:
        first_document = _DOCUMENT_END.split(
            text.split("\n", 1)[1] if text.startswith("---") else text
        )
        return bool(_ROOT_KEY.search(first_document[0]))


def _encoding(head: bytes) -> str:
    """UTF-8, or the UTF-16/32 its byte order mark or NUL pattern shows (as YAML 1.2 detects)."""
    for mark, codec in _BYTE_ORDER_MARKS:
        if head.startswith(mark):
            return codec
    first = head[:4].ljust(4, b"-")
    for pattern, codec in _NUL_PATTERNS:
        if all((byte == 0) == nul for byte, nul in zip(first, pattern, strict=True)):
            return codec
    return "utf-8"


def _root_has_statechart_key(text: str) -> bool:
    events = yaml.parse(text, Loader=_SAFE_LOADER)
    for event in events:  # StreamStart, DocumentStart, then the root node
        if isinstance(event, yaml.NodeEvent):
            if not isinstance(event, yaml.MappingStartEvent):
                return False
            break
    else:
        return False
    depth, expecting_key = 0, True
    for event in events:
        if depth == 0:
            if isinstance(event, yaml.MappingEndEvent):
                return False
            if (
                expecting_key
                and isinstance(event, yaml.ScalarEvent)
                and event.value == "statechart"
            ):
                return True
            if isinstance(event, yaml.CollectionStartEvent):
                depth = 1
            expecting_key = not expecting_key
        elif isinstance(event, yaml.CollectionStartEvent):
            depth += 1
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
    return False


# -- ignore rules -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Layer:
    """The patterns of one ignore file (or of `exclude`), relative to `base`, last first.

    Each is (whether it ignores, whether it names folders only, its expression).
    pathspec parses the gitignore syntax. Its expressions also match the paths
    below what a pattern names (`build/` matches `build/x.yaml`), as a matcher
    of file lists must; the walk does what git does instead: it asks about each
    folder before entering it, and a pattern decides only for the paths it names
    itself, so its expression must match up to the end of the path (except for
    `a/**`, whose expression matches exactly what lies below `a`).
    """

    base: Path
    patterns: tuple[tuple[bool, bool, re.Pattern[str]], ...]


def _layer(base: Path, lines: Iterable[str]) -> _Layer | None:
    spec = pathspec.GitIgnoreSpec.from_lines(list(lines))
    patterns = tuple(
        (bool(pattern.include), str(pattern.pattern).rstrip().endswith("/"), _whole(pattern.regex))
        for pattern in reversed(spec.patterns)
        if pattern.include is not None and pattern.regex is not None
    )
    return _Layer(base, patterns) if patterns else None


def _whole(expression: re.Pattern[str]) -> re.Pattern[str]:
    """The expression matching a path it names, not the paths below it."""
    if _BELOW_GROUP not in expression.groupindex:  # `a/**`, `*`: no "or below" branch
        return expression
    return re.compile(f"(?:{expression.pattern})\\Z", expression.flags)


def _read_layer(base: Path, file: Path) -> _Layer | None:
    try:
        text = file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return _layer(base, text.splitlines())


def _ignored(layers: Sequence[_Layer], path: Path, is_dir: bool) -> bool:
    """Git's answer for a path whose folders are not ignored: the last pattern of the
    last layer (deepest file) that names it decides; `name/` patterns name folders only."""
    for layer in reversed(layers):
        try:
            relative = path.relative_to(layer.base).as_posix()
        except ValueError:
            continue
        for ignores, folders_only, expression in layer.patterns:
            if folders_only and not is_dir:
                continue
            if expression.search(relative + "/" if folders_only else relative):
                return ignores
    return False


def _layers_above(folder: Path, root: Path | None) -> list[_Layer]:
    """The ignore files that apply to `folder` from outside it: the repository's
    `info/exclude`, then the `.gitignore` of every folder from the top level down to
    `folder`'s parent (the walk reads `folder`'s own)."""
    if root is None:
        return []
    layers: list[_Layer | None] = []
    git_dir = _git_dir(root)
    if git_dir is not None:
        layers.append(_read_layer(root, git_dir / "info" / "exclude"))
    try:
        between = folder.relative_to(root).parts
    except ValueError:
        between = ()
    current = root
    for part in between:
        layers.append(_read_layer(current, current / ".gitignore"))
        current = current / part
    return [layer for layer in layers if layer is not None]


# -- the walk -----------------------------------------------------------------


def _is_regular_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except OSError:
        return False


def _walk(folder: Path, layers: list[_Layer]) -> Iterator[Path]:
    """Every file below `folder` no layer ignores, in sorted depth-first order; symlinked
    folders are not entered. A stack, not recursion: any depth of folders is fine."""
    stack: list[tuple[Path, list[_Layer]]] = [(folder, layers)]
    while stack:
        current, in_force = stack.pop()
        own = _read_layer(current, current / ".gitignore")
        if own is not None:
            in_force = [*in_force, own]
        try:
            entries = sorted(os.scandir(current), key=lambda entry: entry.name)
        except OSError:
            continue
        folders: list[Path] = []
        for entry in entries:
            path = current / entry.name
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in NEVER_WALKED and not _ignored(in_force, path, is_dir=True):
                    folders.append(path)
            elif not _ignored(in_force, path, is_dir=False):
                yield path
        stack.extend((sub, in_force) for sub in reversed(folders))


def _walk_folder(folder: Path, exclude: Sequence[_Layer]) -> tuple[list[Path], int]:
    """The charts below `folder` and how many YAML files there are not charts."""
    absolute = folder.absolute()
    defaults = _layer(absolute, DEFAULT_EXCLUDE)
    layers = [
        *([defaults] if defaults is not None else []),
        *exclude,
        *_layers_above(absolute, find_repository_root(absolute)),
    ]
    charts: list[Path] = []
    skipped = 0
    for found in _walk(absolute, layers):
        if found.suffix.lower() not in CHART_SUFFIXES or not _is_regular_file(found):
            continue
        shown = folder / found.relative_to(absolute)
        if is_chart_file(found):
            charts.append(shown)
        else:
            skipped += 1
    return charts, skipped


def select_files(paths: Iterable[str | Path], exclude: Sequence[Exclude] = ()) -> FileSelection:
    """The charts that `paths` name: files as given, and the charts found in folders.

    Folder walks skip what `exclude` (gitignore patterns), `DEFAULT_EXCLUDE`
    and the repository's ignore files name; a file named explicitly is linted
    whatever the patterns say. Raises `UsageError` for a path that is neither
    a file nor a folder.
    """
    layers = [_layer(group.base, group.patterns) for group in exclude]
    patterns = [layer for layer in layers if layer is not None]
    files: list[Path] = []
    skipped = 0
    empty: list[str] = []
    for raw in paths:
        path = Path(raw)
        if _named_path_is_folder(raw):
            found, not_charts = _walk_folder(path, patterns)
            skipped += not_charts
            if not found:
                empty.append(str(raw))
            files.extend(found)
        else:
            files.append(path)
    return FileSelection(tuple(dict.fromkeys(files)), skipped, tuple(empty))


def _named_path_is_folder(raw: str | Path) -> bool:
    """What a path named on the command line is: True for a folder to walk, False for a
    file to lint; anything else is a `UsageError` saying what the path is."""
    path = Path(raw)
    if path.is_dir():
        return True
    if path.is_file():
        return False
    what = describe_non_regular(path) or "not a regular file"
    raise UsageError(f"{raw}: {what}")


def collect_files(paths: Iterable[str | Path]) -> list[Path]:
    """The chart files `paths` name (see `select_files`); a folder without charts is a
    `UsageError`."""
    selection = select_files(paths)
    if selection.empty_folders:
        raise UsageError(f"{selection.empty_folders[0]}: no chart files in this folder")
    return list(selection.files)
