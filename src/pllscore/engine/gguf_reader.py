"""A GGUF file's metadata read in one pass, for transformers' GGUF loader.

transformers reads a GGUF file's metadata with ``gguf.GGUFReader``, which makes a numpy view of
every value: two per vocabulary entry, so half a million for Gemma's 262k-token vocabulary, and
16 s of a 22 s load. :func:`new_reader` gives that reader with the metadata parsed by ``struct``
straight from the memory map; the tensors are gguf's own. Each value comes out as transformers'
parser (``_gguf_parse_value``) reads it: a number as a one-element tuple, a string as its bytes,
an array as one such part per element. Files in the other byte order are left to gguf's reader.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import os
import struct
import sys
from collections.abc import Iterator
from typing import Any

__all__ = ["new_reader", "shared_parses"]

# GGUF value types (gguf.GGUFValueType): fixed-size ones by their struct format, then string and array
_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
_STRING, _ARRAY = 8, 9


def new_reader(path: Any) -> Any:
    """A reader of ``path`` with ``gguf.GGUFReader``'s interface, its metadata parsed in one pass.

    A file in the other byte order (or a big-endian host) gets gguf's own reader.
    """
    if sys.byteorder != "little" or _byte_swapped(path):  # pragma: no cover
        from gguf.gguf_reader import GGUFReader

        return GGUFReader(path)
    return _reader_class()(path)


@functools.cache
def _reader_class() -> type:
    """gguf's reader with ``_build_fields`` replaced (made on first use: gguf is imported only then)."""
    from gguf.gguf_reader import GGUFReader  # the class itself: shared_parses swaps the package's name

    class FastReader(GGUFReader):
        """``gguf.GGUFReader`` with the metadata fields parsed by :func:`_build_fields`."""

        def _build_fields(self, offs: int, count: int) -> int:
            return _build_fields(self, offs, count)

    return FastReader


def _byte_swapped(path: Any) -> bool:
    with open(path, "rb") as f:
        head = f.read(8)
    return len(head) == 8 and struct.unpack_from("<I", head, 4)[0] & 0xFFFF == 0


def _build_fields(reader: Any, offs: int, count: int) -> int:
    """Parse ``count`` key-value fields from ``offs``, push each as a ``ReaderField``; the offset past them."""
    import gguf

    buf = memoryview(reader.data)
    for _ in range(count):
        start = offs
        key, offs = _string(buf, offs)
        (vtype,) = struct.unpack_from("<I", buf, offs)
        parts, data, types, offs = _value(buf, offs + 4, vtype)
        field = gguf.ReaderField(start, key.decode("utf-8"), parts, data, [gguf.GGUFValueType(t) for t in types])
        reader._push_field(field, skip_sum=True)
    return offs


def _string(buf: memoryview, offs: int) -> tuple[bytes, int]:
    (n,) = struct.unpack_from("<Q", buf, offs)
    offs += 8
    return bytes(buf[offs : offs + n]), offs + n


def _value(buf: memoryview, offs: int, vtype: int) -> tuple[list[Any], list[int], list[int], int]:
    """``(parts, data indices, types, offset past the value)`` of one metadata value."""
    if vtype in _SCALARS:
        fmt = "<" + _SCALARS[vtype]
        return [struct.unpack_from(fmt, buf, offs)], [0], [vtype], offs + struct.calcsize(fmt)
    if vtype == _STRING:
        text, offs = _string(buf, offs)
        return [text], [0], [vtype], offs
    if vtype != _ARRAY:
        raise ValueError(f"unknown GGUF value type {vtype}")
    itype, n = struct.unpack_from("<IQ", buf, offs)
    offs += 12
    if itype in _SCALARS:
        fmt = "<" + _SCALARS[itype]
        end = offs + n * struct.calcsize(fmt)
        parts: list[Any] = list(struct.iter_unpack(fmt, buf[offs:end]))
        offs = end
    elif itype == _STRING:
        parts = []
        for _ in range(n):
            text, offs = _string(buf, offs)
            parts.append(text)
    else:  # arrays of arrays: never written by llama.cpp's tools
        raise ValueError(f"GGUF array of value type {itype} is not supported")
    return parts, list(range(n)), [vtype, itype], offs


@contextlib.contextmanager
def shared_parses() -> Iterator[None]:
    """Read the file's metadata once per load, not once per ``from_pretrained``.

    transformers builds a fresh ``gguf.GGUFReader`` for the config, again for the tokenizer and
    again for the weights, parses the metadata into a config and tokenizer dictionary each time,
    and rebuilds gguf's tensor-name map for every submodule of the model (~0.05 s each, hundreds
    of them). While one load runs, the reader is :func:`new_reader`'s, made once per file, the
    metadata is parsed into a config and tokenizer dictionary once (handed out as copies), the
    values of :func:`new_reader`'s fields are taken as they are (transformers' own parser turns
    each vocabulary entry into a list of byte values and back: ~1 s for Gemma), and the name map
    is memoised: all are pure functions of their arguments.
    """
    import gguf
    from transformers import modeling_gguf_pytorch_utils as hf_gguf

    real_reader = gguf.GGUFReader
    real_map = getattr(gguf, "get_tensor_name_map", None)
    readers: dict[tuple[Any, ...], Any] = {}

    def reader(path: Any, *args: Any, **kwargs: Any) -> Any:
        key = (os.path.abspath(os.fspath(path)), args, tuple(sorted(kwargs.items())))
        if key not in readers:
            readers[key] = new_reader(path) if not args and not kwargs else real_reader(path, *args, **kwargs)
        return readers[key]

    real_checkpoint = hf_gguf.load_gguf_checkpoint
    metadata: dict[str, Any] = {}

    def checkpoint(path: Any, return_tensors: bool = False, **kwargs: Any) -> Any:
        if return_tensors or kwargs:
            return real_checkpoint(path, return_tensors=return_tensors, **kwargs)
        key = os.path.abspath(os.fspath(path))
        if key not in metadata:
            metadata[key] = real_checkpoint(path, return_tensors=False)
        return _fresh(metadata[key])

    real_parse = hf_gguf._gguf_parse_value

    def parse(value: Any, data_type: Any) -> Any:
        if isinstance(value, tuple):  # new_reader's number, already of its Python type (int, float, bool)
            return value[0]
        if isinstance(value, bytes):  # new_reader's string
            return value.decode("utf-8")
        return real_parse(value, data_type)

    gguf.GGUFReader = reader
    hf_gguf.load_gguf_checkpoint = checkpoint
    hf_gguf._gguf_parse_value = parse
    if real_map is not None:
        gguf.get_tensor_name_map = functools.lru_cache(maxsize=None)(real_map)
    try:
        yield
    finally:
        gguf.GGUFReader = real_reader
        hf_gguf.load_gguf_checkpoint = real_checkpoint
        hf_gguf._gguf_parse_value = real_parse
        if real_map is not None:
            gguf.get_tensor_name_map = real_map
        readers.clear()
        metadata.clear()


_ATOMS = (str, bytes, int, float, bool, type(None))


def _fresh(value: Any) -> Any:
    """A deep copy of parsed metadata; lists of plain values (a vocabulary) are copied in one step."""
    if isinstance(value, dict):
        return {k: _fresh(v) for k, v in value.items()}
    if isinstance(value, list):
        if all(isinstance(v, _ATOMS) for v in value):
            return list(value)
        return [_fresh(v) for v in value]
    return value if isinstance(value, _ATOMS) else copy.deepcopy(value)
