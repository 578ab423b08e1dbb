"""Output files appear whole or not at all: a regular file (or a new path) is written to a temporary file beside
it and renamed over it; a device, FIFO or ``-`` (standard output) is written through, never replaced; a symlink is
followed (the temporary file and the rename go to the directory of the file it names). Every writer in the project
goes through :func:`atomic_open` (a stream) or :func:`atomic_path` (a name for a C kernel or another program).

Inputs of line-parallel text are read by one line rule, :func:`open_text` (see there; CONTRIBUTING.md "Text
lines"): a line ends at ``\n``, a control character inside a line is refused as ``path:line``, a damaged .gz/.xz is
one line naming the file.

Every .gz is read and written through one deflate backend (:data:`GZIP_BACKEND`): ISA-L's (the ``isal`` package, a
dependency) where it imports, else zlib's. Levels are zlib's numbers everywhere in the project; ISA-L has 0-3, so
1-2 map to its 1 (about zlib 1's size at 3-4x its speed) and 3-9 to its 3 (between zlib 1 and 6 in size, ~9x zlib
6's speed); inflating is 4-5x ``gzip -dc``'s speed (measured on extract.o.gz, 236 MB of text).

Words of a line are split by one word rule, :func:`words`: runs of ASCII space and TAB separate words (as the
decoder, the C readers and Moses split); every other character, U+00A0, U+2028, U+0085, U+3000 included, is part
of a word (never ``str.split()``, which also splits at those)."""
from __future__ import annotations

import contextlib
import gzip
import io
import os
import re
import stat
import sys
import tempfile
import threading
import zlib
from pathlib import Path
from typing import IO, Iterator, overload


try:
    import isal as _isal
    from isal import igzip as _gzip
    from isal import isal_zlib as _zlib
    GZIP_BACKEND = f"isal {_isal.__version__}"
except ImportError:  # pragma: no cover - isal is a dependency; a plain-zlib install still works, slower
    _gzip, _zlib = gzip, zlib  # type: ignore[assignment]
    GZIP_BACKEND = f"zlib {zlib.ZLIB_VERSION}"


#: zlib's level the trainer's tables (phrase and reordering) are written at: ISA-L's level 1 (0.85 s and 84 MB for the
#: shipped corpus' phrase table, where its level 3 takes 2.1 s for 78 MB and zlib's 6, gzip's default, 10.5 s for 67 MB)
TABLE_GZ_LEVEL = 1


def gzip_level(level: int) -> int:
    """zlib's level 1-9 as the backend's (ISA-L: 0-3)."""
    if not 0 <= level <= 9:
        raise ValueError(f"gzip level {level}: must be 0-9")
    if _zlib is zlib:
        return level
    return 0 if level == 0 else (1 if level <= 2 else 3)


def gzip_compressobj(level: int = 1):
    """A compressor of one gzip member (wbits 31) at zlib's ``level``."""
    return _zlib.compressobj(gzip_level(level), _zlib.DEFLATED, 31)


class OutputPathError(ValueError):
    """An output path that cannot be written (a directory, below a file, or named twice); one line."""


