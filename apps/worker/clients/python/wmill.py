"""A small Python client for calling Millrace back from a python3 job, shaped like Windmill's
`wmill` module: get_variable, set_variable, get_resource, set_resource, get_state, set_state.

It reads what the worker gives every job: WM_TOKEN, BASE_INTERNAL_URL, WM_WORKSPACE and
WM_STATE_PATH. Standard library only, so it works in any job without installing anything.
"""

import json
import os
import urllib.error
import urllib.parse
import urllib.request

__all__ = [
    "MillraceError",
    "get_workspace",
    "get_state_path",
    "get_variable",
    "set_variable",
    "get_resource",
    "set_resource",
    "get_state",
    "set_state",
]


class MillraceError(Exception):
    """An API call failed; `status` is the HTTP status (0 when the server was unreachable)."""

    def __init__(self, status, message):
        super().__init__(f"{status}: {message}")
        self.status = status


def get_workspace():
    return os.environ.get("WM_WORKSPACE", "")


def get_state_path():
    path = os.environ.get("WM_STATE_PATH_NEW") or os.environ.get("WM_STATE_PATH")
    if not path:
        raise MillraceError(0, "state path not set (WM_STATE_PATH)")
    return path


def _strip(path, prefix):
    return path[len(prefix):] if path.startswith(prefix) else path


def _call(method, route, body=None):
    base = os.environ.get("BASE_INTERNAL_URL") or os.environ.get("BASE_URL") or "http://localhost:8000"
    url = f"{base}/api/w/{urllib.parse.quote(get_workspace())}/{route}"
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Authorization", f"Bearer {os.environ.get('WM_TOKEN', '')}")
    request.add_header("Accept", "application/json")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            text = response.read().decode()
            if "application/json" in response.headers.get("Content-Type", ""):
                return json.loads(text) if text else None
            return text
    except urllib.error.HTTPError as error:
        raise MillraceError(error.code, error.read().decode(errors="replace")) from None
    except urllib.error.URLError as error:
        raise MillraceError(0, str(error.reason)) from None


def _quoted(path):
    return urllib.parse.quote(path, safe="/")


def get_variable(path):
    """The variable's value (secrets decrypted, which the server audits)."""
    path = _strip(path, "$var:")
    return _call("GET", f"variables/get_value/{_quoted(path)}")


def set_variable(path, value, is_secret=False, description=""):
    """Updates the variable, or creates it (as secret when `is_secret`) if it does not exist."""
    path = _strip(path, "$var:")
    if _call("GET", f"variables/exists/{_quoted(path)}"):
        _call("POST", f"variables/update/{_quoted(path)}", {"value": value})
    else:
        _call(
            "POST",
            "variables/create",
            {"path": path, "value": value, "is_secret": is_secret, "description": description},
        )


def get_resource(path=None, none_if_undefined=False):
    """The resource's value with its $var:/$res: references resolved; defaults to the state path."""
    path = _strip(path, "$res:") if path else get_state_path()
    try:
        return _call("GET", f"resources/get_value_interpolated/{_quoted(path)}")
    except MillraceError as error:
        if none_if_undefined and error.status == 404:
            return None
        raise


def set_resource(value, path=None, resource_type="any"):
    """Updates the resource's value, or creates it with `resource_type` if it does not exist."""
    path = _strip(path, "$res:") if path else get_state_path()
    if _call("GET", f"resources/exists/{_quoted(path)}"):
        _call("POST", f"resources/update_value/{_quoted(path)}", {"value": value})
    else:
        _call("POST", "resources/create", {"path": path, "value": value, "resource_type": resource_type})


def get_state():
    """The state this script kept with set_state, or None on its first run."""
    return get_resource(None, none_if_undefined=True)


def set_state(value):
    set_resource(value, None, resource_type="state")
