"""Millrace's `wmill` module for python3 jobs: the API of Windmill's Python client (PyPI `wmill`)
under the same names, arguments and return values, written for Millrace from that client's public
documentation. Standard library only (urllib), so that it works in any job without installing
anything.

It reads what the worker gives every job: WM_TOKEN, BASE_INTERNAL_URL, WM_WORKSPACE, WM_JOB_ID,
WM_JOB_PATH and WM_STATE_PATH. The worker puts it after the job's installed packages on
PYTHONPATH: a script that pins `wmill` in its `# requirements:` gets the real client instead
(where the operator's PIP_INDEX_URL serves it).

Module-level functions act with the job's own client (`get_client()`); `Windmill` builds one with
another token, base URL or workspace.
"""

import atexit
import datetime as _dt
import json
import os
import random
import time
import urllib.error
import urllib.parse
import urllib.request

__all__ = [
    "JobStatus",
    "MillraceError",
    "S3Object",
    "Windmill",
    "cancel_job",
    "cancel_running",
    "get_client",
    "get_job",
    "get_job_status",
    "get_progress",
    "get_resource",
    "get_result",
    "get_resume_urls",
    "get_root_job_id",
    "get_state",
    "get_state_path",
    "get_variable",
    "get_version",
    "get_workspace",
    "load_s3_file",
    "load_s3_file_reader",
    "run_flow_async",
    "run_script",
    "run_script_async",
    "run_script_by_hash",
    "run_script_by_hash_async",
    "run_script_by_path",
    "run_script_by_path_async",
    "run_script_by_path_sync",
    "run_script_sync",
    "set_progress",
    "set_resource",
    "set_state",
    "set_variable",
    "username_to_email",
    "wait_job",
    "whoami",
    "write_s3_file",
]

# What get_job_status answers.
JobStatus = str
_POLL_SECONDS = 0.5


class MillraceError(Exception):
    """An API call failed; `status` is the HTTP status (0 when the server was unreachable)."""

    def __init__(self, status, message):
        super().__init__(f"{status}: {message}")
        self.status = status
        self.body = message


class S3Object(dict):
    """A file in the workspace's object storage, as Windmill's S3Object: `{"s3": key}`, and
    `"storage"` naming a secondary storage."""


def _s3_object(value):
    """An S3Object from what the caller gave: an S3Object/dict, a key, or an `s3://…` URI."""
    if value is None:
        return S3Object()
    if isinstance(value, str):
        if value.startswith("s3://"):
            storage, _, key = value[len("s3://"):].partition("/")
            return S3Object(s3=key, **({"storage": storage} if storage else {}))
        return S3Object(s3=value)
    return S3Object(value)


class Response:
    """What `Windmill.get` / `Windmill.post` answer: status_code, text, json(), raise_for_status()."""

    def __init__(self, status_code, content, content_type, url):
        self.status_code = status_code
        # The body's bytes (`content`, as requests names them) and their text.
        self.content = content
        self.text = content.decode(errors="replace")
        self.headers = {"content-type": content_type}
        self.url = url

    @property
    def is_success(self):
        return 200 <= self.status_code < 300

    def json(self):
        return json.loads(self.text) if self.text else None

    def raise_for_status(self):
        if not self.is_success:
            raise MillraceError(self.status_code, self.text)
        return self

    def value(self):
        """The body: parsed when it is JSON, else the text."""
        if "application/json" in self.headers["content-type"]:
            return self.json()
        return self.text


def _env(name, default=None):
    value = os.environ.get(name)
    return value if value else default


def _strip(path, prefix):
    return path[len(prefix):] if isinstance(path, str) and path.startswith(prefix) else path


def _quoted(path):
    return urllib.parse.quote(path, safe="/")


def _seconds(timeout):
    if timeout is None:
        return None
    if isinstance(timeout, _dt.timedelta):
        return timeout.total_seconds()
    return float(timeout)