def _umask() -> int:
    """The process umask, read without changing it where Linux allows (os.umask alone must set it, which
    races with files other threads create meanwhile)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def publish(tmp: str | os.PathLike[str], target: str | os.PathLike[str], mode: int | None = None) -> None:
    """Rename a finished temporary file over ``target`` with the permissions of the file it replaces, or those
    a plain ``open`` would have given a new one (mkstemp creates files 0600)."""
    os.chmod(tmp, mode if mode is not None else 0o666 & ~_umask())
    os.replace(tmp, target)


# outputs being written by this process right now (resolved paths): the same file named twice is refused
_OPEN_OUTPUTS: set[str] = set()


def _key(path: str | os.PathLike[str]) -> str:
    p = os.fspath(path)
    return "-" if p == "-" else os.path.realpath(p)


def check_distinct_outputs(outputs: dict[str, str | os.PathLike[str] | None]) -> None:
    """Refuse one file given to two outputs of one command (``-o F --n-best F``): {option: path or None}."""
    seen: dict[str, str] = {}
    for opt, path in outputs.items():
        if path is None or os.fspath(path) == "":
            continue
        k = _key(path)
        if k in seen:
            raise OutputPathError(f"{opt} {os.fspath(path)}: the same file as {seen[k]}; give each output its own path")
        seen[k] = f"{opt} {os.fspath(path)}"


def check_outputs_not_inputs(outputs: dict[str, str | os.PathLike[str] | None],
                             inputs: dict[str, object]) -> None:
    """Refuse an output that names one of the command's inputs (``--arpa T --text T``): the input would be lost."""
    named = {}
    for opt, given in inputs.items():  # a value may be a list (nargs="+")
        for p in given if isinstance(given, (list, tuple)) else [given]:
            if p is not None and os.fspath(p) not in ("", "-"):
                named[_key(p)] = f"{opt} {os.fspath(p)}"
    for opt, path in outputs.items():
        if path is not None and os.fspath(path) not in ("", "-") and _key(path) in named:
            raise OutputPathError(f"{opt} {os.fspath(path)}: the same file as the input {named[_key(path)]}; "
                                  "write elsewhere")


def resolve_output(path: str | os.PathLike[str]) -> tuple[str, int | None, bool]:
    """Where an output goes: (path to write or rename over, mode to keep, replace?). ``replace`` is False for a
    device, FIFO or socket (written through, under the name given); a symlink resolves to the file it names.
    Raises :class:`OutputPathError` (one line) for a directory or a path below a non-directory."""
    p = os.fspath(path)
    try:
        st = os.stat(p)  # follows symlinks
    except FileNotFoundError:
        st = None
    except NotADirectoryError:
        raise OutputPathError(f"{p}: cannot write there, a parent is not a directory") from None
    except OSError as exc:
        raise OutputPathError(f"{p}: {exc.strerror}") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise OutputPathError(f"{p}: is a directory, expected a file name")
    if st is not None and not stat.S_ISREG(st.st_mode):
        return p, None, False
    real = os.path.realpath(p)  # a (dangling) symlink: its target, created in the target's directory
    parent = os.path.dirname(real) or "."
    try:
        os.makedirs(parent, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise OutputPathError(f"{p}: cannot write there, a parent is not a directory") from None
    except OSError as exc:
        raise OutputPathError(f"{p}: cannot create its directory: {exc.strerror}") from None
    return real, (stat.S_IMODE(st.st_mode) if st is not None else None), True


@contextlib.contextmanager
def _claimed(path: str | os.PathLike[str]) -> Iterator[str]:
    k = _key(path)
    if k in _OPEN_OUTPUTS:
        raise OutputPathError(f"{os.fspath(path)}: already being written by this command as another output")
    _OPEN_OUTPUTS.add(k)
    try:
        yield k
    finally:
        _OPEN_OUTPUTS.discard(k)


def _wrap(raw: IO[bytes], gz: bool, binary: bool, encoding: str | None, level: int = 6) -> IO:
    """The stream a caller writes: raw, gzip over raw (zlib's ``level``), text over either (closing it never closes a
    gzip's raw)."""
    inner = _gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=gzip_level(level), mtime=0) if gz else raw
    return inner if binary else io.TextIOWrapper(inner, encoding=encoding, newline="\n")


