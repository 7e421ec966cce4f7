"""The classes of ``IPython.display``, written small: each offers the ``_repr_*_`` methods
IPython's does, so it shows through Kiln's rich output. Nothing here reaches the network: an
object made from a URL says, in its text, that the URL was not fetched."""

import base64
import json
import os

from .display import DisplayHandle, clear_output, display, publish_display_data, update_display

__all__ = [
    "Code",
    "DisplayHandle",
    "DisplayObject",
    "FileLink",
    "FileLinks",
    "HTML",
    "Image",
    "JSON",
    "Javascript",
    "Latex",
    "Markdown",
    "Math",
    "Pretty",
    "ProgressBar",
    "SVG",
    "TextDisplayObject",
    "clear_output",
    "display",
    "publish_display_data",
    "update_display",
]

JAVASCRIPT_NOT_RUN = "JavaScript output is not run in Kiln"


def _not_fetched(url):
    return f"{url} (not fetched: Kiln does not download display data from a URL)"


class DisplayObject:
    """Data given directly, read from ``filename``, or named by ``url`` (never fetched)."""

    _read_flags = "r"

    def __init__(self, data=None, url=None, filename=None, metadata=None):
        if isinstance(data, str) and url is None and filename is None:
            if data.startswith(("http://", "https://")):
                url, data = data, None
            elif len(data) < 4096 and "\n" not in data and os.path.isfile(data):
                filename, data = data, None
        self.data = data
        self.url = url
        self.filename = filename
        self.metadata = metadata or {}
        if filename is not None and data is None:
            with open(filename, self._read_flags) as file:
                self.data = file.read()

    def _fetched(self):
        """Whether there is data to show (an object made from a URL has none)."""
        return self.data is not None

    def _repr_pretty_text(self):
        if not self._fetched() and self.url is not None:
            return f"<{type(self).__name__}: {_not_fetched(self.url)}>"
        return None

    def _repr_mimebundle_(self, include=None, exclude=None):
        text = self._repr_pretty_text()
        return {"text/plain": text} if text is not None else None


class TextDisplayObject(DisplayObject):
    """Text data: ``str`` (bytes are decoded as UTF-8)."""

    def __init__(self, data=None, url=None, filename=None, metadata=None):
        if isinstance(data, (bytes, bytearray)):
            data = bytes(data).decode("utf-8", "replace")
        super().__init__(data=data, url=url, filename=filename, metadata=metadata)


class Pretty(TextDisplayObject):
    def _repr_pretty_text(self):
        return super()._repr_pretty_text() or ("" if self.data is None else str(self.data))


class HTML(TextDisplayObject):
    def _repr_html_(self):
        return self.data


class Markdown(TextDisplayObject):
    def _repr_markdown_(self):
        return self.data


class Latex(TextDisplayObject):
    def _repr_latex_(self):
        return self.data


class Math(TextDisplayObject):
    """A formula: shown in display style, as IPython's."""

    def _repr_latex_(self):
        if self.data is None:
            return None
        return "$\\displaystyle " + str(self.data).strip().strip("$") + "$"


class SVG(DisplayObject):
    def __init__(self, data=None, url=None, filename=None, metadata=None):
        if isinstance(data, (bytes, bytearray)):
            data = bytes(data).decode("utf-8", "replace")
        super().__init__(data=data, url=url, filename=filename, metadata=metadata)

    def _repr_svg_(self):
        return self.data


class JSON(DisplayObject):
    """JSON data (a ``dict``, a ``list`` or JSON text), shown as a tree that folds."""

    def __init__(self, data=None, url=None, filename=None, expanded=False, metadata=None, root="root", **kwargs):
        if isinstance(data, (bytes, bytearray)):
            data = bytes(data).decode("utf-8")
        if isinstance(data, str) and url is None and filename is None and data.lstrip()[:1] in ("{", "["):
            data = json.loads(data)
        super().__init__(data=data, url=url, filename=filename, metadata=metadata)
        if isinstance(self.data, str):
            self.data = json.loads(self.data)
        self.expanded = expanded
        self.root = root

    def _repr_json_(self):
        return None if self.data is None else json.dumps(self.data, default=repr)


class Javascript(TextDisplayObject):
    """JavaScript is never run in Kiln: it is shown as text that says so."""

    def __init__(self, data=None, url=None, filename=None, lib=None, css=None):
        super().__init__(data=data, url=url, filename=filename)
        self.lib = lib
        self.css = css

    def _repr_javascript_(self):
        return self.data

    def _repr_pretty_text(self):
        code = self.data if self.data is not None else _not_fetched(self.url)
        return f"{JAVASCRIPT_NOT_RUN}:\n{code}"


class Code(TextDisplayObject):
    """Source code, shown as a fenced block of Markdown in ``language``."""

    def __init__(self, data=None, url=None, filename=None, language=None):
        super().__init__(data=data, url=url, filename=filename)
        self.language = language or ("python" if (filename or "").endswith(".py") else "")

    def _repr_markdown_(self):
        if self.data is None:
            return None
        fence = "```"
        while fence in self.data:
            fence += "`"
        return f"{fence}{self.language}\n{self.data}\n{fence}"

    def _repr_pretty_text(self):
        return super()._repr_pretty_text() or self.data