class Windmill:
    """A client for one token, base URL and workspace (defaults: the job's own)."""

    def __init__(self, base_url=None, token=None, workspace=None, verify=True):
        base = (base_url or _env("BASE_INTERNAL_URL") or _env("BASE_URL") or "http://localhost:8000").rstrip("/")
        self.base_url = base if base.endswith("/api") else base + "/api"
        self.token = token or _env("WM_TOKEN", "")
        self.workspace = workspace or _env("WM_WORKSPACE", "")
        self.verify = verify
        self.path = _env("WM_JOB_PATH")
        # Jobs started with cleanup=True and not finished yet: canceled if this process exits first.
        self._pending = set()
        atexit.register(self._cancel_pending)

    # ------------------------------------------------------------------ HTTP

    def _request(self, method, endpoint, body=None, params=None, timeout=60, data=None, content_type=None):
        """A call with a JSON `body`, or with raw bytes `data` of `content_type`."""
        url = endpoint if endpoint.startswith("http") else f"{self.base_url}/{endpoint.lstrip('/')}"
        if params:
            query = {k: v for k, v in params.items() if v is not None}
            if query:
                url += ("&" if "?" in url else "?") + urllib.parse.urlencode(query)
        if data is None and body is not None:
            data, content_type = json.dumps(body).encode(), "application/json"
        request = urllib.request.Request(url, data=data, method=method)
        request.add_header("Authorization", f"Bearer {self.token}")
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", content_type or "application/octet-stream")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return Response(
                    response.status,
                    response.read(),
                    response.headers.get("Content-Type", ""),
                    url,
                )
        except urllib.error.HTTPError as error:
            return Response(
                error.code,
                error.read(),
                error.headers.get("Content-Type", "") if error.headers else "",
                url,
            )
        except urllib.error.URLError as error:
            raise MillraceError(0, str(error.reason)) from None

    def get(self, endpoint, raise_for_status=True, params=None, **_kwargs):
        """GET an API path (`/w/<workspace>/…`, relative to <base>/api)."""
        response = self._request("GET", endpoint, params=params)
        return response.raise_for_status() if raise_for_status else response

    def post(self, endpoint, raise_for_status=True, json=None, params=None, **_kwargs):  # noqa: A002
        """POST a JSON body to an API path."""
        response = self._request("POST", endpoint, body=json, params=params)
        return response.raise_for_status() if raise_for_status else response

    def _w(self, route):
        return f"/w/{urllib.parse.quote(self.workspace)}/{route}"

    def _value(self, method, route, body=None, params=None):
        if method == "GET":
            return self.get(self._w(route), params=params).value()
        return self.post(self._w(route), json=body, params=params).value()

    # ------------------------------------------------------------------ identity

    @property
    def version(self):
        return self.get_version()

    @property
    def user(self):
        return self.whoami()

    @property
    def state_path(self):
        return self.get_state_path()

    def get_version(self):
        return self.get("/version").text

    def get_workspace(self):
        return self.workspace

    def whoami(self):
        """The user the token acts as (username, email, is_admin, …)."""
        response = self.get("/users/whoami", raise_for_status=False)
        if response.is_success:
            return response.json()
        # A job's token is scoped to its workspace: ask the workspace's whoami instead.
        return self.get(self._w("users/whoami")).json()

    def username_to_email(self, username):
        return self.get(self._w(f"users/username_to_email/{_quoted(username)}")).text

    def get_root_job_id(self, job_id=None):
        job_id = job_id or _env("WM_JOB_ID")
        if not job_id:
            raise MillraceError(0, "job id not set (WM_JOB_ID)")
        return self._value("GET", f"jobs_u/get_root_job_id/{job_id}")

    # ------------------------------------------------------------------ variables and resources

    def get_variable(self, path):
        """The variable's value (a secret decrypted, which the server audits)."""
        path = _strip(path, "$var:")
        try:
            return self._value("GET", f"variables/get_value/{_quoted(path)}")
        except MillraceError as error:
            raise MillraceError(
                error.status, f"Variable not found at {path} or not visible to you: {error.body}"
            ) from None

    def set_variable(self, path, value, is_secret=False, description=""):
        """Updates the variable, or creates it (secret when `is_secret`) if it does not exist."""
        path = _strip(path, "$var:")
        if self._value("GET", f"variables/exists/{_quoted(path)}"):
            self._value("POST", f"variables/update/{_quoted(path)}", {"value": value})
        else:
            self._value(
                "POST",
                "variables/create",
                {"path": path, "value": value, "is_secret": is_secret, "description": description},
            )

    def get_resource(self, path=None, none_if_undefined=False):
        """The resource's value with its $var:/$res: references resolved (default: the state)."""
        path = _strip(path, "$res:") if path else self.get_state_path()
        try:
            return self._value("GET", f"resources/get_value_interpolated/{_quoted(path)}")
        except MillraceError as error:
            if none_if_undefined and error.status == 404:
                return None
            raise MillraceError(
                error.status, f"Resource not found at {path} or not visible to you: {error.body}"
            ) from None

    def set_resource(self, value, path=None, resource_type="any"):
        """Updates the resource's value, or creates it with `resource_type` if it does not exist."""
        path = _strip(path, "$res:") if path else self.get_state_path()
        if self._value("GET", f"resources/exists/{_quoted(path)}"):
            self._value("POST", f"resources/update_value/{_quoted(path)}", {"value": value})
        else:
            self._value(
                "POST",
                "resources/create",
                {"path": path, "value": value, "resource_type": resource_type},
            )

    def get_state_path(self):
        path = _env("WM_STATE_PATH_NEW") or _env("WM_STATE_PATH")
        if not path:
            raise MillraceError(0, "state path not set (WM_STATE_PATH)")
        return path

    def get_state(self, path=None):
        """The state this script kept with set_state, or None on its first run."""
        return self.get_resource(path or self.get_state_path(), none_if_undefined=True)

    def set_state(self, value, path=None):
        self.set_resource(value, path or self.get_state_path(), resource_type="state")

    # ------------------------------------------------------------------ jobs

    def _run_params(self, scheduled_in_secs, track_parent=True):
        params = {}
        if scheduled_in_secs:
            params["scheduled_in_secs"] = int(scheduled_in_secs)
        if track_parent:
            params["parent_job"] = _env("WM_JOB_ID")
            params["root_job"] = _env("WM_ROOT_FLOW_JOB_ID")
        return params

    def run_script_async(self, path=None, hash_=None, args=None, scheduled_in_secs=None):
        """Starts the script (by path or by hash) and returns its job id."""
        if path and hash_:
            raise ValueError("path and hash_ are mutually exclusive")
        if not path and not hash_:
            raise ValueError("path or hash_ must be provided")
        route = f"jobs/run/p/{_quoted(path)}" if path else f"jobs/run/h/{_quoted(hash_)}"
        response = self.post(
            self._w(route), json=args or {}, params=self._run_params(scheduled_in_secs)
        )
        return response.text.strip().strip('"')

    def run_script_by_path_async(self, path, args=None, scheduled_in_secs=None):
        return self.run_script_async(path=path, args=args, scheduled_in_secs=scheduled_in_secs)

    def run_script_by_hash_async(self, hash_, args=None, scheduled_in_secs=None):
        return self.run_script_async(hash_=hash_, args=args, scheduled_in_secs=scheduled_in_secs)

    def run_flow_async(self, path, args=None, scheduled_in_secs=None, do_not_track_in_parent=True):
        response = self.post(
            self._w(f"jobs/run/f/{_quoted(path)}"),
            json=args or {},
            params=self._run_params(scheduled_in_secs, track_parent=not do_not_track_in_parent),
        )
        return response.text.strip().strip('"')

    def run_script(
        self,
        path=None,
        hash_=None,
        args=None,
        timeout=None,
        verbose=False,
        cleanup=True,
        assert_result_is_not_none=False,
    ):
        """Runs the script (by path or by hash), waits for it and returns its result."""
        if verbose:
            print(f"running `{path or hash_}` synchronously with args: {args}")
        job_id = self.run_script_async(path=path, hash_=hash_, args=args)
        return self.wait_job(job_id, timeout, verbose, cleanup, assert_result_is_not_none)

    def run_script_by_path(
        self, path, args=None, timeout=None, verbose=False, cleanup=True, assert_result_is_not_none=False
    ):
        return self.run_script(
            path=path,
            args=args,
            timeout=timeout,
            verbose=verbose,
            cleanup=cleanup,
            assert_result_is_not_none=assert_result_is_not_none,
        )

    def run_script_by_hash(
        self, hash_, args=None, timeout=None, verbose=False, cleanup=True, assert_result_is_not_none=False
    ):
        return self.run_script(
            hash_=hash_,
            args=args,
            timeout=timeout,
            verbose=verbose,
            cleanup=cleanup,
            assert_result_is_not_none=assert_result_is_not_none,
        )

    def run_script_sync(
        self, hash, args=None, verbose=False, assert_result_is_not_none=True, cleanup=True, timeout=None  # noqa: A002
    ):
        return self.run_script(
            hash_=hash,
            args=args,
            timeout=timeout,
            verbose=verbose,
            cleanup=cleanup,
            assert_result_is_not_none=assert_result_is_not_none,
        )

    def run_script_by_path_sync(
        self, path, args=None, verbose=False, assert_result_is_not_none=True, cleanup=True, timeout=None
    ):
        return self.run_script(
            path=path,
            args=args,
            timeout=timeout,
            verbose=verbose,
            cleanup=cleanup,
            assert_result_is_not_none=assert_result_is_not_none,
        )

    def _result_maybe(self, job_id):
        """{completed, success, result, started} of a job."""
        route = f"jobs_u/completed/get_result_maybe/{job_id}"
        response = self.get(self._w(route), raise_for_status=False)
        if response.is_success:
            return response.json()
        if response.status_code != 404:
            response.raise_for_status()
        # A server without get_result_maybe (or a job it does not know yet): read the job itself.
        job = self.get_job(job_id)
        completed = job.get("type") == "CompletedJob"
        return {
            "completed": completed,
            "started": completed or bool(job.get("running")),
            "success": bool(job.get("success")) if completed else None,
            "result": job.get("result") if completed else None,
        }

    def wait_job(self, job_id, timeout=None, verbose=False, cleanup=True, assert_result_is_not_none=False):
        """Waits for the job and returns its result; raises when it failed or `timeout` passed."""
        limit = _seconds(timeout)
        start = time.monotonic()
        if cleanup:
            self._pending.add(job_id)
        try:
            while True:
                state = self._result_maybe(job_id)
                if state.get("completed"):
                    result = state.get("result")
                    if not state.get("success"):
                        error = result.get("error") if isinstance(result, dict) else result
                        raise Exception(f"Job {job_id} was not successful: {json.dumps(error)}")
                    if assert_result_is_not_none and result is None:
                        raise Exception(f"Result of job {job_id} was None")
                    return result
                if limit is not None and time.monotonic() - start > limit:
                    if cleanup:
                        self.cancel_job(job_id, reason="timed out waiting for its result")
                    raise TimeoutError(f"Job {job_id} did not complete within {limit} seconds")
                if verbose:
                    print(f"job {job_id} {'running' if state.get('started') else 'not started yet'}")
                time.sleep(_POLL_SECONDS)
        finally:
            self._pending.discard(job_id)

    def _cancel_pending(self):
        for job_id in list(self._pending):
            try:
                self.cancel_job(job_id, reason="the job waiting for it ended")
            except Exception:  # noqa: BLE001 - best effort at exit
                pass

    def cancel_job(self, job_id, reason=None):
        return self.post(
            self._w(f"jobs_u/queue/cancel/{job_id}"), json={"reason": reason or "canceled via wmill"}
        ).text

    def cancel_running(self):
        """Cancels the other running jobs of this script; {job id: answer} for each."""
        if not self.path:
            raise MillraceError(0, "the script path is not set (WM_JOB_PATH)")
        jobs = []
        # Both those started on their own and those started by another job (a parent).
        for has_null_parent in ("true", "false"):
            jobs += self.get(
                self._w("jobs/queue/list"),
                params={"script_path_exact": self.path, "running": "true", "has_null_parent": has_null_parent},
            ).json() or []
        own = _env("WM_JOB_ID")
        canceled = {}
        for job in jobs:
            if job.get("id") and job["id"] != own:
                canceled[job["id"]] = self.cancel_job(job["id"], reason="canceled by cancel_running")
        return canceled

    def get_job(self, job_id):
        return self.get(self._w(f"jobs_u/get/{job_id}")).json()

    def get_job_status(self, job_id):
        """"RUNNING", "WAITING" (queued) or "COMPLETED"."""
        job = self.get_job(job_id)
        if job.get("type") == "CompletedJob":
            return "COMPLETED"
        return "RUNNING" if job.get("running") else "WAITING"

    def get_result(self, job_id, assert_result_is_not_none=True):
        result = self._value("GET", f"jobs_u/completed/get_result/{job_id}")
        if assert_result_is_not_none and result is None:
            raise Exception(f"Result of job {job_id} was None")
        return result

    def get_resume_urls(self, approver=None):
        """{approvalPage, resume, cancel}: the signed links that resume (or cancel) this flow step."""
        nonce = random.randint(0, 1_000_000_000)
        job_id = _env("WM_JOB_ID", "NO_JOB_ID")
        return self.get(
            self._w(f"jobs/resume_urls/{job_id}/{nonce}"), params={"approver": approver}
        ).json()

    # ------------------------------------------------------------------ object storage

    def load_s3_file(self, s3object, s3_resource_path=None):
        """The bytes of a file in the workspace's object storage (or in the s3 resource named)."""
        obj = _s3_object(s3object)
        params = {"file_key": obj.get("s3"), "storage": obj.get("storage"), "s3_resource_path": s3_resource_path}
        response = self._request("GET", self._w("job_helpers/download_s3_file"), params=params, timeout=300)
        return response.raise_for_status().content

    def load_s3_file_reader(self, s3object, s3_resource_path=None):
        """The file as a binary reader (io.BytesIO)."""
        import io

        return io.BytesIO(self.load_s3_file(s3object, s3_resource_path))

    def write_s3_file(
        self, s3object, file_content, s3_resource_path=None, content_type=None, content_disposition=None
    ):
        """Writes bytes, text or a binary reader to the object storage; answers its S3Object
        (a new key under windmill_uploads/ when `s3object` names none)."""
        obj = _s3_object(s3object)
        if isinstance(file_content, str):
            data = file_content.encode()
        elif isinstance(file_content, (bytes, bytearray)):
            data = bytes(file_content)
        else:
            data = file_content.read()
        params = {
            "file_key": obj.get("s3"),
            "storage": obj.get("storage"),
            "s3_resource_path": s3_resource_path,
            "content_type": content_type,
            "content_disposition": content_disposition,
        }
        response = self._request(
            "POST", self._w("job_helpers/upload_s3_file"), params=params, data=data, timeout=300
        )
        key = response.raise_for_status().json()["file_key"]
        return S3Object(s3=key, **({"storage": obj["storage"]} if obj.get("storage") else {}))

    def set_progress(self, value, job_id=None):
        """The job's progress in % (it cannot go back)."""
        flow_job_id = _env("WM_FLOW_JOB_ID")
        if job_id:
            flow_job_id = self.get_job(job_id).get("parent_job")
        self.post(
            self._w(f"job_metrics/set_progress/{job_id or _env('WM_JOB_ID', 'NO_JOB_ID')}"),
            json={"percent": int(value), "flow_job_id": flow_job_id or None},
        )

    def get_progress(self, job_id=None):
        return self._value("GET", f"job_metrics/get_progress/{job_id or _env('WM_JOB_ID', 'NO_JOB_ID')}")