@contextlib.contextmanager
def _replacing(target: str, keep_mode: int | None) -> Iterator[tuple[int, str]]:
    """(fd, name) of a temporary file beside ``target``, renamed over it if the block succeeds, removed if not
    (or on SIGTERM/SIGINT: registered for the signal handler)."""
    d, name = os.path.split(target)
    remove_stale_temps(d or ".")
    fd, tmp = tempfile.mkstemp(prefix=f".{name}.{_HOST}.{os.getpid()}.", suffix=".tmp", dir=d or ".")
    _CLEANUP[id(tmp)] = tmp
    try:
        yield fd, tmp
        publish(tmp, target, keep_mode)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    finally:
        _CLEANUP.pop(id(tmp), None)


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w", encoding: str | None = "utf-8",
                gz_level: int = 6) -> Iterator[IO]:
    """Open an output (see the module doc): a regular file or new path through a temporary file renamed over it
    only if the block succeeds (removed on any exception or SIGTERM/SIGINT); a device, FIFO or ``-`` written
    through. A ``.gz`` path is gzip-compressed at zlib's ``gz_level`` (gzip's default 6; a file only our own
    next step reads may take 1: :func:`gzip_level` maps either to the backend's)."""
    binary = "b" in mode
    p = os.fspath(path)
    gz = p.endswith(".gz")
    with _claimed(p):
        if p == "-":
            if sys.stdout is None or sys.stdout.closed:
                raise OutputPathError("-: standard output is closed (give the output a file name)")
            if not gz:
                out = sys.stdout.buffer if binary else sys.stdout
                yield out
                out.flush()
                return
            sys.stdout.flush()
            with _wrap(sys.stdout.buffer, gz, binary, encoding, gz_level) as fh:  # closes the gzip stream, not stdout
                yield fh
            sys.stdout.buffer.flush()
            return
        target, keep_mode, replace = resolve_output(p)
        if not replace:
            with open(target, "wb") as raw, _wrap(raw, gz, binary, encoding, gz_level) as fh:
                yield fh
            return
        with _replacing(target, keep_mode) as (fd, _), os.fdopen(fd, "wb") as raw, \
                _wrap(raw, gz, binary, encoding, gz_level) as fh:
            yield fh


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[str]:
    """A name to write ``path`` under, for a writer that wants a name (a C kernel, an external program, a binary
    stream of our own): a temporary path beside it, renamed over it if the block succeeds and removed otherwise
    (and on SIGTERM/SIGINT); for a device or FIFO the path itself (written through; a writer that must seek
    fails there with its own error)."""
    p = os.fspath(path)
    if p == "-":
        raise OutputPathError("-: this output must be a file (it cannot be written to standard output)")
    with _claimed(p):
        target, keep_mode, replace = resolve_output(p)
        if not replace:
            yield target
            return
        with _replacing(target, keep_mode) as (fd, tmp):
            os.close(fd)
            yield tmp


@contextlib.contextmanager
def output_or_stdout(path: str | os.PathLike[str] | None) -> Iterator[IO[str]]:
    """``atomic_open(path)``, or standard output when no path is given (benchmark rows)."""
    if path:
        with atomic_open(path, "w") as fh:
            yield fh
    else:
        yield sys.stdout


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    with atomic_open(path, "w") as fh:
        fh.write(text)


class CompressedInputError(ValueError):
    """A damaged or truncated .gz/.xz input (``path: ...``); one line."""


class TextFormatError(ValueError):
    """A text file breaking the line rule (see :func:`open_text`): ``path:line: what is wrong``; one line."""


def _decompression_errors() -> tuple[type[BaseException], ...]:
    import lzma
    return (EOFError, zlib.error, _zlib.error, gzip.BadGzipFile, lzma.LZMAError)


