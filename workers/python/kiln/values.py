"""How a captured value travels between interpreters.

Values travel without needless copies inside the 4 GiB WebAssembly heap: a top-level ``bytes``
or ``bytearray`` travels as its contents (no pickle at all), and other values are pickled with
protocol 5, their buffers (numpy arrays, ``PickleBuffer``) out of band. The worker copies those
straight from the heap into a JavaScript buffer, and a restore copies each one straight back into
the object it becomes (``bytes``, or a ``bytearray`` a numpy array can wrap).
"""

import pickle
import struct

# A captured value: MAGIC, a kind (b"P" pickle, b"B" bytes, b"A" bytearray), the number of
# segments, then per segment a read-only flag and its length; then the segments. For a pickle
# the first segment is the pickle and the others its out-of-band buffers. Older captures are
# plain pickles (they start with the PROTO opcode, 0x80).
MAGIC = b"KV1"
_HEAD = struct.Struct("<3scI")
_SEGMENT = struct.Struct("<BQ")


def encode(value):
    """``value`` as a list of buffers to concatenate (the first is the header). Raises if it
    does not pickle; raises MemoryError or OverflowError if it does not fit."""
    kind = type(value)
    if kind is bytes or kind is bytearray:
        segments = [memoryview(value)]
        tag = b"B" if kind is bytes else b"A"
    else:
        buffers = []

        def out_of_band(buffer):
            try:
                view = buffer.raw()
            except BufferError:
                return True  # not contiguous: in band
            buffers.append(view)
            return False

        segments = [memoryview(pickle.dumps(value, protocol=5, buffer_callback=out_of_band))] + buffers
        tag = b"P"
    header = _HEAD.pack(MAGIC, tag, len(segments)) + b"".join(
        _SEGMENT.pack(int(segment.readonly), segment.nbytes) for segment in segments
    )
    return [header, *segments]


def _reader(data):
    """``read(start, length, writable)`` over a JavaScript buffer or a Python bytes-like."""
    if hasattr(data, "assign_to"):  # a JavaScript Uint8Array: one copy, straight into the heap

        def read(start, length, writable):
            part = data.subarray(start, start + length)
            if not writable:
                return part.to_bytes()
            target = bytearray(length)
            part.assign_to(target)
            return target

        return read, data.length
    view = memoryview(data).cast("B")

    def read(start, length, writable):
        part = view[start : start + length]
        return bytearray(part) if writable else bytes(part)

    return read, view.nbytes


def decode(data):
    """The value an :func:`encode` (or an older plain pickle) describes."""
    read, size = _reader(data)
    head = read(0, min(size, _HEAD.size), False)
    if not head.startswith(MAGIC):
        return pickle.loads(read(0, size, False))
    _, tag, count = _HEAD.unpack(head)
    layout = read(_HEAD.size, count * _SEGMENT.size, False)
    offset = _HEAD.size + len(layout)
    segments = []
    for index in range(count):
        readonly, length = _SEGMENT.unpack_from(layout, index * _SEGMENT.size)
        segments.append(read(offset, length, tag == b"A" or not readonly))
        offset += length
    if tag != b"P":
        return segments[0]
    return pickle.loads(segments[0], buffers=segments[1:])