_client = None


def get_client():
    """The job's own client (its WM_TOKEN, workspace and base URL)."""
    global _client
    if _client is None:
        _client = Windmill()
    return _client


def get_workspace():
    return get_client().get_workspace()


def get_version():
    return get_client().get_version()


def whoami():
    return get_client().whoami()


def username_to_email(username):
    return get_client().username_to_email(username)


def get_root_job_id(job_id=None):
    return get_client().get_root_job_id(job_id)


def get_variable(path):
    return get_client().get_variable(path)


def set_variable(path, value, is_secret=False, description=""):
    return get_client().set_variable(path, value, is_secret, description)


def get_resource(path=None, none_if_undefined=False):
    return get_client().get_resource(path, none_if_undefined)


def set_resource(path, value, resource_type="any"):
    """Windmill's module-level order: the path first, then the value."""
    return get_client().set_resource(value, path, resource_type)


def get_state_path():
    return get_client().get_state_path()


def get_state(path=None):
    return get_client().get_state(path)


def set_state(value, path=None):
    return get_client().set_state(value, path)


def run_script_async(path=None, hash_=None, args=None, scheduled_in_secs=None):
    return get_client().run_script_async(path, hash_, args, scheduled_in_secs)


def run_script_by_path_async(path, args=None, scheduled_in_secs=None):
    return get_client().run_script_by_path_async(path, args, scheduled_in_secs)