class _Checked:
    """A binary input stream whose decompression errors (a corrupt or truncated .gz/.xz) become one
    :class:`CompressedInputError` naming the file."""

    def __init__(self, raw: IO[bytes], name: str, kind: str):
        self._raw, self.name, self._kind = raw, name, kind

    def _fail(self, exc: BaseException) -> CompressedInputError:
        return CompressedInputError(f"{self.name}: corrupt or truncated {self._kind} data ({exc})")

    def read(self, n: int = -1) -> bytes:
        try:
            return self._raw.read(n)
        except _decompression_errors() as exc:
            raise self._fail(exc) from None

    def read1(self, n: int = -1) -> bytes:
        try:
            return self._raw.read1(n)  # type: ignore[attr-defined]
        except _decompression_errors() as exc:
            raise self._fail(exc) from None

    def readline(self, n: int = -1) -> bytes:
        try:
            return self._raw.readline(n)
        except _decompression_errors() as exc:
            raise self._fail(exc) from None

    def __iter__(self) -> Iterator[bytes]:
        while True:
            line = self.readline()
            if not line:
                return
            yield line

    def close(self) -> None:
        self._raw.close()

    @property
    def closed(self) -> bool:
        return self._raw.closed

    def __getattr__(self, name: str):
        return getattr(self._raw, name)

    def __enter__(self) -> "_Checked":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_binary(path: str | os.PathLike[str]) -> IO[bytes]:
    """Read plain, .gz or .xz bytes; a corrupt or truncated .gz/.xz raises :class:`CompressedInputError` (one line
    naming the file) when the damage is read."""
    p = os.fspath(path)
    if p.endswith(".gz"):
        return _Checked(_gzip.open(p, "rb"), p, "gzip")  # type: ignore[return-value]
    if p.endswith(".xz"):
        import lzma
        return _Checked(lzma.open(p, "rb"), p, "xz")  # type: ignore[return-value]
    return open(p, "rb")


@contextlib.contextmanager
def decompressed_fd(path: str | os.PathLike[str]) -> Iterator[int]:
    """A readable file descriptor of ``path``'s bytes, for a C reader: a plain file's own, or a pipe a thread of
    this process fills from :func:`open_binary` (a .gz inflated by the backend, a .xz by lzma; both let go of the
    GIL). A corrupt or truncated input raises :class:`CompressedInputError` when the block ends (the reader has
    seen an early end of its input by then); a reader that stops early ends the thread (broken pipe)."""
    p = os.fspath(path)
    if not os.path.exists(p):
        raise FileNotFoundError(f"{p}: no such file")
    if not (p.endswith(".gz") or p.endswith(".xz")):
        fd = os.open(p, os.O_RDONLY)
        try:
            yield fd
        finally:
            os.close(fd)
        return
    r, w = os.pipe()
    try:  # a 1 MiB pipe (Linux's default most): the reader's 1 MiB reads come whole, not in 64 KiB pieces
        import fcntl
        fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, 1 << 20)
    except (ImportError, AttributeError, OSError):
        pass
    failed: list[BaseException] = []

    def pump() -> None:
        try:
            with open_binary(p) as src, open(w, "wb", closefd=False) as out:
                while True:
                    block = src.read(1 << 20)
                    if not block:
                        break
                    out.write(block)
        except BrokenPipeError:
            pass
        except BaseException as exc:  # noqa: BLE001 - handed to the reading thread
            failed.append(exc)
        finally:
            os.close(w)

    t = threading.Thread(target=pump, name=f"inflate {os.path.basename(p)}", daemon=True)
    t.start()
    try:
        yield r
    except BaseException:
        os.close(r)  # a writer still blocked on a full pipe gets EPIPE
        t.join()
        if failed and isinstance(failed[0], CompressedInputError):
            raise failed[0] from None  # the cause of what the reader saw (a line cut short, a missing field)
        raise
    os.close(r)
    t.join()
    if failed:
        raise failed[0]


def printed_tolerance(printed: float) -> float:
    """How far a value Moses printed (6 significant digits: n-best features and totals, table scores and counts) may
    lie from the exact one: half a unit in the 6th digit, plus one unit (the printed value was summed in float)."""
    if printed == 0:
        return 1e-6
    import math
    return 1.5 * 10 ** (math.floor(math.log10(abs(printed))) - 5)


# ASCII control characters other than TAB and LF (C0 and DEL): refused inside a line (CR only before LF)
_CONTROL = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]")
_BOM = b"\xef\xbb\xbf"
_READ = 1 << 20


