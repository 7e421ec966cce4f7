"""A tiny stand-in for PyTorch, as preinstalled in the code execution sandbox.

Enough for tests to import it, read its version and do simple arithmetic on a
one- or two-dimensional tensor of numbers. It is not PyTorch.
"""

__version__ = "2.9.0+cpu"

__all__ = ["Tensor", "tensor", "zeros", "ones", "arange", "cuda", "__version__"]


def _format(value, floats):
    if isinstance(value, list):
        return "[" + ", ".join(_format(item, floats) for item in value) + "]"
    if floats:
        return f"{float(value):.4f}".rstrip("0")
    return str(value)


def _flat(value):
    if isinstance(value, list):
        for item in value:
            yield from _flat(item)
    else:
        yield value


def _map(value, fn):
    return [_map(item, fn) for item in value] if isinstance(value, list) else fn(value)


def _zip(a, b, fn):
    if isinstance(a, list):
        return [_zip(x, y, fn) for x, y in zip(a, b)]
    return fn(a, b)


class Tensor:
    def __init__(self, data):
        if isinstance(data, Tensor):
            data = data.tolist()
        if isinstance(data, tuple):
            data = list(data)
        self._data = _map(data, lambda x: x) if isinstance(data, list) else data

    @property
    def shape(self):
        dims = []
        value = self._data
        while isinstance(value, list):
            dims.append(len(value))
            value = value[0] if value else None
        return tuple(dims)

    @property
    def dtype(self):
        return "torch.float32" if self._floats() else "torch.int64"

    def _floats(self):
        return any(isinstance(x, float) for x in _flat(self._data))

    def tolist(self):
        return _map(self._data, lambda x: x)

    def item(self):
        values = list(_flat(self._data))
        if len(values) != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return values[0]

    def sum(self):
        return Tensor(sum(_flat(self._data)))

    def mean(self):
        values = [float(x) for x in _flat(self._data)]
        return Tensor(sum(values) / len(values))

    def _apply(self, other, fn):
        if isinstance(other, Tensor):
            return Tensor(_zip(self._data, other._data, fn))
        return Tensor(_map(self._data, lambda x: fn(x, other)))

    def __add__(self, other):
        return self._apply(other, lambda a, b: a + b)

    __radd__ = __add__

    def __sub__(self, other):
        return self._apply(other, lambda a, b: a - b)

    def __mul__(self, other):
        return self._apply(other, lambda a, b: a * b)

    __rmul__ = __mul__

    def __truediv__(self, other):
        return self._apply(other, lambda a, b: a / b)

    def __len__(self):
        return len(self._data) if isinstance(self._data, list) else 0

    def __eq__(self, other):
        other_data = other._data if isinstance(other, Tensor) else other
        return self._data == other_data

    def __repr__(self):
        return f"tensor({_format(self._data, self._floats())})"


def tensor(data):
    return Tensor(data)


def zeros(n):
    return Tensor([0.0] * n)


def ones(n):
    return Tensor([1.0] * n)


def arange(n):
    return Tensor(list(range(n)))


class _Cuda:
    @staticmethod
    def is_available():
        return False

    @staticmethod
    def device_count():
        return 0


cuda = _Cuda()
