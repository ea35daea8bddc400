"""A read-only client of MLflow's tracking REST API (``/api/2.0/mlflow/…``), standard library only.

rltop asks a tracking server only what it reads: ``experiments/search`` and ``runs/search`` (POST,
but read-only: MLflow's search endpoints take their query as a JSON body) and
``metrics/get-history`` (GET, paged). Nothing is ever logged, created or changed on the server.

Authentication is MLflow's own (the variables its client reads): ``MLFLOW_TRACKING_TOKEN`` (a
bearer token) or ``MLFLOW_TRACKING_USERNAME`` and ``MLFLOW_TRACKING_PASSWORD`` (basic auth);
``MLFLOW_TRACKING_INSECURE_TLS=true`` skips the certificate check, ``MLFLOW_TRACKING_SERVER_CERT_PATH``
names a CA bundle. ``mlflow://host:port`` is ``http://host:port``.

Errors: a refused connection, a timeout or a 5xx answer is tried again once after a short pause, then
raised as `rltop.ingest.storage.Unreachable` (the watcher says it once and retries with back-off);
refused credentials are `Unreachable` too (with what to check); a server that does not answer
MLflow's API (a 404 page, HTML, no JSON) is `NotMlflow`; a run that is not there is
FileNotFoundError. Each thread keeps one keep-alive connection per server.
"""

from __future__ import annotations

import base64
import http.client
import json
import os
import ssl
import threading
import time
import urllib.parse
from typing import Any

from rltop.ingest.storage import StorageError, Unreachable

API = "/api/2.0/mlflow/"
TIMEOUT = 10.0  # seconds to connect and to wait for each answer
ATTEMPTS = 2  # a request is tried twice; then the watcher's back-off takes over
PAUSE = 0.2  # seconds before the second attempt
SCHEMES = ("http", "https", "mlflow")


class NotMlflow(StorageError):
    """The server answered, but not as an MLflow tracking server does (the message says what it said)."""


def base_url(url: str) -> str:
    """``url`` as the http(s) URL of the server (``mlflow://h:p`` -> ``http://h:p``), no trailing slash."""
    scheme, _, rest = url.partition("://")
    return f"{'http' if scheme == 'mlflow' else scheme}://{rest.rstrip('/')}"


def tracking_uri_path(uri: str) -> str | None:
    """The path rltop reads for an ``MLFLOW_TRACKING_URI``: the server URL, the SQLite file of
    ``sqlite:///…``, the folder of ``file:…`` or of a plain path; None for a store rltop cannot read
    (``databricks``, ``postgresql://``…) or an empty value."""
    uri = uri.strip()
    if not uri or uri.startswith("databricks"):
        return None
    scheme, separator, rest = uri.partition(":")
    if not separator or len(scheme) == 1:  # a plain path (or a Windows drive letter)
        return uri
    if scheme in SCHEMES:
        return uri
    if scheme == "sqlite" and rest.startswith("///"):
        return rest[3:] or None
    if scheme == "file":
        path = urllib.parse.unquote(urllib.parse.urlsplit(uri).path)
        return path or None
    return None


