"""The URL backend of `rltop.ingest.storage`: any fsspec URL (``s3://``, ``gs://``, ``memory://``, …).

rltop writes no storage client of its own: fsspec and its implementations (s3fs, gcsfs, adlfs…)
do the talking, with their own configuration. Credentials and endpoints therefore come only from
each backend's standard places: for S3 the ``AWS_*`` variables (``AWS_ENDPOINT_URL`` for an
S3-compatible store, ``AWS_PROFILE``, ``~/.aws/config``), and fsspec's own configuration
(``FSSPEC_S3_ENDPOINT_URL``, ``~/.config/fsspec/*.json``).

What a poll costs: a ``stat`` is one metadata request (S3: ``HEAD``), a read is one ranged ``GET``
of the bytes wanted, and a listing of a prefix is one ``LIST`` request per 1000 objects. Listings
are never served from fsspec's cache (s3fs caches them): every call asks the store again, so an
appended object is seen on the next poll. A file that did not change costs its ``HEAD`` only.

Errors: a missing object is FileNotFoundError, as on disk; anything else (a refused connection, a
timeout, a 5xx, refused credentials) is `Unreachable`, which the watcher reports once for the
whole root and retries with back-off.
"""

from __future__ import annotations

import datetime
import importlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

from rltop.ingest.storage import FileStat, MissingBackend, Unreachable, scheme

# scheme -> the package its fsspec implementation lives in (fsspec itself for the others)
PACKAGES = {
    "s3": "s3fs", "s3a": "s3fs", "gs": "gcsfs", "gcs": "gcsfs",
    "az": "adlfs", "abfs": "adlfs", "abfss": "adlfs", "hf": "huggingface_hub",
}  # fmt: skip
EXTRAS = {"s3fs": "s3", "gcsfs": "gcs"}  # package -> the rltop extra that installs it
TIMEOUT = 10.0
"""Seconds to connect, and to wait for an answer, per request. s3fs's own defaults (5 s, 15 s, each
request tried 5 times by s3fs and 5 times by botocore) made an endpoint that accepts connections and
never answers fail after about 7 minutes, silently meanwhile; the watcher retries with back-off
itself (`rltop.ingest.follow.reachability`), so a request is tried twice at most."""
ATTEMPTS = 2
# (max_pool_connections: a one-shot load keeps up to 16 requests in flight, botocore's pool holds 10)
# scheme -> file system settings rltop sets unless the user's fsspec configuration sets them
_DEFAULTS = {
    "s3": {"config_kwargs": {"connect_timeout": TIMEOUT, "read_timeout": TIMEOUT, "max_pool_connections": 32,
                             "retries": {"max_attempts": ATTEMPTS, "mode": "standard"}}},
}  # fmt: skip
_DEFAULTS["s3a"] = _DEFAULTS["s3"]


def missing_package_message(url: str, package: str) -> str:
    """One line naming what to install for ``url``."""
    extra = EXTRAS.get(package)
    how = f"pip install 'rltop[{extra}]'" if extra else f"pip install fsspec {package}"
    return f"{url}: reading {scheme(url)}:// URLs needs {package}, which is not installed: {how}"


def _require(url: str) -> Any:
    """fsspec itself, or `MissingBackend` naming the extra for this URL's scheme."""
    protocol = scheme(url).split("::")[-1]
    package = PACKAGES.get(protocol, "fsspec")
    for needed in dict.fromkeys(("fsspec", package)):
        try:
            importlib.import_module(needed)
        except ImportError:
            raise MissingBackend(missing_package_message(url, package)) from None
    import fsspec

    return fsspec