def run_script_by_hash_async(hash_, args=None, scheduled_in_secs=None):
    return get_client().run_script_by_hash_async(hash_, args, scheduled_in_secs)


def run_flow_async(path, args=None, scheduled_in_secs=None, do_not_track_in_parent=True):
    return get_client().run_flow_async(path, args, scheduled_in_secs, do_not_track_in_parent)


def run_script(
    path=None,
    hash_=None,
    args=None,
    timeout=None,
    verbose=False,
    cleanup=True,
    assert_result_is_not_none=False,
):
    return get_client().run_script(path, hash_, args, timeout, verbose, cleanup, assert_result_is_not_none)


def run_script_by_path(path, args=None, timeout=None, verbose=False, cleanup=True, assert_result_is_not_none=False):
    return get_client().run_script_by_path(path, args, timeout, verbose, cleanup, assert_result_is_not_none)


def run_script_by_hash(hash_, args=None, timeout=None, verbose=False, cleanup=True, assert_result_is_not_none=False):
    return get_client().run_script_by_hash(hash_, args, timeout, verbose, cleanup, assert_result_is_not_none)


def run_script_sync(hash, args=None, verbose=False, assert_result_is_not_none=True, cleanup=True, timeout=None):  # noqa: A002
    return get_client().run_script_sync(hash, args, verbose, assert_result_is_not_none, cleanup, timeout)