def _truthy(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def auth_headers() -> dict[str, str]:
    """The Authorization header MLflow's own environment variables ask for (none when unset)."""
    token = os.environ.get("MLFLOW_TRACKING_TOKEN")
    if token:
        return {"Authorization": f"Bearer {token}"}
    user, password = os.environ.get("MLFLOW_TRACKING_USERNAME"), os.environ.get("MLFLOW_TRACKING_PASSWORD")
    if user and password is not None:
        pair = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        return {"Authorization": f"Basic {pair}"}
    return {}


def offset_token(offset: int) -> str:
    """MLflow's page token for an offset into a metric's history (its SearchUtils format)."""
    return base64.b64encode(json.dumps({"offset": offset}).encode()).decode("ascii")


class Client:
    """One tracking server: JSON requests over keep-alive connections (one per thread)."""

    def __init__(self, url: str) -> None:
        self.url = base_url(url)
        parsed = urllib.parse.urlsplit(self.url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise StorageError(
                f"{url}: not a tracking server URL (http://host:port, https://… or mlflow://…)"
            )
        self.https = parsed.scheme == "https"
        self.host = parsed.hostname
        try:
            self.port = parsed.port
        except ValueError:
            raise StorageError(f"{url}: not a valid port") from None
        self.prefix = parsed.path.rstrip("/")
        self.requests = 0  # every request sent (the benchmark's requests per poll)
        self._local = threading.local()
        self._count_lock = threading.Lock()

    # -- the endpoints rltop uses -------------------------------------------------------------------

    def search_experiments(self, page_token: str | None = None) -> dict[str, Any]:
        """One page of active experiments (``experiments/search``)."""
        body: dict[str, Any] = {"max_results": 1000}
        if page_token:
            body["page_token"] = page_token
        return self.call("POST", "experiments/search", body)

    def search_runs(self, experiment_ids: list[str], filter_string: str = "",
                    page_token: str | None = None) -> dict[str, Any]:  # fmt: skip
        """One page of active runs of ``experiment_ids`` (``runs/search``), with their latest metrics
        and params."""
        body: dict[str, Any] = {
            "experiment_ids": experiment_ids,
            "max_results": 1000,
            "run_view_type": "ACTIVE_ONLY",
            "order_by": ["attributes.start_time ASC"],
        }
        if filter_string:
            body["filter"] = filter_string
        if page_token:
            body["page_token"] = page_token
        return self.call("POST", "runs/search", body)

    def metric_history(self, run_id: str, key: str, offset: int, page: int) -> dict[str, Any]:
        """Up to ``page`` points of one metric's history from ``offset`` (``metrics/get-history``,
        ordered by timestamp, step, value)."""
        query = {"run_id": run_id, "metric_key": key, "max_results": str(page)}
        if offset:
            query["page_token"] = offset_token(offset)
        return self.call("GET", "metrics/get-history", query=query)

    # -- transport --------------------------------------------------------------------------------

    def call(self, method: str, endpoint: str, body: dict[str, Any] | None = None,
             query: dict[str, str] | None = None) -> dict[str, Any]:  # fmt: skip
        """The JSON answer of one API call, tried `ATTEMPTS` times (see the module's docstring)."""
        target = self.prefix + API + endpoint
        if query:
            target += "?" + urllib.parse.urlencode(query)
        data = None if body is None else json.dumps(body).encode()
        reason = ""
        for attempt in range(ATTEMPTS):
            if attempt:
                time.sleep(PAUSE)
            try:
                status, text = self._send(method, target, data)
            except (OSError, http.client.HTTPException) as error:
                self._drop_connection()
                reason = _reason(error)
                continue
            if status >= 500 or status == 429:
                reason = f"HTTP {status} from the server"
                continue
            return self._answer(status, text, endpoint)
        raise Unreachable(reason or "no answer")

    def _answer(self, status: int, text: bytes, endpoint: str) -> dict[str, Any]:
        try:
            answer = json.loads(text) if text.strip() else {}
        except ValueError:
            answer = None
        if status in (401, 403):
            raise Unreachable(
                f"access denied (HTTP {status}; check MLFLOW_TRACKING_TOKEN or "
                "MLFLOW_TRACKING_USERNAME/MLFLOW_TRACKING_PASSWORD)"
            )
        if not isinstance(answer, dict):
            raise NotMlflow(
                f"{self.url}: not an MLflow tracking server ({self.prefix + API + endpoint} answered "
                f"HTTP {status} without MLflow's JSON)"
            )
        if status == 404 and answer.get("error_code") == "RESOURCE_DOES_NOT_EXIST":
            raise FileNotFoundError(2, str(answer.get("message", "not found"))[:200])
        if status >= 400:
            if "error_code" not in answer:
                raise NotMlflow(f"{self.url}: not an MLflow tracking server (HTTP {status} on {endpoint})")
            raise StorageError(f"{self.url}: {endpoint}: {answer.get('message', status)}"[:300])
        return answer

    def _connection(self) -> http.client.HTTPConnection:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            if self.https:
                connection = http.client.HTTPSConnection(self.host, self.port, timeout=TIMEOUT,
                                                         context=_tls_context())  # fmt: skip
            else:
                connection = http.client.HTTPConnection(self.host, self.port, timeout=TIMEOUT)
            self._local.connection = connection
        return connection

    def _drop_connection(self) -> None:
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None

    def _send(self, method: str, target: str, data: bytes | None) -> tuple[int, bytes]:
        headers = {"Accept": "application/json", "User-Agent": "rltop", **auth_headers()}
        if data is not None:
            headers["Content-Type"] = "application/json"
        with self._count_lock:
            self.requests += 1
        connection = self._connection()
        try:
            connection.request(method, target, body=data, headers=headers)
            response = connection.getresponse()
        except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
            # a keep-alive connection the server closed meanwhile: one fresh connection, at once
            self._drop_connection()
            connection = self._connection()
            connection.request(method, target, body=data, headers=headers)
            response = connection.getresponse()
        text = response.read()
        if response.getheader("Connection", "").lower() == "close":
            self._drop_connection()
        return response.status, text


def _tls_context() -> ssl.SSLContext:
    if _truthy("MLFLOW_TRACKING_INSECURE_TLS"):
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return context
    return ssl.create_default_context(cafile=os.environ.get("MLFLOW_TRACKING_SERVER_CERT_PATH") or None)


def _reason(error: BaseException) -> str:
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    if isinstance(error, TimeoutError):
        return f"no answer within {TIMEOUT:g} s"
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= 200 else text[:197] + "..."
