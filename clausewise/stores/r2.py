"""Cloudflare R2 backend (the S3 API through boto3): one object per path, conditional PutObject for
compare-and-swap.

Only imported by :func:`clausewise.stores.open_stores` when R2 settings are present, so boto3 is not
loaded by ``import clausewise.stores``; it is imported here, lazily, when a store is opened.

Transient failures (throttling, 5xx, dropped connections) are retried by botocore's standard retry
mode; what is left after the retries becomes a :class:`StoreError` that says what went wrong.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from clausewise.stores.base import LEASE_TTL_S, LOCK_TIMEOUT_S, Lease, StoreError

_CREDENTIAL_CODES = {
    "InvalidAccessKeyId",
    "SignatureDoesNotMatch",
    "AccessDenied",
    "InvalidToken",
    "ExpiredToken",
    "InvalidClientTokenId",
    "Unauthorized",
    "403",
    "401",
}
_MISSING_BUCKET_CODES = {"NoSuchBucket"}
_ABSENT_KEY_CODES = {"NoSuchKey", "404", "NotFound"}
_LOST_RACE_CODES = {"PreconditionFailed", "ConditionalRequestConflict", "412", "409"}
DELETE_BATCH = 1000  # DeleteObjects takes at most 1000 keys
LIST_PAGE_SIZE = 1000  # ListObjectsV2 returns at most 1000 keys a page


def _error_code(exc: Any) -> tuple[str, int | None]:
    response = getattr(exc, "response", None) or {}
    code = str((response.get("Error") or {}).get("Code") or "")
    status = (response.get("ResponseMetadata") or {}).get("HTTPStatusCode")
    return code, status


class R2Blobs:
    """:class:`clausewise.stores.base.Blobs` over an R2 (or any S3-compatible) bucket.

    ``max_attempts`` is botocore's retry setting (retries after the first attempt, standard mode);
    ``prefix`` scopes the store to one folder of the bucket. The bucket is checked on construction.
    """

    def __init__(
        self,
        endpoint_url: str,
        access_key_id: str,
        secret_access_key: str,
        bucket: str,
        prefix: str = "",
        *,
        max_attempts: int = 5,
        connect_timeout: float = 5,
        read_timeout: float = 30,
        region_name: str = "auto",
        lease_ttl_s: float = LEASE_TTL_S,
    ):
        import boto3
        from botocore.config import Config

        self.endpoint_url, self.bucket, self.lease_ttl_s = endpoint_url, bucket, lease_ttl_s
        prefix = prefix.strip("/")
        self.prefix = prefix + "/" if prefix else ""
        config = Config(
            retries={"max_attempts": max_attempts, "mode": "standard"},
            connect_timeout=connect_timeout,
            read_timeout=read_timeout,
            signature_version="s3v4",
            s3={"addressing_style": "path"},
        )
        try:
            self._s3 = boto3.session.Session().client(
                "s3",
                endpoint_url=endpoint_url,
                aws_access_key_id=access_key_id,
                aws_secret_access_key=secret_access_key,
                region_name=region_name,
                config=config,
            )
        except Exception as exc:  # noqa: BLE001 - e.g. a malformed endpoint URL
            raise StoreError(f"cannot open R2 bucket {bucket} at {endpoint_url}: {exc}") from exc
        self._call("check the bucket", "", self._s3.head_bucket, Bucket=bucket)

    @property
    def local_root(self) -> None:
        return None

    def describe(self) -> str:
        where = f" (prefix {self.prefix})" if self.prefix else ""
        return f"R2 bucket {self.bucket} at {self.endpoint_url}{where}"

    # ---- helpers ----
    def _key(self, path: str) -> str:
        if path.startswith("/") or ".." in path.split("/"):
            raise StoreError(f"refusing store path {path!r}")
        return self.prefix + path

    def _error(self, exc: Exception, action: str, path: str) -> StoreError:
        from botocore.exceptions import (
            ClientError,
            ConnectionClosedError,
            ConnectTimeoutError,
            EndpointConnectionError,
            NoCredentialsError,
            ReadTimeoutError,
        )

        what = f"{action} {path}".rstrip() + f" in R2 bucket {self.bucket} at {self.endpoint_url}"
        if isinstance(exc, EndpointConnectionError | ConnectTimeoutError):
            return StoreError(f"cannot {what}: the R2 endpoint is unreachable (gave up after retries)")
        if isinstance(exc, ReadTimeoutError | ConnectionClosedError):
            return StoreError(f"cannot {what}: the R2 endpoint stopped answering (gave up after retries)")
        if isinstance(exc, NoCredentialsError):
            return StoreError(f"cannot {what}: no R2 credentials (set R2_ACCESS_KEY_ID and R2_SECRET_ACCESS_KEY)")
        if isinstance(exc, ClientError):
            code, status = _error_code(exc)
            if code in _MISSING_BUCKET_CODES or (action == "check the bucket" and status == 404):
                return StoreError(f"R2 bucket {self.bucket} does not exist at {self.endpoint_url}")
            if code in _CREDENTIAL_CODES or status in (401, 403):
                return StoreError(
                    f"cannot {what}: R2 rejected the credentials ({code or status}); "
                    "check R2_ACCESS_KEY_ID and R2_SECRET_ACCESS_KEY and the token's access to the bucket"
                )
            message = (exc.response.get("Error") or {}).get("Message") or ""
            return StoreError(f"cannot {what}: {code or status} {message}".rstrip())
        return StoreError(f"cannot {what}: {exc}")

    def _call(self, action: str, path: str, method: Any, **kwargs: Any) -> Any:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return method(**kwargs)
        except (ClientError, BotoCoreError) as exc:
            raise self._error(exc, action, path) from exc

    def _keys(self, prefix: str) -> list[str]:
        """Full object keys under ``prefix`` (a folder, or one object), as :meth:`list` scopes them."""
        full = self._key(prefix) if prefix else self.prefix
        folder = full if not full or full.endswith("/") else full + "/"
        keys: list[str] = []
        paginator = self._s3.get_paginator("list_objects_v2")
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            for page in paginator.paginate(
                Bucket=self.bucket, Prefix=full, PaginationConfig={"PageSize": LIST_PAGE_SIZE}
            ):
                for obj in page.get("Contents") or []:
                    key = obj["Key"]
                    if key == full or key.startswith(folder):
                        keys.append(key)
        except (ClientError, BotoCoreError) as exc:
            raise self._error(exc, "list", prefix) from exc
        return keys

    # ---- Blobs ----
    def read(self, path: str) -> tuple[bytes, str] | None:
        from botocore.exceptions import BotoCoreError, ClientError

        key = self._key(path)
        try:
            got = self._s3.get_object(Bucket=self.bucket, Key=key)
            data = got["Body"].read()
        except ClientError as exc:
            if _error_code(exc)[0] in _ABSENT_KEY_CODES:
                return None
            raise self._error(exc, "read", path) from exc
        except BotoCoreError as exc:
            raise self._error(exc, "read", path) from exc
        return data, str(got["ETag"])

    def write(self, path: str, data: bytes) -> None:
        self._call("write", path, self._s3.put_object, Bucket=self.bucket, Key=self._key(path), Body=data)

    def write_if(self, path: str, data: bytes, etag: str | None) -> bool:
        from botocore.exceptions import BotoCoreError, ClientError

        condition = {"IfNoneMatch": "*"} if etag is None else {"IfMatch": etag}
        try:
            self._s3.put_object(Bucket=self.bucket, Key=self._key(path), Body=data, **condition)
        except ClientError as exc:
            code, status = _error_code(exc)
            if code in _LOST_RACE_CODES or status in (409, 412):
                return False
            if etag is not None and (code in _ABSENT_KEY_CODES or status == 404) and code != "NoSuchBucket":
                return False  # an etag never matches an absent entry
            raise self._error(exc, "write", path) from exc
        except BotoCoreError as exc:
            raise self._error(exc, "write", path) from exc
        return True

    def delete(self, path: str) -> None:
        self._call("delete", path, self._s3.delete_object, Bucket=self.bucket, Key=self._key(path))

    def delete_prefix(self, prefix: str) -> None:
        keys = self._keys(prefix)
        for start in range(0, len(keys), DELETE_BATCH):
            batch = [{"Key": k} for k in keys[start : start + DELETE_BATCH]]
            got = self._call(
                "delete under",
                prefix,
                self._s3.delete_objects,
                Bucket=self.bucket,
                Delete={"Objects": batch, "Quiet": True},
            )
            errors = got.get("Errors") or []
            if errors:
                first = errors[0]
                raise StoreError(
                    f"cannot delete {first.get('Key')} in R2 bucket {self.bucket}: "
                    f"{first.get('Code')} {first.get('Message') or ''}".rstrip()
                    + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else "")
                )

    def list_dirs(self, prefix: str) -> list[str]:
        full = self._key(prefix) if prefix else self.prefix
        if full and not full.endswith("/"):
            full += "/"
        names: list[str] = []
        paginator = self._s3.get_paginator("list_objects_v2")
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            for page in paginator.paginate(
                Bucket=self.bucket, Prefix=full, Delimiter="/", PaginationConfig={"PageSize": LIST_PAGE_SIZE}
            ):
                names.extend(cp["Prefix"][len(full) :].rstrip("/") for cp in page.get("CommonPrefixes") or [])
        except (ClientError, BotoCoreError) as exc:
            raise self._error(exc, "list", prefix) from exc
        return sorted(n for n in names if n)

    def list(self, prefix: str) -> list[str]:
        return sorted(key[len(self.prefix) :] for key in self._keys(prefix))

    @contextmanager
    def lock(self, path: str, timeout_s: float = LOCK_TIMEOUT_S) -> Iterator[None]:
        """A lease object at ``path`` (conditional writes, renewed while held, taken over once expired:
        a dead holder blocks for at most ``lease_ttl_s``)."""
        with Lease(self, path, ttl_s=self.lease_ttl_s).held(timeout_s):
            yield