def run_script_by_path_sync(
    path, args=None, verbose=False, assert_result_is_not_none=True, cleanup=True, timeout=None
):
    return get_client().run_script_by_path_sync(path, args, verbose, assert_result_is_not_none, cleanup, timeout)


def wait_job(job_id, timeout=None, verbose=False, cleanup=True, assert_result_is_not_none=False):
    return get_client().wait_job(job_id, timeout, verbose, cleanup, assert_result_is_not_none)


def cancel_job(job_id, reason=None):
    return get_client().cancel_job(job_id, reason)


def cancel_running():
    return get_client().cancel_running()


def get_job(job_id):
    return get_client().get_job(job_id)


def get_job_status(job_id):
    return get_client().get_job_status(job_id)


def get_result(job_id, assert_result_is_not_none=True):
    return get_client().get_result(job_id, assert_result_is_not_none)


def get_resume_urls(approver=None):
    return get_client().get_resume_urls(approver)


def set_progress(value, job_id=None):
    return get_client().set_progress(value, job_id)


def get_progress(job_id=None):
    return get_client().get_progress(job_id)


def load_s3_file(s3object, s3_resource_path=None):
    return get_client().load_s3_file(s3object, s3_resource_path)


def load_s3_file_reader(s3object, s3_resource_path=None):
    return get_client().load_s3_file_reader(s3object, s3_resource_path)


def write_s3_file(s3object, file_content, s3_resource_path=None, content_type=None, content_disposition=None):
    return get_client().write_s3_file(s3object, file_content, s3_resource_path, content_type, content_disposition)