def _control_name(c: int) -> str:
    if c == 0x0D:
        return "a carriage return (\\r) inside the line (a line ends at \\n; a \\r only right before it)"
    if c == 0:
        return "a NUL byte inside the line"
    return f"the control character 0x{c:02x} inside the line"


class TextLines:
    """A text input read by the one line rule (:func:`open_text`): iterate for lines (each with its ``\\n``, the
    last one without where the file does not end in one, as a text file gives them), or ``readline``,
    ``readlines``, ``read``. ``lineno``: lines handed out so far."""

    def __init__(self, raw: IO[bytes], name: str, close: bool = True, strict: bool = True):
        self.name = name
        self.lineno = 0
        self._raw, self._close, self._strict = raw, close, strict
        self._gen = self._lines()

    def _fail(self, buf: bytes, pos: int, base: int, what: str) -> TextFormatError:
        line = base + buf.count(b"\n", 0, pos) + 1
        return TextFormatError(f"{self.name}:{line}: {what}")

    def _chunks(self) -> Iterator[bytes]:
        """Blocks of whole lines (the last may lack its newline); read1 where the stream has it (a pipe or a
        terminal hands each line on as it comes)."""
        read = getattr(self._raw, "read1", None) or self._raw.read
        pending: list[bytes] = []  # a line longer than a read: joined once (never grown block by block)
        while True:
            block = read(_READ)
            if not block:
                break
            cut = block.rfind(b"\n")
            if cut < 0:
                pending.append(block)
                continue
            pending.append(block[:cut + 1])
            yield b"".join(pending)
            pending = [block[cut + 1:]] if cut + 1 < len(block) else []
        if pending:
            yield b"".join(pending)

    def _lines(self) -> Iterator[str]:
        base = 0  # lines before this block
        first = True
        for buf in self._chunks():
            if first:
                first = False
                if self._strict and buf.startswith(_BOM):
                    buf = buf[3:]
            if self._strict:
                if b"\r" in buf:
                    buf = buf.replace(b"\r\n", b"\n")
                m = _CONTROL.search(buf)
                if m:
                    raise self._fail(buf, m.start(), base, _control_name(buf[m.start()]))
            try:
                text = buf.decode("utf-8")
            except UnicodeDecodeError as exc:
                col = exc.start - (buf.rfind(b"\n", 0, exc.start) + 1) + 1
                raise self._fail(buf, exc.start, base,
                                 f"invalid UTF-8 (byte 0x{buf[exc.start]:02x} at column {col})") from None
            pieces = text.split("\n")
            last = pieces.pop()
            for piece in pieces:
                self.lineno += 1
                yield piece + "\n"
            if last:
                self.lineno += 1
                yield last
            base += len(pieces) + (1 if last else 0)

    def __iter__(self) -> Iterator[str]:
        return self._gen

    def __next__(self) -> str:
        return next(self._gen)

    def readline(self) -> str:
        return next(self._gen, "")

    def readlines(self) -> list[str]:
        return list(self._gen)

    def read(self) -> str:
        return "".join(self._gen)

    def close(self) -> None:
        self._gen.close()
        if self._close:
            self._raw.close()

    @property
    def closed(self) -> bool:
        return self._raw.closed

    def __enter__(self) -> "TextLines":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_text(path: str | os.PathLike[str], *, strict: bool = True) -> TextLines:
    """Read plain, .gz or .xz UTF-8 text (``-``: standard input) by the project's one line rule for line-parallel
    text (corpora, references, hypotheses, decoder input, n-best lists, extract files, moses.ini; CONTRIBUTING.md
    "Text lines"):

    - a line ends at ``\\n`` only; a CRLF's ``\\r`` is removed (Windows files read as Unix ones);
    - a ``\\r`` anywhere else, a NUL or any other ASCII control character but TAB (bytes 0x00-0x08, 0x0b-0x1f,
      0x7f) is refused: :class:`TextFormatError` ``path:line: ...`` (never a silent second line or a glued word);
    - U+2028, U+2029, U+0085 and every other non-ASCII character are ordinary characters inside a line;
    - a UTF-8 byte-order mark at the start of the file is removed (nowhere else is it special);
    - invalid UTF-8 is :class:`TextFormatError` ``path:line: invalid UTF-8 (byte 0x.. at column N)``;
    - a corrupt or truncated .gz/.xz is :class:`CompressedInputError` ``path: ...``.

    ``strict=False`` keeps only the line ends (``\\n``), the UTF-8 check and the decompression check, for formats
    whose peer defines its own whitespace (ARPA: KenLM's ARPA reader splits at space, ``\\t`` and ``\\r``; a
    ``\\x0b`` or ``\\x0c`` is a word character there)."""
    p = os.fspath(path)
    if p == "-":
        stream = sys.stdin
        raw = getattr(stream, "buffer", None) if stream is not None else None
        if raw is None or stream.closed:
            raise TextFormatError("-: standard input is closed (give the input a file name)")
        return TextLines(raw, "<stdin>", close=False, strict=strict)
    return TextLines(open_binary(p), p, close=True, strict=strict)