def _timestamp(value: Any) -> float:
    """Seconds since the epoch from the many forms fsspec implementations use (0.0 if unknown)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        return value.timestamp()
    if isinstance(value, str) and value:
        try:
            return _timestamp(datetime.datetime.fromisoformat(value.replace("Z", "+00:00")))
        except ValueError:
            return 0.0
    return 0.0


def file_stat(info: dict[str, Any]) -> FileStat:
    """A `FileStat` of one fsspec ``info`` dict."""
    when = 0.0
    for key in ("mtime", "LastModified", "last_modified", "updated", "modified", "created"):
        when = _timestamp(info.get(key))
        if when:
            break
    tag = info.get("ETag") or info.get("etag") or info.get("generation") or info.get("md5Hash")
    size = int(info.get("size") or 0)
    return FileStat(size, when, (size, when, tag), None)


class RemoteFile:
    """One object opened for ranged reads: each `read` is one ranged request."""

    def __init__(self, owner: RemoteBackend, path: str) -> None:
        self._owner = owner
        self.path = path

    def __enter__(self) -> RemoteFile:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def stat(self) -> FileStat:
        """Fresh metadata of the object (one request; never from a cached listing)."""
        return self._owner.stat(self.path)

    def read(self, start: int, length: int) -> bytes:
        """``length`` bytes at ``start`` (fewer at the end of the object), one ranged GET."""
        if length <= 0:
            return b""
        fs, inner = self._owner.fs, self._owner.inner(self.path)
        return self._owner.call(fs.cat_file, inner, start=start, end=start + length)


class RemoteBackend:
    """One fsspec file system, serving every URL of one scheme."""

    remote = True

    def __init__(self, protocol_url: str) -> None:
        fsspec = _require(protocol_url)
        try:
            self.fs, _ = fsspec.core.url_to_fs(protocol_url, **_options(fsspec, scheme(protocol_url)))
        except ImportError as error:  # a package the implementation needs in turn
            raise MissingBackend(f"{protocol_url}: {error}") from None
        except (ValueError, TypeError) as error:
            raise MissingBackend(f"{protocol_url}: not a URL fsspec can open ({error})") from None
        self.prefix = protocol_url[: protocol_url.index("://") + 3]
        if scheme(protocol_url) in _DEFAULTS and hasattr(self.fs, "retries"):
            self.fs.retries = 1  # s3fs's own retry loop: botocore's two attempts are enough

    # -- paths ------------------------------------------------------------------------------------

    def inner(self, url: str) -> str:
        """The file system's own path of ``url`` (no scheme)."""
        return self.fs._strip_protocol(url)

    def outer(self, inner: str) -> str:
        """The URL of a path the file system returned."""
        return self.prefix + inner

    def absolute(self, path: str) -> str:
        """The canonical URL (the file system's normal form, no trailing slash)."""
        return self.outer(self.inner(path).rstrip("/") or "/")

    # -- calls ------------------------------------------------------------------------------------

    def call(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Call the file system; anything but a missing file is `Unreachable`."""
        try:
            return function(*args, **kwargs)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            raise
        except PermissionError as error:
            raise Unreachable(f"access denied ({_reason(error)}; check the credentials)") from None
        except Exception as error:  # botocore, aiohttp, timeouts: the storage did not answer
            raise Unreachable(_reason(error)) from None

    def _info(self, path: str) -> dict[str, Any]:
        inner = self.inner(path)
        self.fs.invalidate_cache(inner)  # s3fs and gcsfs would answer from an old listing
        return self.call(self.fs.info, inner)

    def stat(self, path: str) -> FileStat:
        """Fresh metadata of one object (FileNotFoundError when it is not there)."""
        info = self._info(path)
        if info.get("type") == "directory":
            raise IsADirectoryError(path)
        return file_stat(info)

    def kind(self, path: str) -> str | None:
        """ "file", "directory", or None when nothing is there (`Unreachable` propagates)."""
        try:
            info = self._info(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
        return "directory" if info.get("type") == "directory" else "file"

    def check(self, path: str) -> None:
        """FileNotFoundError when neither ``path`` nor its bucket exists; `Unreachable` when unanswered.

        An empty prefix of an existing bucket is fine: object stores have no directories, so a
        prefix exists only once training wrote its first object there.
        """
        if self.kind(path) is not None:
            return
        inner = self.inner(path).strip("/")
        bucket = inner.split("/", 1)[0]
        if bucket and bucket != inner and self.kind(self.outer(bucket)) is not None:
            return
        raise FileNotFoundError(2, "no such file, directory or bucket", path)

    def open(self, path: str) -> RemoteFile:
        """The object, for ranged reads."""
        return RemoteFile(self, path)

    def walk(self, root: str, on_problem: Callable[[str], None]) -> Iterator[tuple[str, list[str]]]:
        """Every object under ``root`` in one recursive listing, grouped by folder."""
        inner = self.inner(root).rstrip("/")
        self.fs.invalidate_cache(inner)
        try:
            found = self.call(self.fs.find, inner, detail=True)
        except (FileNotFoundError, NotADirectoryError):
            return
        folders: dict[str, list[str]] = {}
        for path, info in found.items():
            if info.get("type", "file") != "file":
                continue
            folder, _, base = path.rstrip("/").rpartition("/")
            folders.setdefault(folder, []).append(base)
        for folder in sorted(folders):
            yield self.outer(folder), sorted(folders[folder])

    def is_gone(self, path: str) -> bool:
        """True when the object is certainly not there (an unanswered request is not that)."""
        try:
            return self.kind(path) is None
        except Unreachable:
            return False


def _options(fsspec: Any, protocol: str) -> dict[str, Any]:
    """rltop's settings for ``protocol`` (`_DEFAULTS`), under the user's own fsspec configuration:
    a key the user set (``~/.config/fsspec/*.json``, ``FSSPEC_S3_*``) is left to the user's value."""
    mine = _DEFAULTS.get(protocol, {})
    user = fsspec.config.conf.get(protocol, {})
    options = {key: value for key, value in mine.items() if key not in user}
    if "config_kwargs" in user and "config_kwargs" in mine:
        options["config_kwargs"] = {**mine["config_kwargs"], **user["config_kwargs"]}
    return options


def _reason(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= 200 else text[:197] + "..."


_lock = threading.Lock()
_backends: dict[str, RemoteBackend] = {}


def backend(path: str) -> RemoteBackend:
    """The backend of ``path``'s scheme (one file system per scheme, created on first use)."""
    key = scheme(path)
    with _lock:
        found = _backends.get(key)
        if found is None:
            found = _backends[key] = RemoteBackend(f"{key}://")
    return found


def forget_backends() -> None:
    """Drop the cached file systems (tests that change the environment between cases)."""
    with _lock:
        _backends.clear()
