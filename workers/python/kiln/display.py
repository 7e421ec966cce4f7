"""Rich output following IPython's display protocol: ``_repr_*_`` methods to a mime bundle."""

import base64
import json

from .hooks import emit

# (mime type, method name), in the order IPython prefers them.
_REPR_METHODS = (
    ("image/png", "_repr_png_"),
    ("image/jpeg", "_repr_jpeg_"),
    ("image/svg+xml", "_repr_svg_"),
    ("text/html", "_repr_html_"),
    ("text/markdown", "_repr_markdown_"),
    ("text/latex", "_repr_latex_"),
    ("application/json", "_repr_json_"),
)

_BINARY = {"image/png", "image/jpeg"}


def _encode(mime, data):
    """Mime bundles cross to the page as JSON: binary images as base64, JSON as text."""
    if isinstance(data, tuple):  # (data, metadata) form
        data = data[0]
    if data is None:
        return None
    if mime in _BINARY:
        if isinstance(data, (bytes, bytearray, memoryview)):
            return base64.b64encode(bytes(data)).decode("ascii")
        return str(data)
    if mime == "application/json":
        return data if isinstance(data, str) else json.dumps(data, default=repr)
    if isinstance(data, (bytes, bytearray)):
        return bytes(data).decode("utf-8", "replace")
    return str(data)


def _call_repr(obj, method):
    fn = getattr(obj, method, None)
    if fn is None or not callable(fn):
        return None
    # Classes have the methods unbound; only instances are displayed richly.
    if isinstance(obj, type):
        return None
    try:
        return fn()
    except Exception as exc:  # a broken _repr_ must not break the run
        return None if method != "_repr_html_" else f"<pre>{type(exc).__name__} in {method}</pre>"


def format_bundle(obj):
    """Return ``{mime: str}`` for ``obj``; ``text/plain`` is always present."""
    bundle = {}
    mimebundle = _call_repr(obj, "_repr_mimebundle_")
    if isinstance(mimebundle, tuple):
        mimebundle = mimebundle[0]
    if isinstance(mimebundle, dict):
        for mime, data in mimebundle.items():
            encoded = _encode(mime, data)
            if encoded is not None:
                bundle[mime] = encoded
    for mime, method in _REPR_METHODS:
        if mime in bundle:
            continue
        encoded = _encode(mime, _call_repr(obj, method))
        if encoded is not None:
            bundle[mime] = encoded
    if "text/plain" not in bundle:
        try:
            bundle["text/plain"] = repr(obj)
        except Exception as exc:
            bundle["text/plain"] = f"<unrepresentable {type(obj).__name__}: {exc}>"
    return bundle


def publish(bundle):
    """Send a ready-made mime bundle to the page, after any output printed before it."""
    from .hooks import flush_std_streams

    flush_std_streams()
    emit("display", bundle)


def display(*objs, raw=False):
    """Show each object in the output, as IPython's ``display`` does.

    With ``raw=True`` each object is already a mime bundle (``{mime: data}``).
    """
    for obj in objs:
        if raw and isinstance(obj, dict):
            publish({mime: _encode(mime, data) for mime, data in obj.items()})
        else:
            publish(format_bundle(obj))