@overload
def words(line: str) -> list[str]: ...
@overload
def words(line: bytes) -> list[bytes]: ...
def words(line: str | bytes) -> list[str] | list[bytes]:
    """The words of ``line``: separated by runs of ASCII space and TAB only, as the decoder, the C readers and
    Moses split (CONTRIBUTING.md "Text lines"); NBSP, U+2028, U+0085, U+3000 and every other character are part
    of a word. A line's ending ``\n`` (never inside a line, by the line rule) is dropped too. ``bytes`` (a decoder's
    checked input sentence) split the same way."""
    if isinstance(line, bytes):
        return [w for w in line.replace(b"\t", b" ").replace(b"\n", b" ").split(b" ") if w]
    return [w for w in line.replace("\t", " ").replace("\n", " ").split(" ") if w]


def join_words(line: str) -> str:
    """``line``'s words (:func:`words`) joined by single spaces."""
    return " ".join(words(line))


def read_lines(path: str | os.PathLike[str]) -> list[str]:
    """Every line of ``path`` (:func:`open_text`'s rule), without its ``\\n``."""
    with open_text(path) as fh:
        return [line[:-1] if line.endswith("\n") else line for line in fh]


# ---------------------------------------------------------------- cleanup on SIGTERM / SIGINT
# Temporary files and run folders register here while they exist; the CLI installs handlers that remove them
# and exit at once (SLURM and Snakemake cancel jobs with SIGTERM, which Python's default would not clean up).
_CLEANUP: dict[int, str] = {}


@contextlib.contextmanager
def removed_on_signal(path: str | os.PathLike[str]) -> Iterator[None]:
    key = id(path)
    _CLEANUP[key] = os.fspath(path)
    try:
        yield
    finally:
        _CLEANUP.pop(key, None)


def _on_signal(signum, frame) -> None:  # pragma: no cover - exercised in a subprocess by the tests
    import shutil
    import sys
    stopped: list[str] = []
    procs = sys.modules.get("smtbench.procs")
    if procs is not None:  # children first, so that none writes after its temporaries are removed
        with contextlib.suppress(Exception):
            stopped = procs.stop(sig=signum)
    removed = []
    for p in list(_CLEANUP.values()):
        if os.path.isdir(p) and not os.path.islink(p):
            shutil.rmtree(p, ignore_errors=True)
        else:
            try:
                os.unlink(p)
            except OSError:
                continue
        if not os.path.lexists(p):
            removed.append(p)
    with contextlib.suppress(Exception):
        what = [f"stopped {', '.join(stopped)}"] if stopped else []
        shown = ", ".join(removed[:5]) + (f" and {len(removed) - 5} more" if len(removed) > 5 else "")
        what.append(f"removed {shown}" if removed else "no temporary file to remove")
        sys.stderr.write(f"smtbench: stopped by signal {signum}; {'; '.join(what)}\n")
        sys.stderr.flush()
    os._exit(128 + signum)


