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
    # Shown as text that says it was not run: the page never runs it.
    ("application/javascript", "_repr_javascript_"),
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


def _bundle_of(obj, raw):
    if not (raw and isinstance(obj, dict)):
        return format_bundle(obj)
    bundle = {}
    for mime, data in obj.items():
        encoded = _encode(mime, data)
        if encoded is not None:
            bundle[mime] = encoded
    return bundle


def _new_display_id():
    import uuid

    return uuid.uuid4().hex


def display(*objs, include=None, exclude=None, metadata=None, transient=None, display_id=None, raw=False, clear=False, **kwargs):
    """Show each object in the output, as IPython's ``display`` does.

    With ``raw=True`` each object is already a mime bundle (``{mime: data}``). With a
    ``display_id`` (``True`` makes a new one) the outputs can be replaced later through the
    returned :class:`DisplayHandle` or :func:`update_display`; ``clear=True`` clears the output
    first, when the first of them arrives (as ``clear_output(wait=True)``). ``include``,
    ``exclude`` and ``metadata`` are accepted and ignored, as are other keyword arguments.
    """
    if transient and isinstance(transient, dict) and display_id is None:
        display_id = transient.get("display_id")
    if display_id is True:
        display_id = _new_display_id()
    if clear:
        clear_output(wait=True)
    for obj in objs:
        bundle = _bundle_of(obj, raw)
        if display_id is None:
            publish(bundle)
        else:
            _publish_with_id(bundle, str(display_id), update=False)
    if display_id is not None:
        return DisplayHandle(display_id)
    return None


def _publish_with_id(bundle, display_id, update):
    from .hooks import flush_std_streams

    flush_std_streams()
    emit("display_id", {"id": display_id, "data": bundle, "update": update})


def update_display(obj, *, display_id, raw=False, **kwargs):
    """Replace the outputs shown with ``display_id`` (in this run's output) by ``obj``."""
    _publish_with_id(_bundle_of(obj, raw), str(display_id), update=True)


def publish_display_data(data, metadata=None, source=None, *, transient=None, **kwargs):
    """Show a ready-made mime bundle, as IPython's function of that name does."""
    display_id = transient.get("display_id") if isinstance(transient, dict) else None
    if kwargs.get("update") and display_id is not None:
        _publish_with_id(_bundle_of(data, True), str(display_id), update=True)
    else:
        display(data, raw=True, display_id=display_id)


def clear_output(wait=False):
    """Clear this run's output so far; with ``wait=True``, only when the next output arrives
    (a loop that redraws then does not flicker)."""
    from .hooks import flush_std_streams

    flush_std_streams()
    emit("clear", {"wait": bool(wait)})


class DisplayHandle:
    """A handle on a display that can be updated in place, as IPython's."""

    def __init__(self, display_id=None):
        self.display_id = _new_display_id() if display_id is None else display_id

    def __repr__(self):
        return f"<{type(self).__name__} display_id={self.display_id}>"

    def display(self, obj, **kwargs):
        display(obj, display_id=self.display_id, **kwargs)

    def update(self, obj, **kwargs):
        update_display(obj, display_id=self.display_id, **kwargs)
