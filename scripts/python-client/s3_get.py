"""Plain S3 GETs signed with AWS Signature Version 4, with the standard library only.

The check asks the store itself what a vended credential opens, with nothing but the options the
catalog handed out (endpoint, region, key, secret, session token): no AWS SDK is installed.
"""

import datetime
import hashlib
import hmac
import urllib.error
import urllib.parse
import urllib.request

EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


def _quote(value, safe="-_.~"):
    return urllib.parse.quote(value, safe=safe)


def _hmac(key, text):
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def s3_get(options, bucket, key="", query=None):
    """GET /bucket/key?query with the credentials in `options` (Lance storage options): (status, body)."""
    endpoint = urllib.parse.urlsplit(options["aws_endpoint"])
    region = options.get("aws_region", "us-east-1")
    path = "/" + _quote(bucket) + ("/" + _quote(key, safe="-_.~/") if key else "")
    query = sorted((query or {}).items())
    canonical_query = "&".join(f"{_quote(k)}={_quote(v)}" for k, v in query)
    now = datetime.datetime.now(datetime.timezone.utc)
    amz_date, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
    headers = {"host": endpoint.netloc, "x-amz-content-sha256": EMPTY_SHA256, "x-amz-date": amz_date}
    if options.get("aws_session_token"):
        headers["x-amz-security-token"] = options["aws_session_token"]
    signed = ";".join(sorted(headers))
    canonical = "\n".join(
        ["GET", path, canonical_query, "".join(f"{h}:{headers[h]}\n" for h in sorted(headers)), signed, EMPTY_SHA256]
    )
    scope = f"{day}/{region}/s3/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    signing_key = _hmac(_hmac(_hmac(_hmac(("AWS4" + options["aws_secret_access_key"]).encode(), day), region), "s3"), "aws4_request")
    signature = hmac.new(signing_key, to_sign.encode(), hashlib.sha256).hexdigest()
    headers["authorization"] = (
        f"AWS4-HMAC-SHA256 Credential={options['aws_access_key_id']}/{scope}, SignedHeaders={signed}, Signature={signature}"
    )
    url = f"{endpoint.scheme}://{endpoint.netloc}{path}" + (f"?{canonical_query}" if canonical_query else "")
    request = urllib.request.Request(url, headers={k: v for k, v in headers.items() if k != "host"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read()


def list_keys(options, bucket, prefix):
    """ListObjectsV2 of `prefix`: (status, keys)."""
    import xml.etree.ElementTree as ET

    status, body = s3_get(options, bucket, query={"list-type": "2", "prefix": prefix})
    if status != 200:
        return status, []
    ns = {"s3": "http://s3.amazonaws.com/doc/2006-03-01/"}
    return status, [k.text for k in ET.fromstring(body).findall("s3:Contents/s3:Key", ns)]