def install_signal_cleanup() -> None:
    """SIGTERM and SIGINT: remove every registered temporary path, exit 128 + the signal (main thread only)."""
    import signal
    import threading
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, _on_signal)


def run_interruptible(fn, *args, **kwargs):
    """Run ``fn`` (long C calls, which release the GIL) in a worker thread so the main thread keeps handling
    signals within a fraction of a second; returns its result or re-raises its exception."""
    import threading
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["result"] = fn(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc

    t = threading.Thread(target=target, name="smtbench-work", daemon=True)
    t.start()
    while t.is_alive():
        t.join(0.2)
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box.get("result")


_HOST = (os.uname().nodename.split(".")[0] or "host")[:16]  # bounded: the temporary's name stays short


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


# folders already scanned for stale temporaries by this process: one scan per folder and command, not one per
# output written (decode split writing N shards into one folder would otherwise rescan it N times: quadratic)
_SCANNED: set[str] = set()


def remove_stale_temps(d: str | os.PathLike[str], name: str | None = None) -> list[str]:
    """Remove the temporary files ``.<name>.<host>.<pid>.*.tmp`` beside an output that a writer on this host left
    when it was killed with SIGKILL (SIGTERM/SIGINT remove their own); a temp of a live process, of another host
    (a shared file system) or of another naming is left alone. ``name`` None: every output's temporaries in ``d``,
    once per process and folder (what every atomic writer calls). Returns what was removed."""
    import re
    if name is None:
        key = os.path.realpath(d)
        if key in _SCANNED:
            return []
        _SCANNED.add(key)
    removed = []
    pat = re.compile(rf"\.{re.escape(name) if name is not None else '.+'}\.{re.escape(_HOST)}\.(\d+)\.[^.]*\.tmp\Z",
                     re.DOTALL)
    with contextlib.suppress(OSError):
        for entry in os.scandir(d):
            m = pat.match(entry.name)
            if m is None:
                continue
            pid_text = m.group(1)
            if pid_text.isdigit() and not _pid_alive(int(pid_text)) and entry.is_file(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
                    removed.append(entry.path)
    return removed


def remove_stale_runs(base: str | os.PathLike[str], prefix: str) -> list[str]:
    """Remove run folders ``<prefix><pid>.*`` under ``base`` whose process is gone (killed with SIGKILL, or a
    crash); returns what was removed."""
    import shutil
    removed = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(base):
            if not (entry.is_dir(follow_symlinks=False) and entry.name.startswith(prefix)):
                continue
            pid_text = entry.name[len(prefix):].split(".", 1)[0]
            if not pid_text.isdigit():
                continue
            if not _pid_alive(int(pid_text)):
                shutil.rmtree(entry.path, ignore_errors=True)
                removed.append(entry.path)
    return removed


def _ends_without_newline(path: str | os.PathLike[str]) -> bool:
    """True when a (plain, .gz or .xz) file is not empty and its last byte is not ``\\n``."""
    last = b""
    with contextlib.suppress(OSError, EOFError, ValueError), open_binary(path) as fh:
        while chunk := fh.read(1 << 20):
            last = chunk[-1:]
    return last not in (b"", b"\n")


def line_count_mismatch(a: str | os.PathLike[str], na: int, b: str | os.PathLike[str], nb: int) -> str:
    """The message for two files that must be line-parallel but are not: the counts, and for a file whose last
    line has no newline, that ``wc -l`` counts one line fewer than there are."""
    notes = [f"{os.fspath(p)} has no newline after its last line (wc -l says {n - 1})"
             for p, n in ((a, na), (b, nb)) if n and _ends_without_newline(p)]
    return (f"{os.fspath(a)}: {na} lines but {os.fspath(b)} has {nb}" + (f" ({'; '.join(notes)})" if notes else "")
            + "; the two files must be line-parallel")
