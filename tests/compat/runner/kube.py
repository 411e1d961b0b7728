"""A small Kubernetes API client for one control plane of hack/control-plane.sh: HTTPS to
127.0.0.1 with the admin client certificate, discovery of resource names, and the verbs the
runner needs. Errors come back as values (ApiError), never as exceptions from a verb."""
import http.client
import json
import os
import ssl
import threading
import time
import urllib.parse


class ApiError:
    """A refused or failed request: HTTP status, reason and the server's message."""

    def __init__(self, status, reason, message):
        self.status, self.reason, self.message = status, reason, message

    def __bool__(self):
        return False

    def __repr__(self):
        return f"{self.status} {self.reason}: {self.message}"


def parse_env(text):
    """The `export K=V` lines of `hack/control-plane.sh env` as a dict."""
    env = {}
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("export ") and "=" in line:
            key, value = line[len("export "):].split("=", 1)
            env[key] = value
    return env


class Cluster:
    """One control plane. Thread-safe: each thread gets its own keep-alive connection."""

    def __init__(self, env):
        self.env = env
        self.dir = env["TEPHRA_CP_DIR"]
        url = urllib.parse.urlparse(env["TEPHRA_APISERVER"])
        if url.hostname != "127.0.0.1":
            raise ValueError(f"the API server must be on 127.0.0.1, not {url.hostname}")
        self.host, self.port = url.hostname, url.port
        self.ssl = ssl.create_default_context(cafile=env["TEPHRA_CA_FILE"])
        pki = os.path.join(self.dir, "pki")
        self.ssl.load_cert_chain(os.path.join(pki, "admin.crt"), os.path.join(pki, "admin.key"))
        self.local = threading.local()
        self.resources = {}  # (apiVersion, kind) -> (plural, namespaced)
        self.verbs = {}  # (apiVersion, kind) -> verbs
        self.discovered = False

    def _connection(self):
        conn = getattr(self.local, "conn", None)
        if conn is None:
            # Generous: deleting a few hundred pods at once takes a while on a loaded machine.
            conn = http.client.HTTPSConnection(self.host, self.port, context=self.ssl, timeout=120)
            self.local.conn = conn
        return conn

    def request(self, method, path, body=None, content_type="application/json"):
        """(status, decoded JSON or text). Retries once on a dropped keep-alive connection."""
        data = None if body is None else (body if isinstance(body, (bytes, str)) else json.dumps(body))
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = content_type
        for attempt in range(3):
            conn = self._connection()
            try:
                conn.request(method, path, body=data, headers=headers)
                resp = conn.getresponse()
                raw = resp.read()
                break
            except (OSError, http.client.HTTPException):
                conn.close()
                self.local.conn = None
                if attempt == 2:
                    raise
                time.sleep(0.2)
        try:
            payload = json.loads(raw) if raw else {}
        except ValueError:
            payload = raw.decode(errors="replace")
        return resp.status, payload

    # ---- discovery -------------------------------------------------------------------------

    def refresh_discovery(self):
        resources, verbs = {}, {}
        groups = [("", "v1", "/api/v1")]
        status, apis = self.request("GET", "/apis")
        if status == 200:
            for g in apis.get("groups", []):
                for v in g.get("versions", []):
                    groups.append((g["name"], v["version"], f"/apis/{v['groupVersion']}"))
        for group, version, path in groups:
            status, lst = self.request("GET", path)
            if status != 200:
                continue
            api_version = f"{group}/{version}" if group else version
            for r in lst.get("resources", []):
                if "/" in r["name"]:
                    continue
                resources[(api_version, r["kind"])] = (r["name"], r["namespaced"])
                verbs[(api_version, r["kind"])] = set(r.get("verbs") or ())
        self.resources = resources
        self.verbs = verbs
        self.discovered = True

    def resource(self, api_version, kind):
        """(plural, namespaced) or None. Discovery runs once; after applying a CRD call
        refresh_discovery()."""
        key = (api_version, kind)
        if not self.discovered:
            self.refresh_discovery()
        return self.resources.get(key)

    def path(self, api_version, kind, namespace=None, name=None, subresource=None):
        found = self.resource(api_version, kind)
        if found is None:
            return None
        plural, namespaced = found
        base = f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"
        parts = [base]
        if namespaced and namespace:
            parts.append(f"namespaces/{namespace}")
        parts.append(plural)
        if name:
            parts.append(urllib.parse.quote(name))
        if subresource:
            parts.append(subresource)
        return "/".join(parts)

    # ---- verbs -----------------------------------------------------------------------------

    @staticmethod
    def _result(status, payload, ok=(200, 201, 202)):
        if status in ok:
            return payload
        if isinstance(payload, dict):
            return ApiError(status, payload.get("reason", ""), payload.get("message", str(payload)))
        return ApiError(status, "", str(payload))

    def _path_or_error(self, api_version, kind, namespace=None, name=None, subresource=None):
        p = self.path(api_version, kind, namespace, name, subresource)
        if p is None:
            return None, ApiError(404, "NotFound", f"the server has no resource for {api_version} {kind}")
        return p, None

    def create(self, obj):
        meta = obj.get("metadata", {})
        p, err = self._path_or_error(obj["apiVersion"], obj["kind"], meta.get("namespace"))
        if err:
            return err
        return self._result(*self.request("POST", p, obj))

    def replace(self, obj):
        meta = obj.get("metadata", {})
        p, err = self._path_or_error(obj["apiVersion"], obj["kind"], meta.get("namespace"), meta["name"])
        if err:
            return err
        return self._result(*self.request("PUT", p, obj))

    def get(self, api_version, kind, namespace, name):
        p, err = self._path_or_error(api_version, kind, namespace, name)
        if err:
            return err
        return self._result(*self.request("GET", p))

    def list(self, api_version, kind, namespace=None, selector=None):
        """The items, or ApiError. Unknown kinds (CRD not installed) list as empty."""
        if self.resource(api_version, kind) is None:
            return []
        p = self.path(api_version, kind, namespace)
        if selector:
            p += "?labelSelector=" + urllib.parse.quote(selector)
        got = self._result(*self.request("GET", p))
        return got.get("items", []) if got else got

    def patch(self, api_version, kind, namespace, name, patch, patch_type="merge", subresource=None):
        p, err = self._path_or_error(api_version, kind, namespace, name, subresource)
        if err:
            return err
        types = {"merge": "application/merge-patch+json",
                 "strategic": "application/strategic-merge-patch+json",
                 "json": "application/json-patch+json"}
        return self._result(*self.request("PATCH", p, patch, content_type=types[patch_type]))

    def delete(self, api_version, kind, namespace, name, grace=None, propagation="Background"):
        p, err = self._path_or_error(api_version, kind, namespace, name)
        if err:
            return err
        body = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": propagation}
        if grace is not None:
            body["gracePeriodSeconds"] = grace
        return self._result(*self.request("DELETE", p, body))

    def delete_collection(self, api_version, kind, namespace):
        p, err = self._path_or_error(api_version, kind, namespace)
        if err:
            return err
        body = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background",
                "gracePeriodSeconds": 0}
        return self._result(*self.request("DELETE", p, body))

    def namespaced_kinds(self, verb):
        """(apiVersion, kind) of every namespaced resource that supports `verb`."""
        if not self.discovered:
            self.refresh_discovery()
        return [k for k, (_, namespaced) in self.resources.items()
                if namespaced and verb in self.verbs.get(k, ())]

    def healthy(self):
        try:
            status, _ = self.request("GET", "/readyz")
            return status == 200
        except OSError:
            return False