_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "png"),
    (b"\xff\xd8", "jpeg"),
    (b"GIF87a", "gif"),
    (b"GIF89a", "gif"),
)
_EXTENSIONS = {"png": "png", "jpg": "jpeg", "jpeg": "jpeg", "jpe": "jpeg", "gif": "gif", "svg": "svg"}


class Image(DisplayObject):
    """A PNG, JPEG, GIF or SVG image from bytes or a file. A URL is not fetched: its text says so."""

    _read_flags = "rb"

    def __init__(self, data=None, url=None, filename=None, format=None, embed=None, width=None, height=None, retina=False, unconfined=False, metadata=None, alt=None):
        if isinstance(data, str) and (data.startswith(("http://", "https://"))) and url is None:
            url, data = data, None
        if format is None:
            name = filename or url or (data if isinstance(data, str) else "")
            extension = name.rsplit(".", 1)[-1].lower() if "." in name[-6:] else ""
            format = _EXTENSIONS.get(extension)
        super().__init__(data=data, url=url, filename=filename, metadata=metadata)
        if isinstance(self.data, str):
            text = self.data.lstrip()
            self.data = text.encode("utf-8") if text.startswith("<") else base64.b64decode(self.data)
        if format is None and isinstance(self.data, (bytes, bytearray)):
            head = bytes(self.data[:16])
            format = next((kind for signature, kind in _SIGNATURES if head.startswith(signature)), None)
            if format is None and head.lstrip()[:1] == b"<":
                format = "svg"
        self.format = "jpeg" if format == "jpg" else format
        self.width, self.height, self.alt = width, height, alt

    def _repr_png_(self):
        return bytes(self.data) if self.format == "png" and self._fetched() else None

    def _repr_jpeg_(self):
        return bytes(self.data) if self.format == "jpeg" and self._fetched() else None

    def _repr_svg_(self):
        return bytes(self.data).decode("utf-8", "replace") if self.format == "svg" and self._fetched() else None

    def _repr_html_(self):
        if self.format != "gif" or not self._fetched():
            return None
        size = "".join(f' {key}="{int(value)}"' for key, value in (("width", self.width), ("height", self.height)) if value)
        return f'<img src="data:image/gif;base64,{base64.b64encode(bytes(self.data)).decode("ascii")}"{size}/>'

    def _repr_pretty_text(self):
        if self.url is not None and not self._fetched():
            return f"<Image: {_not_fetched(self.url)}>"
        if self._fetched() and self.format is None:
            return "<Image: not a PNG, JPEG, GIF or SVG image>"
        return None


class ProgressBar(DisplayObject):
    """A progress bar that updates in place while it is iterated over."""

    def __init__(self, total):
        self.data = self.url = self.filename = None
        self.total = total
        self._progress = 0
        self.html_width = "60ex"
        self.text_width = 60
        self._display_id = None

    @property
    def progress(self):
        return self._progress

    @progress.setter
    def progress(self, value):
        self._progress = value
        self.update()

    def display(self):
        self._display_id = display(self, display_id=True).display_id

    def update(self):
        if self._display_id is not None:
            update_display(self, display_id=self._display_id)

    def _repr_html_(self):
        return f"<progress style='width:{self.html_width}' max='{self.total}' value='{self.progress}'></progress>"

    def __repr__(self):
        fraction = self.progress / self.total if self.total else 1.0
        filled = round(fraction * self.text_width)
        return "[" + "=" * filled + " " * (self.text_width - filled) + "]"

    def __iter__(self):
        self.display()
        self._progress = -1
        return self

    def __next__(self):
        self.progress += 1
        if self.progress < self.total:
            return self.progress
        raise StopIteration()

    def __len__(self):
        return self.total


class FileLink:
    """A file of the working directory, named in text (it is in Kiln's Files panel)."""

    def __init__(self, path, url_prefix="", result_html_prefix="", result_html_suffix=""):
        self.path = os.fsdecode(path)

    def __repr__(self):
        if not os.path.isfile(self.path):
            return f"Path ({self.path}) doesn't exist. It may still be in the process of being generated, or you may have the incorrect path."
        return f"{self.path} (in the Files panel)"


class FileLinks(FileLink):
    """The files under a folder, named in text."""

    def __repr__(self):
        if not os.path.isdir(self.path):
            return f"Path ({self.path}) doesn't exist or is not a folder."
        lines = [f"{self.path}/"]
        for root, _dirs, files in os.walk(self.path):
            for name in sorted(files):
                lines.append("  " + os.path.relpath(os.path.join(root, name), self.path))
        return "\n".join(lines)


for _cls in (DisplayObject, TextDisplayObject, Pretty, HTML, Markdown, Latex, Math, SVG, JSON, Javascript, Code, Image, ProgressBar, FileLink, FileLinks):
    _cls.__module__ = "IPython.core.display"
